"""Record streams: the toy data in which the next character's class is set by its position.

A stream of fixed-format records such as ``"QX-37;NB-04;"``: ``'A'`` in a format is a random
letter, ``'9'`` a random digit, punctuation stands for itself. Sequences cut from the start of a
record let position alone say which field comes next; :func:`loss_floor` gives the best loss a
model can reach with and without knowing the position.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import (
    as_generator,
    check_bool,
    check_in_range,
    check_int,
    check_integer_array,
    check_record_format,
)

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DIGITS = "0123456789"
PUNCTUATION = "-;:/.#"
_ALPHABET = LETTERS + DIGITS + PUNCTUATION
"""Every character a record can hold; a character's id is its index here."""

VOCAB_SIZE = len(_ALPHABET)

_CHAR_TO_ID = {ch: i for i, ch in enumerate(_ALPHABET)}
_LETTER_IDS = np.arange(len(LETTERS))
_DIGIT_IDS = np.arange(len(LETTERS), len(LETTERS) + len(DIGITS))


def decode(ids: ArrayLike) -> str:
    """The text of ids in ``[0, VOCAB_SIZE)``, read in order (any shape is flattened).

    Raises:
        TypeError: the ids are not integers.
        ValueError: an id is outside ``[0, VOCAB_SIZE)`` (a negative id would otherwise index
            from the end of the alphabet).
    """
    array = check_integer_array("ids", ids, VOCAB_SIZE)
    check_in_range("id", array, VOCAB_SIZE, "ids")
    return "".join(_ALPHABET[i] for i in array.reshape(-1).tolist())


def _field_choices(ch: str) -> NDArray[np.intp]:
    """The ids a format character can produce."""
    if ch == "A":
        return _LETTER_IDS
    if ch == "9":
        return _DIGIT_IDS
    return np.array([_CHAR_TO_ID[ch]], dtype=np.intp)


def make_records(
    n_sequences: int,
    seq_len: int,
    record_format: str = "AA-99;",
    *,
    seed: int | np.random.Generator = 0,
    random_offset: bool = False,
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Sequences of back-to-back records and the next character at every position.

    Each sequence is ``seq_len + 1`` characters of a record stream; inputs are the first
    ``seq_len`` and targets the last ``seq_len``, so ``targets[:, t]`` follows ``inputs[:, t]``.
    Every sequence starts at the start of a record unless ``random_offset``, which starts each
    one at a random place inside a record (position then says nothing about the field).

    Args:
        n_sequences: ``B``, sequences to draw.
        seq_len: ``T``, characters per input sequence.
        record_format: ``'A'`` a random letter, ``'9'`` a random digit, punctuation literal.
        seed: an integer seed >= 0 or a ``np.random.Generator`` to draw from.
        random_offset: start each sequence at a uniformly random offset inside a record.

    Returns:
        ``(inputs, targets)``, both ``(B, T)`` arrays of ids in ``[0, VOCAB_SIZE)``.

    Raises:
        TypeError, ValueError: a size that is not a positive integer, a bad format or seed, or a
            ``random_offset`` that is not a bool.
    """
    n_sequences = check_int("n_sequences", n_sequences)
    seq_len = check_int("seq_len", seq_len)
    record_format = check_record_format(record_format, PUNCTUATION)
    random_offset = check_bool("random_offset", random_offset)
    rng = as_generator(seed)
    period = len(record_format)
    n_records = -(-(seq_len + 1 + period) // period)  # enough records for any offset
    stream = np.empty((n_sequences, n_records * period), dtype=np.intp)  # (B, n_records * P)
    for k, ch in enumerate(record_format):
        choices = _field_choices(ch)
        stream[:, k::period] = choices[rng.integers(len(choices), size=(n_sequences, n_records))]
    if random_offset:
        offsets = rng.integers(period, size=n_sequences)  # (B,)
    else:
        offsets = np.zeros(n_sequences, dtype=np.intp)
    rows = offsets[:, None] + np.arange(seq_len + 1)  # (B, T + 1)
    chars = np.take_along_axis(stream, rows, axis=1)
    return chars[:, :-1], chars[:, 1:]


def loss_floor(record_format: str, seq_len: int, use_positions: bool) -> float:
    """The lowest mean cross-entropy (nats) any model of this family can reach on aligned records.

    With positions the model can know the field of the next character, which is uniform over its
    class: the floor is the mean over ``t`` of ``ln |class(t + 1)|``. Without positions it sees
    only the current character, so the floor is the conditional entropy of the next character
    given the current one, over the positions ``0 .. T-1`` of a sequence.
    """
    record_format = check_record_format(record_format, PUNCTUATION)
    seq_len = check_int("seq_len", seq_len)
    use_positions = check_bool("use_positions", use_positions)
    period = len(record_format)
    next_fields = [record_format[(t + 1) % period] for t in range(seq_len)]
    if use_positions:
        return float(np.mean([math.log(len(_field_choices(ch))) for ch in next_fields]))
    # For each class of current character: the mixture of next-character distributions.
    mixtures: dict[str, NDArray[np.float64]] = {}
    for t, nxt in enumerate(next_fields):
        cls = record_format[t % period]
        probs = mixtures.setdefault(cls, np.zeros(VOCAB_SIZE))
        choices = _field_choices(nxt)
        probs[choices] += 1.0 / len(choices)
    total = 0.0
    for probs in mixtures.values():  # weight of a class = its count of positions = probs.sum()
        p = probs[probs > 0] / probs.sum()
        total += probs.sum() * float(-(p * np.log(p)).sum())
    return total / seq_len
