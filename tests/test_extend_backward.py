"""Growing the position table, and the gradients of both tables."""

from __future__ import annotations

import numpy as np
import pytest

from gptembed import GPTStyleEmbedding
from tests.gradcheck import numerical_grad


@pytest.fixture
def layer() -> GPTStyleEmbedding:
    return GPTStyleEmbedding(13, 6, 4, seed=5, dtype=np.float64)


def test_fresh_keeps_old_rows_and_shares_token_table(layer: GPTStyleEmbedding) -> None:
    longer = layer.extended(10, method="fresh", seed=1)
    assert longer.position_embeddings.shape == (10, 4)
    np.testing.assert_array_equal(longer.position_embeddings[:6], layer.position_embeddings)
    assert not np.allclose(longer.position_embeddings[6:], 0.0)
    assert longer.token_embeddings is layer.token_embeddings
    assert not np.shares_memory(longer.position_embeddings, layer.position_embeddings)
    np.testing.assert_array_equal(
        layer.extended(10, seed=1).position_embeddings, longer.position_embeddings
    )


def test_interpolate_is_linear_along_positions(layer: GPTStyleEmbedding) -> None:
    longer = layer.extended(
        11, method="interpolate"
    )  # (6 - 1) * 2 + 1 rows: old rows at even indices
    old = layer.position_embeddings
    np.testing.assert_allclose(longer.position_embeddings[::2], old, rtol=1e-12)
    np.testing.assert_allclose(
        longer.position_embeddings[1::2], (old[:-1] + old[1:]) / 2, rtol=1e-12
    )


def test_interpolate_to_the_same_length_is_identity(layer: GPTStyleEmbedding) -> None:
    np.testing.assert_allclose(
        layer.extended(6, method="interpolate").position_embeddings, layer.position_embeddings
    )


def test_extension_refuses_shrinking_and_bad_arguments(layer: GPTStyleEmbedding) -> None:
    with pytest.raises(ValueError, match=r"max_seq_len must be an integer >= 6, got 5"):
        layer.extended(5)
    with pytest.raises(TypeError, match=r"max_seq_len must be an integer >= 6, got 7.5"):
        layer.extended(7.5)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"^method must be 'fresh', 'interpolate' or 'tile', got 'cubic'$"
    ):
        layer.extended(8, method="cubic")  # type: ignore[arg-type]


def test_tile_repeats_the_learned_rows(layer: GPTStyleEmbedding) -> None:
    longer = layer.extended(15, method="tile")
    old = layer.position_embeddings
    assert longer.position_embeddings.shape == (15, 4)
    np.testing.assert_array_equal(longer.position_embeddings[:6], old)
    np.testing.assert_array_equal(longer.position_embeddings[6:12], old)
    np.testing.assert_array_equal(longer.position_embeddings[12:], old[:3])
    assert not np.shares_memory(longer.position_embeddings, old)
    assert longer.token_embeddings is layer.token_embeddings
    np.testing.assert_array_equal(layer.extended(6, method="tile").position_embeddings, old)


@pytest.mark.parametrize("method", ["fresh", "interpolate", "tile"])
def test_numpy_integer_lengths(layer: GPTStyleEmbedding, method: str) -> None:
    for length in (np.int64(9), np.int16(9), np.uint32(9)):
        longer = layer.extended(length, method=method, seed=2)  # type: ignore[arg-type]
        assert longer.max_seq_len == 9 and type(longer.max_seq_len) is int
        np.testing.assert_array_equal(
            longer.position_embeddings, layer.extended(9, method=method, seed=2).position_embeddings
        )


@pytest.mark.parametrize(
    ("ids", "start"), [(np.array([3, 3, 7, 3]), 1), (np.array([[1, 2, 1], [2, 2, 12]]), 3)]
)
def test_backward_matches_finite_differences(
    layer: GPTStyleEmbedding, ids: np.ndarray, start: int
) -> None:
    weights = np.random.default_rng(0).standard_normal((*ids.shape, 4))

    def loss() -> float:  # sum(w * forward): its gradient with respect to forward is w
        return float((layer(ids, start_pos=start) * weights).sum())

    grad_tok, grad_pos = layer.backward(weights, ids, start_pos=start)
    np.testing.assert_allclose(grad_tok, numerical_grad(loss, layer.token_embeddings), atol=1e-7)
    np.testing.assert_allclose(grad_pos, numerical_grad(loss, layer.position_embeddings), atol=1e-7)


def test_backward_repeated_ids_sum(layer: GPTStyleEmbedding) -> None:
    grad = np.ones((3, 4))
    grad_tok, grad_pos = layer.backward(grad, [5, 5, 5])
    np.testing.assert_array_equal(grad_tok[5], 3.0)
    assert np.count_nonzero(grad_tok) == 4
    np.testing.assert_array_equal(grad_pos[:3], 1.0)
    np.testing.assert_array_equal(grad_pos[3:], 0.0)


def test_backward_empty_and_bad_shape(layer: GPTStyleEmbedding) -> None:
    grad_tok, grad_pos = layer.backward(np.zeros((0, 4)), [])
    assert not grad_tok.any() and not grad_pos.any()
    with pytest.raises(
        ValueError, match=r"grad_output must have the output's shape \(2, 4\), got \(2, 3\)"
    ):
        layer.backward(np.zeros((2, 3)), [1, 2])


def test_float16_backward_sums_in_float32() -> None:
    """float16 once summed in float16: 10,000 gradients of 1e-3 gave 4 (true 10), and 4,096
    ones gave 2,048 (2,048 + 1 rounds back to 2,048 in float16)."""
    layer = GPTStyleEmbedding(5, 4, 3, seed=0, dtype=np.float16)
    ids = np.zeros((10_000, 1), dtype=np.intp)
    grad_tok, grad_pos = layer.backward(np.full((10_000, 1, 3), 1e-3, dtype=np.float16), ids)
    assert grad_tok.dtype == grad_pos.dtype == np.float16
    np.testing.assert_allclose(grad_tok[0], 10.0, rtol=1e-3)
    np.testing.assert_allclose(grad_pos[0], 10.0, rtol=1e-3)
    grad_tok, grad_pos = layer.backward(np.ones((4096, 1, 3), dtype=np.float16), ids[:4096])
    np.testing.assert_array_equal(grad_tok[0], 4096.0)
    np.testing.assert_array_equal(grad_pos[0], 4096.0)
    positions = np.zeros((4096, 1), dtype=np.intp)
    _, grad_pos = layer.backward(np.ones((4096, 1, 3)), ids[:4096], position_ids=positions)
    np.testing.assert_array_equal(grad_pos[0], 4096.0)


@pytest.mark.parametrize("grad", [np.full((2, 4), "a"), np.ones((2, 4), dtype=bool)])
def test_backward_refuses_a_gradient_that_is_not_numbers(
    layer: GPTStyleEmbedding, grad: np.ndarray
) -> None:
    """Strings once failed inside numpy's float conversion; bools were summed as ones."""
    with pytest.raises(
        TypeError, match=rf"^grad_output must hold real numbers, got dtype {grad.dtype}$"
    ):
        layer.backward(grad, [1, 2])


@pytest.mark.parametrize("seed", [0, 5, 123])
def test_fresh_rows_are_not_the_layers_own_draws(seed: int) -> None:
    """extended(n, seed=s) on a layer made with seed=s once drew from the same stream as the
    constructor, so the new position rows were copies of token rows 0, 1, ..."""
    layer = GPTStyleEmbedding(13, 6, 4, seed=seed, dtype=np.float64)
    new_rows = layer.extended(10, seed=seed).position_embeddings[6:]  # (4, D)
    drawn = np.concatenate([layer.token_embeddings, layer.position_embeddings])  # (19, D)
    assert not np.isin(new_rows, drawn).any()
    np.testing.assert_array_equal(new_rows, layer.extended(10, seed=seed).position_embeddings[6:])
    assert new_rows.std() == pytest.approx(0.02, rel=0.5)  # N(0, 0.02**2): scale, not values


@pytest.mark.parametrize(
    ("seed", "error", "message"),
    [
        (-1, ValueError, r"^seed must be an integer >= 0, got -1$"),
        (1.5, TypeError, r"^seed must be an integer >= 0, got 1.5 of type float$"),
        ("1", TypeError, r"^seed must be an integer >= 0, got '1' of type str$"),
        (True, TypeError, r"^seed must be an integer >= 0, got True of type bool$"),
    ],
)
def test_bad_seeds_are_refused(
    layer: GPTStyleEmbedding, seed: object, error: type, message: str
) -> None:
    """numpy's own errors once came from deep inside SeedSequence; True was taken as seed 1."""
    with pytest.raises(error, match=message):
        layer.extended(8, seed=seed)  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        GPTStyleEmbedding(3, 2, 1, seed=seed)  # type: ignore[arg-type]
