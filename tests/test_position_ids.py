"""GPTStyleEmbedding read at given position ids: the same rows as start_pos, padding, gradients."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gptembed import GPTStyleEmbedding, position_ids_from_mask
from tests.gradcheck import numerical_grad
from tests.strategies import forward_in_blocks_of, layer_and_ids


@pytest.fixture
def layer() -> GPTStyleEmbedding:
    return GPTStyleEmbedding(vocab_size=11, max_seq_len=7, embed_dim=5, seed=0, dtype=np.float64)


def test_position_ids_pick_the_rows(layer: GPTStyleEmbedding) -> None:
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    pos = np.array([[6, 0, 6], [2, 2, 1]])  # any order, repeats allowed
    out = layer(ids, position_ids=pos)
    np.testing.assert_array_equal(out, layer.token_embeddings[ids] + layer.position_embeddings[pos])


def test_shared_position_ids_apply_to_every_sequence(layer: GPTStyleEmbedding) -> None:
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    shared = np.array([5, 3, 1])
    np.testing.assert_array_equal(
        layer(ids, position_ids=shared), layer(ids, position_ids=np.tile(shared, (2, 1)))
    )
    np.testing.assert_array_equal(
        layer(ids[0], position_ids=shared),
        layer.token_embeddings[ids[0]] + layer.position_embeddings[shared],
    )


def test_explicit_start_pos_zero_is_allowed_with_position_ids(layer: GPTStyleEmbedding) -> None:
    np.testing.assert_array_equal(layer([1, 2], 0, position_ids=[3, 4]), layer([1, 2], start_pos=3))


def test_left_padded_batch_gives_each_sequence_its_own_vectors() -> None:
    layer = GPTStyleEmbedding(50, 8, 6, seed=1)
    alone = [np.array([7, 8, 9]), np.array([1, 2, 3, 4, 5, 6]), np.array([42])]
    width = max(len(s) for s in alone)
    pad_id = 0
    ids = np.array([[pad_id] * (width - len(s)) + list(s) for s in alone])  # left-padded
    mask = np.array([[0] * (width - len(s)) + [1] * len(s) for s in alone])
    out = layer(ids, position_ids=position_ids_from_mask(mask))
    for row, seq in enumerate(alone):
        np.testing.assert_array_equal(out[row, width - len(seq) :], layer(seq))
    # Without the position ids the padding shifts every real token to a later position.
    assert not np.array_equal(layer(ids)[0, width - 3 :], layer(alone[0]))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"start_pos": 2, "position_ids": [0, 1, 2]},
            ValueError,
            r"pass start_pos or position_ids, not both: got start_pos 2 with position_ids",
        ),
        (
            {"position_ids": [0, 7, 1]},
            ValueError,
            r"position id 7 at index \(1,\) is out of range: positions must be in \[0, 7\)",
        ),
        (
            {"position_ids": [0, -1, 1]},
            ValueError,
            r"position id -1 at index \(1,\) is out of range: positions must be in \[0, 7\)",
        ),
        (
            {"position_ids": [0, 1]},
            ValueError,
            r"position_ids must have the ids' shape \(3,\) or \(3,\), got \(2,\)",
        ),
        (
            {"position_ids": [[0, 1, 2]]},
            ValueError,
            r"position_ids must have the ids' shape \(3,\) or \(3,\), got \(1, 3\)",
        ),
        (
            {"position_ids": [0.0, 1.0, 2.0]},
            TypeError,
            r"position_ids must be integers in \[0, 7\), got dtype float64",
        ),
        (
            {"position_ids": [True, False, True]},
            TypeError,
            r"position_ids must be integers in \[0, 7\), got dtype bool",
        ),
    ],
)
def test_bad_position_ids(
    layer: GPTStyleEmbedding, kwargs: dict, error: type, message: str
) -> None:
    for call in (layer.forward, partial(layer.backward, np.zeros((3, 5))), layer.check_ids):
        with pytest.raises(error, match=message):
            call([1, 2, 3], **kwargs)


def test_position_ids_of_a_batch_must_match_its_shape(layer: GPTStyleEmbedding) -> None:
    with pytest.raises(
        ValueError, match=r"position_ids must have the ids' shape \(2, 3\) or \(3,\), got \(3, 3\)"
    ):
        layer(np.zeros((2, 3), dtype=int), position_ids=np.zeros((3, 3), dtype=int))


@pytest.mark.parametrize(
    "start", [np.int8(0), np.int8(100), np.uint64(3), np.int16(5), np.uint8(0)]
)
def test_numpy_integer_start_pos_is_a_python_int(start: np.integer) -> None:
    """A numpy start_pos once overflowed (int8 + 128), failed to broadcast, or became a float."""
    layer = GPTStyleEmbedding(10, 256, 4, seed=0)
    ids = np.arange(128) % 10
    expected = layer(ids, start_pos=int(start))
    np.testing.assert_array_equal(layer(ids, start_pos=start), expected)
    grads = layer.backward(np.ones((128, 4)), ids, start_pos=start)
    np.testing.assert_array_equal(grads[1], layer.backward(np.ones((128, 4)), ids, int(start))[1])


def test_numpy_start_pos_past_the_end_names_the_sum() -> None:
    layer = GPTStyleEmbedding(10, 200, 4, seed=0)
    with pytest.raises(
        ValueError,
        match=r"^sequence length 128 at start_pos 100 exceeds max_seq_len 200: positions must "
        r"lie in \[0, 200\)$",
    ):
        layer(np.zeros(128, dtype=int), start_pos=np.int8(100))


def test_backward_with_position_ids_matches_finite_differences(layer: GPTStyleEmbedding) -> None:
    ids = np.array([[1, 2, 1], [2, 2, 10]])
    pos = np.array([[0, 0, 5], [5, 1, 0]])  # repeated positions sum their gradients
    weights = np.random.default_rng(0).standard_normal((2, 3, 5))  # loss = sum(w * forward)

    def loss() -> float:
        return float((layer(ids, position_ids=pos) * weights).sum())

    grad_tok, grad_pos = layer.backward(weights, ids, position_ids=pos)
    np.testing.assert_allclose(grad_tok, numerical_grad(loss, layer.token_embeddings), atol=1e-7)
    np.testing.assert_allclose(grad_pos, numerical_grad(loss, layer.position_embeddings), atol=1e-7)


# --- properties, with the block size drawn small so forward runs in many blocks ---


@given(layer_and_ids(), st.integers(1, 7))
def test_start_pos_equals_its_position_ids(
    case: tuple[GPTStyleEmbedding, np.ndarray, int], block_rows: int
) -> None:
    layer, ids, start = case
    seq_len = ids.shape[-1]
    with forward_in_blocks_of(block_rows, layer):
        by_start = layer(ids, start_pos=start)
        by_ids = layer(ids, position_ids=np.arange(start, start + seq_len))
        by_full_ids = layer(
            ids, position_ids=np.broadcast_to(np.arange(start, start + seq_len), ids.shape)
        )
    np.testing.assert_array_equal(by_start, by_ids)
    np.testing.assert_array_equal(by_start, by_full_ids)
    expected = layer.token_embeddings[ids] + layer.position_embeddings[start : start + seq_len]
    np.testing.assert_array_equal(by_start, expected)


@given(layer_and_ids(), st.integers(1, 7), st.data())
def test_any_position_ids_are_gather_plus_add(
    case: tuple[GPTStyleEmbedding, np.ndarray, int], block_rows: int, data: st.DataObject
) -> None:
    layer, ids, _ = case
    pos = np.array(
        data.draw(
            st.lists(st.integers(0, layer.max_seq_len - 1), min_size=ids.size, max_size=ids.size)
        ),
        dtype=np.int64,
    ).reshape(ids.shape)
    with forward_in_blocks_of(block_rows, layer):
        out = layer(ids, position_ids=pos)
    np.testing.assert_array_equal(out, layer.token_embeddings[ids] + layer.position_embeddings[pos])


@given(layer_and_ids(), st.data())
def test_backward_scatter_adds_repeated_positions(
    case: tuple[GPTStyleEmbedding, np.ndarray, int], data: st.DataObject
) -> None:
    layer, ids, _ = case
    n_pos = data.draw(st.integers(1, layer.max_seq_len))  # few distinct positions: many repeats
    pos = np.array(
        data.draw(st.lists(st.integers(0, n_pos - 1), min_size=ids.size, max_size=ids.size)),
        dtype=np.int64,
    ).reshape(ids.shape)
    grad = np.random.default_rng(ids.size).standard_normal((*ids.shape, layer.embed_dim))
    grad_tok, grad_pos = layer.backward(grad, ids, position_ids=pos)
    dense_pos = np.zeros(layer.position_embeddings.shape, dtype=layer.dtype)
    dense_tok = np.zeros(layer.token_embeddings.shape, dtype=layer.dtype)
    rows = grad.astype(layer.dtype).reshape(-1, layer.embed_dim)
    np.add.at(dense_pos, pos.reshape(-1), rows)
    np.add.at(dense_tok, ids.reshape(-1), rows)
    np.testing.assert_array_equal(grad_pos, dense_pos)
    np.testing.assert_array_equal(grad_tok, dense_tok)


@given(layer_and_ids(), st.booleans())
def test_backward_at_start_pos_equals_backward_at_its_position_ids(
    case: tuple[GPTStyleEmbedding, np.ndarray, int], per_sequence: bool
) -> None:
    """start_pos's rows are summed over the batch and written as a slice; position ids are
    scatter-added: the same gradients."""
    layer, ids, start = case
    positions = np.arange(start, start + ids.shape[-1])
    if per_sequence:
        positions = np.broadcast_to(positions, ids.shape).copy()
    grad = np.random.default_rng(ids.size).standard_normal((*ids.shape, layer.embed_dim))
    by_start = layer.backward(grad, ids, start_pos=start)
    by_ids = layer.backward(grad, ids, position_ids=positions)
    for ours, theirs in zip(by_start, by_ids, strict=True):
        np.testing.assert_array_equal(ours, theirs)
