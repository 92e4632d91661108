"""The stored corpus: its bytes, its alphabet, the held-out split, the passages, and the BPE counts
the chapter quotes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gptembed import corpus
from gptembed.corpus import (
    _ALPHABET,
    END_OF_TEXT,
    decode,
    documents,
    encode,
    held_out_stream,
    random_passages,
    train_stream,
)
from tests.gpt2_bpe import gpt2_tokenizer

DATA = Path(corpus.__file__).parent / "data"


def test_the_stored_corpus_has_its_hash_and_size() -> None:
    data = (DATA / "pydoc_topics.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest() == corpus._SHA256
    assert len(corpus.text()) == 510_664
    assert len(documents()) == 79


def test_the_licence_is_stored_beside_the_text() -> None:
    licence = (DATA / "LICENSE-PSF.txt").read_text(encoding="utf-8")
    assert "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2" in licence


def test_the_alphabet_is_exactly_the_corpus_characters_in_order() -> None:
    assert sorted(set(corpus.text())) == list(_ALPHABET)
    assert corpus.VOCAB_SIZE == len(_ALPHABET) == 105


def test_encode_and_decode_round_trip_and_refuse_strangers() -> None:
    sample = documents()[3][:200]
    np.testing.assert_array_equal(encode(sample), [_ALPHABET.index(ch) for ch in sample])
    assert decode(encode(sample)) == sample
    assert encode("").shape == (0,)
    with pytest.raises(ValueError, match=r"character 'é' at index 2 is not in the corpus's"):
        encode("caé")
    with pytest.raises(ValueError, match=r"id 105 at index \(1,\) is out of range"):
        decode([3, 105])
    with pytest.raises(TypeError, match="ids must be integers"):
        decode([1.0])


def test_the_split_holds_out_every_eighth_document() -> None:
    docs = documents()
    train, held = decode(train_stream()), decode(held_out_stream())
    assert held.split(END_OF_TEXT) == docs[::8]
    assert train.split(END_OF_TEXT) == [d for i, d in enumerate(docs) if i % 8]
    assert len(train) + len(held) + 1 == len(corpus.text())  # one separator fewer
    assert 0.08 < len(held) / len(corpus.text()) < 0.1
    assert not train_stream().flags.writeable


def test_passages_start_at_random_offsets_and_targets_are_the_next_ids() -> None:
    stream = np.arange(1000) % 105
    inputs, targets = random_passages(stream, 64, 16, seed=1)
    assert inputs.shape == targets.shape == (64, 16)
    np.testing.assert_array_equal(targets[:, :-1], inputs[:, 1:])
    np.testing.assert_array_equal((inputs[:, 1:] - inputs[:, :-1]) % 105, 1)
    again = random_passages(stream, 64, 16, seed=1)
    np.testing.assert_array_equal(again[0], inputs)
    # Every offset in [0, N - T - 1] can be drawn, and only those: the last passage's target
    # is the stream's last id.
    first, last_targets = random_passages(np.arange(20), 4000, 16, seed=2)
    assert set(first[:, 0].tolist()) == set(range(4))
    assert last_targets.max() == 19


def test_passages_refuse_bad_input() -> None:
    with pytest.raises(ValueError, match=r"at least seq_len \+ 1 = 9 ids, got shape \(8,\)"):
        random_passages(np.arange(8), 2, 8)
    with pytest.raises(ValueError, match="1-D"):
        random_passages(np.zeros((4, 30), dtype=int), 2, 8)
    with pytest.raises(TypeError, match="n_passages must be an integer"):
        random_passages(np.arange(30), 2.0, 8)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="stream must be integers"):
        random_passages(np.zeros(30), 2, 8)
    # numpy's own error came from inside SeedSequence, and True was taken as seed 1
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, got -1$"):
        random_passages(np.arange(30), 2, 8, seed=-1)
    with pytest.raises(TypeError, match=r"^seed must be an integer >= 0, got True of type bool$"):
        random_passages(np.arange(30), 2, 8, seed=True)


@pytest.mark.parametrize(("bad", "index"), [(-1, 0), (-7, 12), (corpus.VOCAB_SIZE, 29)])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8])
def test_passages_refuse_ids_outside_the_alphabet(bad: int, index: int, dtype: type) -> None:
    stream = np.arange(30).astype(dtype)
    stream[index] = bad
    message = (
        rf"^id {bad} at index \({index},\) is out of range: the stream's ids must be in "
        rf"\[0, {corpus.VOCAB_SIZE}\)$"
    )
    with pytest.raises(ValueError, match=message):
        random_passages(stream, 2, 8)


def test_the_bpe_counts_quoted_are_gpt2s() -> None:
    tok = gpt2_tokenizer()
    ids = [i for doc in documents() for i in tok.encode(doc).ids]
    assert len(ids) == corpus.GPT2_BPE_TOKENS
    assert len(set(ids)) == corpus.GPT2_BPE_DISTINCT
    counts = np.bincount(ids)
    assert np.count_nonzero((counts > 0) & (counts <= 5)) == corpus.GPT2_BPE_RARE


@pytest.mark.parametrize(
    "change",
    [
        lambda data: data[:1000] + bytes([data[1000] ^ 1]) + data[1001:],
        lambda data: data.replace(b"\n", b"\r\n"),
    ],
    ids=["one byte", "CRLF"],
)
def test_a_corpus_changed_by_one_byte_or_rewritten_with_crlf_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Any
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "pydoc_topics.txt").write_bytes(
        change((DATA / "pydoc_topics.txt").read_bytes())
    )
    monkeypatch.setattr(corpus, "files", lambda package: tmp_path)
    corpus.text.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="the stored corpus changed"):
            corpus.text()
    finally:
        monkeypatch.undo()
        corpus.text.cache_clear()
    assert corpus.text().startswith('The "assert" statement')


def test_passages_too_many_for_memory_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"n_passages 1,000,000,000,000 x seq_len \+ 1 9 ids"):
        random_passages(np.arange(30), 10**12, 8)
