"""Property tests: for any sizes, ids, batch shape and offset, forward is gather-plus-add, and any
invalid input raises the documented error."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gptembed import GPTStyleEmbedding
from tests.strategies import forward_in_blocks_of, layer_and_ids


@given(layer_and_ids(), st.integers(1, 7))
def test_forward_is_gather_plus_add(
    case: tuple[GPTStyleEmbedding, np.ndarray, int], block_rows: int
) -> None:
    layer, ids, start = case
    with forward_in_blocks_of(block_rows, layer):
        out = layer.forward(ids, start_pos=start)
    expected = (
        layer.token_embeddings[ids] + layer.position_embeddings[start : start + ids.shape[-1]]
    )
    assert out.shape == (*ids.shape, layer.embed_dim)
    assert out.dtype == layer.dtype
    np.testing.assert_array_equal(out, expected)


@given(layer_and_ids(), st.data())
def test_out_of_range_id_is_refused(
    case: tuple[GPTStyleEmbedding, np.ndarray, int], data: st.DataObject
) -> None:
    layer, ids, start = case
    if ids.size == 0:
        return
    ids = ids.astype(np.int64)
    bad = data.draw(st.one_of(st.integers(-(2**40), -1), st.integers(layer.vocab_size, 2**40)))
    flat_index = data.draw(st.integers(0, ids.size - 1))
    ids.reshape(-1)[flat_index] = bad
    with pytest.raises(
        ValueError, match=rf"token id {bad} at index .* ids must be in \[0, {layer.vocab_size}\)"
    ):
        layer(ids, start_pos=start)


@given(st.integers(1, 30), st.integers(0, 60), st.integers(0, 60))
def test_past_the_end_is_refused(max_len: int, start: int, seq_len: int) -> None:
    layer = GPTStyleEmbedding(5, max_len, 3, seed=0)
    ids = np.zeros(seq_len, dtype=np.int64)
    if start + seq_len <= max_len:
        assert layer(ids, start_pos=start).shape == (seq_len, 3)
    else:
        message = rf"exceeds max_seq_len {max_len}: positions must lie in \[0, {max_len}\)$"
        if start > max_len:
            message = rf"^start_pos must be in \[0, {max_len}\], got {start}$"
        with pytest.raises(ValueError, match=message):
            layer(ids, start_pos=start)


@given(st.one_of(st.floats(allow_nan=True), st.booleans(), st.text(max_size=3)), st.integers(1, 3))
def test_non_integer_ids_are_refused(value: object, n: int) -> None:
    layer = GPTStyleEmbedding(5, 4, 3, seed=0)
    with pytest.raises(TypeError, match=r"token_ids must be integers in \[0, 5\), got dtype"):
        layer([value] * n)
