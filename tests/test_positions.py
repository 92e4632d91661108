"""Position ids from an attention mask, and the fixed sinusoidal table."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gptembed import PAD_POSITION, position_ids_from_mask, sinusoidal_table
from gptembed.positions import alibi_slopes, linear_bias, rotate


def test_left_and_right_padding_count_real_tokens_from_zero() -> None:
    mask = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    ids = position_ids_from_mask(mask)
    assert ids.dtype == np.intp
    np.testing.assert_array_equal(ids, [[0, 0, 0, 1, 2], [0, 1, 2, 3, 0], [0, 1, 2, 3, 4]])


def test_padded_slots_get_pad_position_and_an_empty_row_is_allowed() -> None:
    ids = position_ids_from_mask([[0, 0, 0], [0, 1, 0]])
    assert PAD_POSITION == 0
    np.testing.assert_array_equal(ids, [[PAD_POSITION] * 3, [PAD_POSITION, 0, PAD_POSITION]])


@pytest.mark.parametrize("dtype", [bool, np.int8, np.uint8, np.int64])
def test_any_integer_or_bool_mask(dtype: type) -> None:
    mask = np.array([[0, 1, 1], [1, 1, 0]], dtype=dtype)
    np.testing.assert_array_equal(position_ids_from_mask(mask), [[0, 0, 1], [0, 1, 0]])


def test_empty_batch_and_empty_rows() -> None:
    assert position_ids_from_mask(np.zeros((0, 4), dtype=int)).shape == (0, 4)
    assert position_ids_from_mask([[], []]).shape == (2, 0)


@given(
    st.lists(st.lists(st.booleans(), min_size=1, max_size=12), min_size=1, max_size=6), st.data()
)
def test_real_tokens_read_what_they_read_unpadded(rows: list, data: st.DataObject) -> None:
    """Any padding, left, right or inside a row: the k-th real token of a row gets position k."""
    mask = np.array([r + [False] * (12 - len(r)) for r in rows])
    ids = position_ids_from_mask(mask)
    for mask_row, id_row in zip(mask, ids, strict=True):
        np.testing.assert_array_equal(id_row[mask_row], np.arange(mask_row.sum()))
        assert (id_row[~mask_row] == PAD_POSITION).all()


@pytest.mark.parametrize(
    ("mask", "error", "message"),
    [
        ([1, 1, 0], ValueError, r"attention_mask must have shape \(B, T\), got 1 dimensions"),
        (np.ones((1, 2, 3), dtype=int), ValueError, r"got 3 dimensions with shape \(1, 2, 3\)"),
        (
            [[1, 2, 1]],
            ValueError,
            r"value 2 at index \(0, 1\) is not allowed: values must be 0 or 1",
        ),
        ([[1, 1], [0, -1]], ValueError, r"value -1 at index \(1, 1\) is not allowed"),
        (
            [[1.0, 0.0]],
            TypeError,
            r"attention_mask must hold 0/1 integers or bools, got dtype float",
        ),
        ([["1", "0"]], TypeError, r"got dtype <U1"),
    ],
)
def test_bad_masks(mask: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        position_ids_from_mask(mask)  # type: ignore[arg-type]


# --- the sinusoidal table ---


def test_sinusoidal_table_by_hand() -> None:
    table = sinusoidal_table(3, 4)
    assert table.shape == (3, 4) and table.dtype == np.float64
    for t in range(3):
        expected = [math.sin(t), math.cos(t), math.sin(t / 100.0), math.cos(t / 100.0)]
        np.testing.assert_allclose(table[t], expected, rtol=1e-15, atol=1e-15)


def test_sinusoidal_table_base_and_dtype() -> None:
    table = sinusoidal_table(5, 2, base=2.0, dtype=np.float32)
    assert table.dtype == np.float32
    np.testing.assert_allclose(table[:, 0], np.sin(np.arange(5)), rtol=1e-6)
    wide = sinusoidal_table(4, 6, base=np.float64(64.0))
    np.testing.assert_allclose(wide[2, 4], math.sin(2 / 64.0 ** (4 / 6)), rtol=1e-14)


def test_sinusoidal_rows_are_unit_circles_pairwise() -> None:
    table = sinusoidal_table(50, 16)
    np.testing.assert_allclose(table[:, 0::2] ** 2 + table[:, 1::2] ** 2, 1.0, rtol=1e-14)


def test_sinusoidal_table_numpy_integer_sizes() -> None:
    np.testing.assert_array_equal(
        sinusoidal_table(np.int32(4), np.int64(8)), sinusoidal_table(4, 8)
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"embed_dim": 5}, ValueError, r"embed_dim must be even .* got 5"),
        ({"max_seq_len": 0}, ValueError, r"max_seq_len must be an integer >= 1, got 0"),
        ({"embed_dim": 4.0}, TypeError, r"embed_dim must be an integer >= 1, got 4.0"),
        ({"base": 1.0}, ValueError, r"base must be a finite number > 1, got 1.0"),
        ({"base": math.inf}, ValueError, r"base must be a finite number > 1, got inf"),
        ({"base": "10"}, TypeError, r"base must be a number > 1, got '10' of type str"),
        ({"dtype": np.int32}, TypeError, r"dtype must be a floating dtype .* got int32"),
    ],
)
def test_sinusoidal_table_refuses_bad_input(kwargs: dict, error: type, message: str) -> None:
    args = {"max_seq_len": 4, "embed_dim": 4} | kwargs
    with pytest.raises(error, match=message):
        sinusoidal_table(**args)


def test_rotary_scores_depend_only_on_the_distance() -> None:
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal(8), rng.standard_normal(8)  # one query and one key vector
    seq = np.zeros((12, 8))

    def score(i: int, j: int) -> float:
        queries, keys = seq.copy(), seq.copy()
        queries[i], keys[j] = q, k
        return float(rotate(queries, 100.0)[i] @ rotate(keys, 100.0)[j])

    assert score(5, 2) == pytest.approx(score(9, 6), abs=1e-12)
    assert score(7, 7) == pytest.approx(float(q @ k), abs=1e-12)  # distance 0: no rotation
    assert score(5, 2) != pytest.approx(score(5, 3))


def test_rotation_keeps_lengths_and_its_inverse_undoes_it() -> None:
    a = np.random.default_rng(1).standard_normal((2, 7, 6))
    turned = rotate(a, 10.0)
    np.testing.assert_allclose(np.linalg.norm(turned, axis=-1), np.linalg.norm(a, axis=-1))
    np.testing.assert_allclose(rotate(turned, 10.0, inverse=True), a, atol=1e-12)
    np.testing.assert_array_equal(turned[:, 0], a[:, 0])  # position 0 is not rotated


def test_linear_bias_by_hand() -> None:
    expected = [[0.0, 0.5, 1.0], [-0.5, 0.0, 0.5], [-1.0, -0.5, 0.0]]
    np.testing.assert_array_equal(linear_bias(3, 0.5), expected)


def test_rotate_computes_in_float_and_takes_only_a_bool_for_inverse() -> None:
    ids = np.arange(12).reshape(3, 4)
    turned = rotate(ids, 10.0)
    assert turned.dtype == np.float64  # integers were once turned and truncated to integers
    np.testing.assert_array_equal(turned, rotate(ids.astype(float), 10.0))
    with pytest.raises(TypeError, match="inverse must be True or False, got 'no'"):
        rotate(ids, 10.0, inverse="no")  # type: ignore[arg-type]


@pytest.mark.parametrize("shape", [(4,), (0, 4), (2, 0, 4), (3, 5), (3, 0)])
def test_rotate_refuses_what_has_no_positions_or_pairs(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=rf"a must have shape \(\.\.\., T, H\) with T >= 1 and an "
                       rf"even H >= 2, got {re.escape(str(shape))}"):  # fmt: skip
        rotate(np.ones(shape), 10.0)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((2.5, 1.0), TypeError, "seq_len must be an integer >= 1, got 2.5"),
        ((-2, 1.0), ValueError, "seq_len must be an integer >= 1, got -2"),
        ((0, 1.0), ValueError, "seq_len must be an integer >= 1, got 0"),
        ((3, np.nan), ValueError, "slope must be a finite number > 0, got nan"),
        ((3, np.inf), ValueError, "slope must be a finite number > 0, got inf"),
        ((3, 0.0), ValueError, "slope must be a finite number > 0, got 0.0"),
        ((3, -0.5), ValueError, "slope must be a finite number > 0, got -0.5"),
    ],
)
def test_linear_bias_refuses_what_alibi_slope_refuses(
    args: tuple, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        linear_bias(*args)


def test_rotate_at_given_positions_is_rotate_of_the_longer_sequence() -> None:
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    whole = rotate(np.concatenate([np.zeros((2, 5, 4)), a], axis=1), 10.0)
    np.testing.assert_array_equal(rotate(a, 10.0, positions=[5, 6, 7]), whole[:, 5:])
    np.testing.assert_array_equal(rotate(a, 10.0, positions=np.arange(3)), rotate(a, 10.0))
    with pytest.raises(ValueError, match="positions must be >= 0, got -1"):
        rotate(a, 10.0, positions=[-1, 0, 1])
    with pytest.raises(ValueError, match=r"positions of shape \(2,\) do not broadcast"):
        rotate(a, 10.0, positions=[0, 1])
    with pytest.raises(TypeError, match="positions must be integers"):
        rotate(a, 10.0, positions=[0.0, 1.0, 2.0])


def test_alibi_slopes_are_the_papers_geometric_sequence() -> None:
    np.testing.assert_array_equal(alibi_slopes(4), [1 / 4, 1 / 16, 1 / 64, 1 / 256])
    np.testing.assert_array_equal(alibi_slopes(8), [2.0**-k for k in range(1, 9)])
    # not a power of 2: the 4-head slopes, then every other slope of 8 heads
    np.testing.assert_array_equal(alibi_slopes(6), [*alibi_slopes(4), 2.0**-1, 2.0**-3])
    with pytest.raises(ValueError, match="n_heads must be"):
        alibi_slopes(0)
