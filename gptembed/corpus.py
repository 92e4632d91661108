"""Real text that ships with the package: Python's language reference, read character by character.

CPython ships the English prose of its own reference documentation as ``pydoc_data.topics``
(what ``help("assert")`` prints), under the PSF licence. Its text differs between Python versions
(458,917 characters on 3.10.13, 510,586 on 3.13.0), so the package stores one version's,
Python 3.13.0's, in ``gptembed/data/pydoc_topics.txt`` (written by ``tools/make_corpus.py``;
licence in ``gptembed/data/LICENSE-PSF.txt``): the 79 topics in the order of their names, joined
by a form feed, the corpus's end-of-text mark. Nothing is fetched, and every Python reads the
same text: :func:`text` checks it against :data:`_SHA256`.

The model reads characters, not GPT-2's BPE tokens. The corpus is :data:`GPT2_BPE_TOKENS` BPE
tokens of :data:`GPT2_BPE_DISTINCT` distinct ids, :data:`GPT2_BPE_RARE` of them occurring five
times or fewer (counted with GPT-2's own vocabulary, checked in ``tests/test_corpus.py``), against
510,664 characters of :data:`VOCAB_SIZE` kinds: chapter 7 weighs the two.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib.resources import files

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import (
    as_generator,
    check_fits_in_memory,
    check_in_range,
    check_int,
    check_integer_array,
)

END_OF_TEXT = "\f"
"""The character between two documents (a form feed, which no topic contains)."""

_ALPHABET = (
    "\n\f !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_"
    "abcdefghijklmnopqrstuvwxyz{|}~"
    "\u00b0\u00df\u2013\u2014\u2018\u2019\u201c\u201d\u2026"  # degree, sharp s, dashes, quotes, ...
)
"""Every character of the corpus in code-point order; a character's id is its index here."""

VOCAB_SIZE = len(_ALPHABET)

_SHA256 = "dd72054e7e9c080a8f1ad15f8b0c906e1f027d0e3e316931b503942b1ef9bdde"
"""SHA-256 of the stored corpus file's bytes (UTF-8)."""

GPT2_BPE_TOKENS = 156_149
"""Tokens of the corpus's documents under GPT-2's BPE (each document encoded on its own)."""

GPT2_BPE_DISTINCT = 5_287
"""Distinct GPT-2 ids among them (of GPT-2's 50,257)."""

GPT2_BPE_RARE = 3_310
"""Distinct GPT-2 ids among them that occur five times or fewer."""

_HELD_OUT_EVERY = 8
"""Documents ``0, 8, 16, ...`` (in the order of their names) are held out; the rest train."""

_CHAR_TO_ID = {ch: i for i, ch in enumerate(_ALPHABET)}


@cache
def text() -> str:
    """The whole stored corpus, documents joined by :data:`END_OF_TEXT`.

    Raises:
        RuntimeError: the stored file's bytes do not have the SHA-256 :data:`_SHA256` (a changed
            or damaged file, or a checkout that rewrote its line endings).
    """
    data = files("gptembed").joinpath("data/pydoc_topics.txt").read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != _SHA256:
        raise RuntimeError(
            f"gptembed/data/pydoc_topics.txt has SHA-256 {digest}, expected {_SHA256}: the stored "
            "corpus changed (restore it, or rewrite it with tools/make_corpus.py)"
        )
    return data.decode("utf-8")


def documents() -> list[str]:
    """The corpus's 79 documents (topics), in the order of their names."""
    return text().split(END_OF_TEXT)


def encode(chars: str) -> NDArray[np.intp]:
    """Ids ``(len(chars),)`` of the characters of ``chars``.

    Raises:
        ValueError: a character is not in :data:`_ALPHABET`.
    """
    try:
        return np.array([_CHAR_TO_ID[ch] for ch in chars], dtype=np.intp)
    except KeyError:
        index, ch = next((i, ch) for i, ch in enumerate(chars) if ch not in _CHAR_TO_ID)
        raise ValueError(
            f"character {ch!r} at index {index} is not in the corpus's alphabet of "
            f"{VOCAB_SIZE} characters"
        ) from None


def decode(ids: ArrayLike) -> str:
    """The text of ids in ``[0, VOCAB_SIZE)``, read in order (any shape is flattened).

    Raises:
        TypeError: the ids are not integers.
        ValueError: an id is outside ``[0, VOCAB_SIZE)``.
    """
    array = check_integer_array("ids", ids, VOCAB_SIZE)
    check_in_range("id", array, VOCAB_SIZE, "ids")
    return "".join(_ALPHABET[i] for i in array.reshape(-1).tolist())


def _stream(held_out: bool) -> NDArray[np.intp]:
    docs = [
        doc for index, doc in enumerate(documents()) if (index % _HELD_OUT_EVERY == 0) == held_out
    ]
    return encode(END_OF_TEXT.join(docs))


@cache
def train_stream() -> NDArray[np.intp]:
    """Ids of the training documents, one stream, documents joined by :data:`END_OF_TEXT`."""
    stream = _stream(held_out=False)
    stream.flags.writeable = False  # shared by every caller
    return stream


@cache
def held_out_stream() -> NDArray[np.intp]:
    """Ids of the held-out documents (every :data:`_HELD_OUT_EVERY`-th), joined the same way."""
    stream = _stream(held_out=True)
    stream.flags.writeable = False
    return stream


def random_passages(
    stream: ArrayLike, n_passages: int, seq_len: int, *, seed: int | np.random.Generator = 0
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Passages of a stream at uniform random offsets, and their next-id targets.

    As nanoGPT's ``get_batch`` (github.com/karpathy/nanoGPT, ``train.py``) cuts them: offsets
    ``o`` drawn uniformly from ``[0, N - seq_len - 1]``, inputs ``stream[o : o + seq_len]`` and
    targets ``stream[o + 1 : o + seq_len + 1]``. A passage starts anywhere, mostly inside a
    document, and may run across an end-of-text into the next one.

    Returns:
        ``(inputs, targets)``, both ``(n_passages, seq_len)``.

    Raises:
        TypeError, ValueError: a size that is not a positive integer, a stream that is not a
            1-D array of integers in ``[0, VOCAB_SIZE)``, one too short for a passage and its
            target, passages too many for memory, or a seed that is not an integer >= 0 or a
            Generator.
    """
    ids = check_integer_array("stream", stream, VOCAB_SIZE)
    check_in_range("id", ids, VOCAB_SIZE, "the stream's ids")
    n_passages = check_int("n_passages", n_passages)
    seq_len = check_int("seq_len", seq_len)
    if ids.ndim != 1 or len(ids) < seq_len + 1:
        raise ValueError(
            f"stream must be a 1-D array of at least seq_len + 1 = {seq_len + 1} ids, "
            f"got shape {ids.shape}"
        )
    check_fits_in_memory(
        f"n_passages {n_passages:,} x seq_len + 1 {seq_len + 1:,} ids",
        n_passages * (seq_len + 1) * 8,
    )
    rng = as_generator(seed)
    offsets = rng.integers(0, len(ids) - seq_len, size=n_passages)  # (n,) in [0, N - T - 1]
    index = offsets[:, None] + np.arange(seq_len + 1)  # (n, T + 1)
    passage = ids[index].astype(np.intp, copy=False)
    return passage[:, :-1], passage[:, 1:]
