"""Position ids from an attention mask, and the fixed sinusoidal table."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gptembed import PAD_POSITION, position_ids_from_mask, sinusoidal_table


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
