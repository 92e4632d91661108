"""Hypothesis strategies and helpers shared by the embedding layer's property tests."""

from __future__ import annotations

from contextlib import AbstractContextManager
from unittest import mock

import numpy as np
from hypothesis import strategies as st

from gptembed import GPTStyleEmbedding, _kernels


@st.composite
def layer_and_ids(draw: st.DrawFn) -> tuple[GPTStyleEmbedding, np.ndarray, int]:
    vocab = draw(st.integers(1, 50))
    max_len = draw(st.integers(1, 40))
    dim = draw(st.integers(1, 300))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    layer = GPTStyleEmbedding(
        vocab, max_len, dim, seed=draw(st.integers(0, 2**32 - 1)), dtype=dtype
    )
    seq_len = draw(st.integers(0, max_len))
    start = draw(st.integers(0, max_len - seq_len))
    batch = draw(st.one_of(st.none(), st.integers(0, 4)))
    shape = (seq_len,) if batch is None else (batch, seq_len)
    id_dtype = draw(st.sampled_from([np.int8, np.int32, np.int64, np.uint16, np.uint64]))
    high = min(vocab, np.iinfo(id_dtype).max + 1)
    ids = (
        np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        .integers(0, high, shape)
        .astype(id_dtype)
    )
    return layer, ids, start


def forward_in_blocks_of(rows: int, layer: GPTStyleEmbedding) -> AbstractContextManager[object]:
    """Run ``layer.forward`` in blocks of ``rows`` rows (the real 768 KiB never splits the small
    inputs drawn here), so the block loop's edges are exercised: whole sequences per block, part
    of one, and a short last block."""
    return mock.patch.object(_kernels, "BLOCK_BYTES", rows * layer.embed_dim * layer.dtype.itemsize)
