"""Position ids from an attention mask, the fixed sinusoidal table, rotary's turn (at any real
position), its wavelengths and the NTK base, and ALiBi's bias."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gptembed import PAD_POSITION, position_ids_from_mask, sinusoidal_table
from gptembed.positions import (
    alibi_slopes,
    linear_bias,
    ntk_base,
    random_start_rows,
    rotary_wavelengths,
    rotate,
)
from tests.gradcheck import numerical_grad


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
    with pytest.raises(TypeError, match="positions must hold real numbers"):
        rotate(a, 10.0, positions=["0", "1", "2"])
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match=f"positions holds {bad} at index \\(1,\\)"):
            rotate(a, 10.0, positions=[0.0, bad, 2.0])
    with pytest.raises(ValueError, match=r"positions must be >= 0, got -0\.5"):
        rotate(a, 10.0, positions=[0.0, -0.5, 2.0])


def test_rotate_at_fractional_positions_turns_by_the_fraction() -> None:
    """Position 2.5 turns pair i by 2.5 theta_i; turning by one position then another is
    turning by their sum, fractions included; the inverse undoes it."""
    a = np.random.default_rng(2).standard_normal((3, 6))
    theta = 100.0 ** (-np.arange(0, 6, 2) / 6)
    turned = rotate(a, 100.0, positions=[2.5, 0.25, 7.0])
    for row, t in zip(range(3), [2.5, 0.25, 7.0], strict=True):
        c, s = np.cos(t * theta), np.sin(t * theta)
        np.testing.assert_allclose(turned[row, 0::2], c * a[row, 0::2] - s * a[row, 1::2])
        np.testing.assert_allclose(turned[row, 1::2], s * a[row, 0::2] + c * a[row, 1::2])
    twice = rotate(rotate(a, 100.0, positions=[1.5, 0.75, 3.0]), 100.0, positions=[1.0, 0.5, 2.5])
    np.testing.assert_allclose(twice, rotate(a, 100.0, positions=[2.5, 1.25, 5.5]), atol=1e-12)
    back = rotate(turned, 100.0, inverse=True, positions=[2.5, 0.25, 7.0])
    np.testing.assert_allclose(back, a, atol=1e-12)


def test_the_gradient_of_rotate_at_fractional_positions_is_the_inverse_rotation() -> None:
    """A gradient goes back through the rotation by its transpose, the inverse: for
    f(a) = sum(w * rotate(a)), df/da is rotate(w, inverse=True), against finite differences,
    at fractional positions of every row of a batch."""
    rng = np.random.default_rng(5)
    a, w = rng.standard_normal((2, 2, 2, 4, 6))  # (B, heads, T, H) each
    at = rng.uniform(0.0, 20.0, size=(2, 1, 4))  # (B, 1, T): one position a row, every head
    numeric = numerical_grad(lambda: float((w * rotate(a, 50.0, positions=at)).sum()), a)
    np.testing.assert_allclose(rotate(w, 50.0, inverse=True, positions=at), numeric, atol=1e-8)


def test_random_start_rows_are_contiguous_windows_from_each_start() -> None:
    rows = random_start_rows(500, 4, 6, seed=1)
    assert rows.shape == (500, 4) and rows.dtype == np.intp
    np.testing.assert_array_equal(rows - rows[:, :1], np.tile(np.arange(4), (500, 1)))
    assert set(rows[:, 0].tolist()) == set(range(7))  # every start in [0, 6], drawn uniformly
    np.testing.assert_array_equal(random_start_rows(500, 4, 6, seed=1), rows)
    assert not random_start_rows(3, 4, 0, seed=1)[:, 0].any()
    generator = np.random.default_rng(2)
    first, second = (random_start_rows(50, 2, 9, seed=generator) for _ in range(2))
    assert not np.array_equal(first, second)  # a Generator's draws go on
    for args, message in [((0, 4, 6), "n_windows"), ((2, 0, 6), "seq_len"), ((2, 4, -1), "max_st")]:
        with pytest.raises(ValueError, match=f"{message}\\w* must be an integer"):
            random_start_rows(*args, seed=0)


def test_rotary_wavelengths_are_the_positions_of_a_full_turn() -> None:
    """Turned by its wavelength, each pair is back where it started (and by half of it, turned
    half a circle); the wavelengths grow by base**(2/H) a pair, from 2 pi."""
    waves = rotary_wavelengths(8, 100.0)
    np.testing.assert_allclose(waves, 2 * np.pi * 100.0 ** (np.arange(0, 8, 2) / 8))
    a = np.random.default_rng(3).standard_normal((1, 8))
    for i, wave in enumerate(waves):
        pair = slice(2 * i, 2 * i + 2)
        np.testing.assert_allclose(rotate(a, 100.0, positions=[wave])[0, pair], a[0, pair])
        np.testing.assert_allclose(rotate(a, 100.0, positions=[wave / 2])[0, pair], -a[0, pair])
    for args, error, message in [
        ((7,), ValueError, "head_dim must be even"),
        ((0,), ValueError, "head_dim must be an integer >= 2, got 0"),
        ((8, 1.0), ValueError, "base must be a finite number > 1, got 1.0"),
    ]:
        with pytest.raises(error, match=message):
            rotary_wavelengths(*args)


def test_the_ntk_base_keeps_the_fastest_pair_and_slows_the_slowest_by_the_factor() -> None:
    """YaRN's NTK-aware rule (section 3.1): base * s**(H / (H - 2)), so pair 0 keeps one radian
    a position while the slowest pair's wavelength grows s times, as interpolation would make
    it; the pairs between grow by less the faster they are."""
    assert ntk_base(10000.0, 4.0, 16) == pytest.approx(10000.0 * 4.0 ** (16 / 14))
    assert ntk_base(10000.0, 1.0, 16) == 10000.0
    before, after = rotary_wavelengths(16), rotary_wavelengths(16, ntk_base(10000.0, 4.0, 16))
    assert after[0] == pytest.approx(before[0]) and after[-1] == pytest.approx(4 * before[-1])
    assert (np.diff(after / before) > 0).all()
    for args, error, message in [
        ((10000.0, 0.5, 16), ValueError, "factor must be a finite number >= 1, got 0.5"),
        ((10000.0, 4.0, 2), ValueError, "head_dim must be an integer >= 4, got 2"),
        ((10000.0, 4.0, 15), ValueError, "head_dim must be even"),
        ((1.0, 4.0, 16), ValueError, "base must be a finite number > 1, got 1.0"),
        ((10000.0, "4", 16), TypeError, "factor must be a number >= 1"),
    ]:
        with pytest.raises(error, match=message):
            ntk_base(*args)


def test_alibi_slopes_are_the_papers_geometric_sequence() -> None:
    np.testing.assert_array_equal(alibi_slopes(4), [1 / 4, 1 / 16, 1 / 64, 1 / 256])
    np.testing.assert_array_equal(alibi_slopes(8), [2.0**-k for k in range(1, 9)])
    # not a power of 2: the 4-head slopes, then every other slope of 8 heads
    np.testing.assert_array_equal(alibi_slopes(6), [*alibi_slopes(4), 2.0**-1, 2.0**-3])
    with pytest.raises(ValueError, match="n_heads must be"):
        alibi_slopes(0)
