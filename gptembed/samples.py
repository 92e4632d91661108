"""Sample GPT-2 token ids the chapters use, so a reader needs no tokenizer to run them.

Each entry is checked against GPT-2's real BPE vocabulary in ``tests/test_samples.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

GPT2_SAMPLES: Mapping[str, tuple[int, ...]] = MappingProxyType(
    {
        # The handbook's ids, which it labels "The cat is very small".
        "The dog is very little": (464, 3290, 318, 845, 1310),
        # What "The cat is very small" really encodes to: 3797 is " cat", 1402 is " small".
        "The cat is very small": (464, 3797, 318, 845, 1402),
    }
)
"""Text -> GPT-2 BPE ids."""
