"""The small GPTs the tests of :mod:`gptembed.gpt`, :mod:`gptembed.gpt_runs` and
:mod:`gptembed.gpt_terms` share, and a batch for them."""

from __future__ import annotations

import numpy as np

from gptembed.gpt import GPT, init_model
from gptembed.gpt_config import GPTConfig

TINY = GPTConfig(
    vocab_size=7, seq_len=5, n_layers=2, n_heads=2, embed_dim=8, dtype="float64", seed=3
)


ONE_BLOCK = GPTConfig(vocab_size=7, seq_len=8, n_layers=1, n_heads=2, embed_dim=8)
"""One block of two heads, in float32 as the stored runs are: the model the tests train."""


def perturbed(config: GPTConfig = TINY) -> GPT:
    """A model moved away from its initial weights (biases 0, gains 1, tiny matrices), so every
    gradient is far from zero and every path through the model carries signal."""
    model = init_model(config)
    rng = np.random.default_rng(11)
    for array in model.parameters().values():
        array += rng.standard_normal(array.shape) * 0.5
    return model


def batch(config: GPTConfig = TINY, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ids = rng.integers(config.vocab_size, size=(3, config.seq_len + 1))
    return ids[:, :-1], ids[:, 1:]
