"""GPTStyleEmbedding: shapes, values, seeding, a clear error for every kind of bad input,
properties, growing the position table, both gradients, and reading at given position ids."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gptembed import INIT_STD, GPTStyleEmbedding, peak_bytes, position_ids_from_mask
from tests.gradcheck import numerical_grad
from tests.strategies import forward_in_blocks_of, layer_and_ids


@pytest.fixture
def layer() -> GPTStyleEmbedding:
    return GPTStyleEmbedding(vocab_size=11, max_seq_len=7, embed_dim=5, seed=0)


def reference(layer: GPTStyleEmbedding, ids: np.ndarray, start_pos: int = 0) -> np.ndarray:
    """The section's expression: gather, slice, add (numpy broadcasting does the batch)."""
    t = ids.shape[-1]
    return layer.token_embeddings[ids] + layer.position_embeddings[start_pos : start_pos + t]


def test_table_shapes_dtype_and_attributes(layer: GPTStyleEmbedding) -> None:
    assert layer.token_embeddings.shape == (11, 5)
    assert layer.position_embeddings.shape == (7, 5)
    assert layer.token_embeddings.dtype == np.float32
    assert (layer.vocab_size, layer.max_seq_len, layer.embed_dim) == (11, 7, 5)


def test_float64_tables() -> None:
    layer = GPTStyleEmbedding(4, 3, 2, seed=1, dtype=np.float64)
    assert layer.position_embeddings.dtype == np.float64
    assert layer([0, 1]).dtype == np.float64


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_tables_are_the_seeded_draws_scaled(dtype: type) -> None:
    """float32 and float64 are drawn in their dtype; float16 from float32 draws, cast."""
    layer = GPTStyleEmbedding(3000, 70, 96, seed=42, dtype=dtype)
    rng = np.random.default_rng(42)
    draw = np.float64 if dtype is np.float64 else np.float32
    tok = (rng.standard_normal((3000, 96), dtype=draw) * INIT_STD).astype(dtype)
    pos = (rng.standard_normal((70, 96), dtype=draw) * INIT_STD).astype(dtype)
    assert layer.dtype == dtype
    np.testing.assert_array_equal(layer.token_embeddings, tok)
    np.testing.assert_array_equal(layer.position_embeddings, pos)


def test_float16_tables_cost_little_more_than_themselves() -> None:
    """Drawing all of a float16 table in float32 first once held 3x the table at the peak."""
    sizes = (20_000, 512, 256)
    table_bytes = (sizes[0] + sizes[1]) * sizes[2] * 2  # about 10 MB of float16
    GPTStyleEmbedding(1, 1, 1, seed=0, dtype=np.float16)  # numpy's first Generator takes 1 MB once
    peak = peak_bytes(lambda: GPTStyleEmbedding(*sizes, seed=0, dtype=np.float16))
    assert table_bytes <= peak <= 1.15 * table_bytes


def test_init_is_normal_with_std_002() -> None:
    layer = GPTStyleEmbedding(2000, 500, 64, seed=3)
    for table in (layer.token_embeddings, layer.position_embeddings):
        assert abs(table.mean()) < 1e-3
        assert table.std() == pytest.approx(INIT_STD, rel=0.01)


def test_seed_is_reproducible_and_local() -> None:
    # The legacy global RNG is what the section's version reseeds; ours must leave it alone.
    np.random.seed(123)  # noqa: NPY002
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    a = GPTStyleEmbedding(9, 4, 3, seed=42)
    b = GPTStyleEmbedding(9, 4, 3, seed=42)
    c = GPTStyleEmbedding(9, 4, 3, seed=43)
    assert np.array_equal(np.random.get_state()[1], before), "global RNG touched"  # noqa: NPY002
    np.testing.assert_array_equal(a.token_embeddings, b.token_embeddings)
    np.testing.assert_array_equal(a.position_embeddings, b.position_embeddings)
    assert not np.array_equal(a.token_embeddings, c.token_embeddings)
    assert not np.array_equal(a.token_embeddings[:4], a.position_embeddings), "tables share draws"


def test_forward_1d_matches_gather_plus_add(layer: GPTStyleEmbedding) -> None:
    ids = np.array([3, 3, 0, 10, 2])
    out = layer.forward(ids)
    assert out.shape == (5, 5)
    np.testing.assert_array_equal(out, reference(layer, ids))


def test_same_token_at_two_positions_differs(layer: GPTStyleEmbedding) -> None:
    out = layer([4, 4])
    assert not np.allclose(out[0], out[1])
    np.testing.assert_allclose(
        out[1] - out[0], layer.position_embeddings[1] - layer.position_embeddings[0], atol=1e-7
    )


def test_forward_batch_and_call(layer: GPTStyleEmbedding) -> None:
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    out = layer(ids)
    assert out.shape == (2, 3, 5)
    np.testing.assert_array_equal(out, reference(layer, ids))
    np.testing.assert_array_equal(out[1], layer(ids[1]))


def test_start_pos_continues_a_sequence(layer: GPTStyleEmbedding) -> None:
    ids = np.array([1, 2, 3, 4, 5, 6])
    whole = layer(ids)
    np.testing.assert_array_equal(
        np.concatenate([layer(ids[:4]), layer(ids[4:], start_pos=4)]), whole
    )
    np.testing.assert_array_equal(layer(ids[2:], start_pos=2), reference(layer, ids[2:], 2))


def test_full_length_and_continuation_to_the_end(layer: GPTStyleEmbedding) -> None:
    assert layer(np.zeros(7, dtype=np.int64)).shape == (7, 5)
    assert layer([1, 2], start_pos=5).shape == (2, 5)


def test_output_is_a_new_array(layer: GPTStyleEmbedding) -> None:
    ids = [0, 1]
    tok, pos = layer.token_embeddings.copy(), layer.position_embeddings.copy()
    out = layer(ids)
    assert not np.shares_memory(out, layer.token_embeddings)
    assert not np.shares_memory(out, layer.position_embeddings)
    out += 1.0
    np.testing.assert_array_equal(layer.token_embeddings, tok)
    np.testing.assert_array_equal(layer.position_embeddings, pos)


def test_tables_can_be_overwritten(layer: GPTStyleEmbedding) -> None:
    layer.position_embeddings[:] = 0.0
    np.testing.assert_array_equal(layer([3, 1]), layer.token_embeddings[[3, 1]])


@pytest.mark.parametrize(
    "ids",
    [
        [1, 2],
        (1, 2),
        np.array([1, 2], dtype=np.uint8),
        np.array([1, 2], dtype=np.int16),
        np.array([1, 2], dtype=np.uint64),
    ],
)
def test_accepts_lists_and_any_integer_dtype(layer: GPTStyleEmbedding, ids: object) -> None:
    np.testing.assert_array_equal(layer(ids), layer(np.array([1, 2])))


@pytest.mark.parametrize("ids", [[], np.array([], dtype=np.int64)])
def test_empty_sequence(layer: GPTStyleEmbedding, ids: object) -> None:
    out = layer(ids)
    assert out.shape == (0, 5)
    assert layer(np.zeros((3, 0), dtype=np.int64)).shape == (3, 0, 5)


def test_parameter_counts(layer: GPTStyleEmbedding) -> None:
    counts = layer.parameter_counts()
    assert (counts.token, counts.position, counts.total) == (55, 35, 90)
    assert all(type(n) is int for n in (counts.token, counts.position, counts.total))


def test_parameters_are_the_tables_themselves(layer: GPTStyleEmbedding) -> None:
    params = layer.parameters()
    assert list(params) == ["token_embeddings", "position_embeddings"]
    assert params["token_embeddings"] is layer.token_embeddings
    assert params["position_embeddings"] is layer.position_embeddings
    assert sum(a.size for a in params.values()) == layer.parameter_counts().total


# --- bad input: the exception type and a message that names the value and the valid range ---


def test_too_long_names_the_length_the_start_and_the_limit(layer: GPTStyleEmbedding) -> None:
    message = (
        r"^sequence length 8 at start_pos 0 exceeds max_seq_len 7: positions must lie in \[0, 7\)$"
    )
    with pytest.raises(ValueError, match=message):
        layer(np.zeros(8, dtype=np.int64))
    with pytest.raises(ValueError, match=message):
        layer(np.zeros((2, 8), dtype=np.int64))


def test_start_pos_past_the_end(layer: GPTStyleEmbedding) -> None:
    with pytest.raises(
        ValueError,
        match=r"^sequence length 3 at start_pos 5 exceeds max_seq_len 7: positions must lie in "
        r"\[0, 7\)$",
    ):
        layer([1, 2, 3], start_pos=5)
    with pytest.raises(ValueError, match=r"^start_pos must be in \[0, 7\], got 8$"):
        layer([], start_pos=8)
    assert layer([], start_pos=7).shape == (0, 5)


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ([1, -1, 2], r"token id -1 at index \(1,\) is out of range: ids must be in \[0, 11\)"),
        ([1, 11], r"token id 11 at index \(1,\) is out of range: ids must be in \[0, 11\)"),
        ([[0, 1], [2, 99]], r"token id 99 at index \(1, 1\) is out of range"),
        (np.array([2**40]), r"token id 1099511627776 .* out of range"),
    ],
)
def test_ids_out_of_range(layer: GPTStyleEmbedding, ids: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        layer(ids)


@pytest.mark.parametrize(
    ("ids", "dtype_name"),
    [
        ([1.0, 2.0], "float64"),
        (np.array([1, 2], dtype=np.float32), "float32"),
        ([True, False], "bool"),
        (["a", "b"], "<U1"),
        (np.array([1, None], dtype=object), "object"),
    ],
)
def test_non_integer_ids(layer: GPTStyleEmbedding, ids: object, dtype_name: str) -> None:
    with pytest.raises(
        TypeError, match=rf"token_ids must be integers in \[0, 11\), got dtype {dtype_name}"
    ):
        layer(ids)


@pytest.mark.parametrize("ids", [3, np.zeros((1, 1, 2), dtype=np.int64)])
def test_wrong_number_of_dims(layer: GPTStyleEmbedding, ids: object) -> None:
    with pytest.raises(
        ValueError, match=r"token_ids must have shape \(T,\) or \(B, T\), got [03] dimensions"
    ):
        layer(ids)


@pytest.mark.parametrize(
    ("start_pos", "error", "message"),
    [
        (-1, ValueError, r"start_pos must be in \[0, 7\], got -1"),
        (1.0, TypeError, r"start_pos must be an integer in \[0, 7\], got 1.0 of type float"),
        (True, TypeError, r"start_pos must be an integer in \[0, 7\], got True of type bool"),
        ("2", TypeError, r"got '2' of type str"),
    ],
)
def test_bad_start_pos(
    layer: GPTStyleEmbedding, start_pos: object, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        layer([1], start_pos=start_pos)  # type: ignore[arg-type]


def test_numpy_integer_start_pos(layer: GPTStyleEmbedding) -> None:
    np.testing.assert_array_equal(layer([1], start_pos=np.int64(3)), layer([1], start_pos=3))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"vocab_size": 0}, ValueError, r"vocab_size must be an integer >= 1, got 0"),
        ({"max_seq_len": -4}, ValueError, r"max_seq_len must be an integer >= 1, got -4"),
        (
            {"embed_dim": 2.0},
            TypeError,
            r"embed_dim must be an integer >= 1, got 2.0 of type float",
        ),
        (
            {"embed_dim": True},
            TypeError,
            r"embed_dim must be an integer >= 1, got True of type bool",
        ),
        ({"vocab_size": "10"}, TypeError, r"vocab_size must be an integer >= 1, got '10'"),
        (
            {"dtype": np.int32},
            TypeError,
            r"dtype must be a floating dtype such as np.float32, got int32",
        ),
        ({"dtype": "banana"}, TypeError, r"dtype must be a floating dtype"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict, error: type, message: str) -> None:
    args = {"vocab_size": 10, "max_seq_len": 4, "embed_dim": 3} | kwargs
    with pytest.raises(error, match=message):
        GPTStyleEmbedding(**args)


def test_errors_survive_python_O() -> None:
    """User-facing checks are exceptions, not asserts, so `python -O` keeps them."""
    import subprocess
    import sys

    code = (
        "from gptembed import GPTStyleEmbedding\n"
        "try:\n    GPTStyleEmbedding(5, 2, 3, seed=0)([0, 0, 0])\n"
        "except ValueError as e:\n    print(e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == (
        "sequence length 3 at start_pos 0 exceeds max_seq_len 2: positions must lie in [0, 2)"
    )


# --- tables set on the layer are checked when set, as from_tables checks them ---


def test_a_new_table_of_the_same_shape_and_dtype_is_taken_as_it_is(
    layer: GPTStyleEmbedding,
) -> None:
    table = np.ones((9, 5), dtype=np.float32)  # 9 rows: another length is fine
    layer.position_embeddings = table
    assert layer.position_embeddings is table and layer.max_seq_len == 9
    assert layer.parameters()["position_embeddings"] is table
    np.testing.assert_array_equal(layer([3, 1]), layer.token_embeddings[[3, 1]] + 1.0)


@pytest.mark.parametrize(
    ("name", "table", "error", "message"),
    [
        (
            "position_embeddings",
            np.zeros((7, 2), dtype=np.float32),
            ValueError,
            r"^position_embeddings must be 5 wide, as token_embeddings is, got shape \(7, 2\): "
            r"GPTStyleEmbedding.from_tables replaces both tables at once$",
        ),
        (
            "token_embeddings",
            np.zeros((11, 6), dtype=np.float32),
            ValueError,
            r"^token_embeddings must be 5 wide, as position_embeddings is, got shape \(11, 6\)",
        ),
        (
            "position_embeddings",
            np.zeros((7, 5), dtype=np.int64),
            TypeError,
            r"^position_embeddings must be floating point, got dtype int64$",
        ),
        (
            "position_embeddings",
            np.zeros((7, 5), dtype=np.float64),
            TypeError,
            r"^position_embeddings must have token_embeddings' dtype float32, got float64",
        ),
        (
            "token_embeddings",
            np.zeros(5, dtype=np.float32),
            ValueError,
            r"^token_embeddings must be a non-empty 2-D array, got shape \(5,\)$",
        ),
        (
            "token_embeddings",
            np.zeros((0, 5), dtype=np.float32),
            ValueError,
            r"^token_embeddings must be a non-empty 2-D array, got shape \(0, 5\)$",
        ),
    ],
)
def test_a_table_set_on_the_layer_is_checked(
    layer: GPTStyleEmbedding, name: str, table: np.ndarray, error: type, message: str
) -> None:
    """A position table of the wrong width once failed later with a broadcast error, and an int
    table worked with start_pos but failed with position_ids."""
    before = getattr(layer, name)
    with pytest.raises(error, match=message):
        setattr(layer, name, table)
    assert getattr(layer, name) is before


@pytest.mark.parametrize(
    ("tables", "error", "message"),
    [
        (
            (np.zeros((4, 3)), np.zeros((2, 2))),
            ValueError,
            r"^position_embeddings must be 3 wide, as token_embeddings is, got shape \(2, 2\)",
        ),
        (
            (np.zeros((4, 3)), np.zeros((2, 3), dtype=np.float32)),
            TypeError,
            r"^position_embeddings must have token_embeddings' dtype float64, got float32",
        ),
        ((np.zeros((4, 3), dtype=int), np.zeros((2, 3))), TypeError, r"^token_embeddings must be"),
    ],
)
def test_from_tables_checks_both_tables(tables: tuple, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        GPTStyleEmbedding.from_tables(*tables)


# Property tests: for any sizes, ids, batch shape and offset, forward is gather-plus-add, and any
# invalid input raises the documented error.


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


# Strings from a small alphabet that spells numbers ("1", "-2", "1e3"): any text has the same
# dtype kind, and a fixed alphabet spares hypothesis building its table of Unicode characters on
# a fresh clone (1.5 s of CPU, as in CI).
NUMBER_TEXT = st.text("0123456789 .-eab", max_size=3)


@given(st.one_of(st.floats(allow_nan=True), st.booleans(), NUMBER_TEXT), st.integers(1, 3))
def test_non_integer_ids_are_refused(value: object, n: int) -> None:
    layer = GPTStyleEmbedding(5, 4, 3, seed=0)
    with pytest.raises(TypeError, match=r"token_ids must be integers in \[0, 5\), got dtype"):
        layer([value] * n)


# Growing the position table, and the gradients of both tables.


@pytest.fixture
def layer_to_grow() -> GPTStyleEmbedding:
    return GPTStyleEmbedding(13, 6, 4, seed=5, dtype=np.float64)


def test_fresh_keeps_old_rows_and_shares_token_table(layer_to_grow: GPTStyleEmbedding) -> None:
    longer = layer_to_grow.extended(10, method="fresh", seed=1)
    assert longer.position_embeddings.shape == (10, 4)
    np.testing.assert_array_equal(longer.position_embeddings[:6], layer_to_grow.position_embeddings)
    assert not np.allclose(longer.position_embeddings[6:], 0.0)
    assert longer.token_embeddings is layer_to_grow.token_embeddings
    assert not np.shares_memory(longer.position_embeddings, layer_to_grow.position_embeddings)
    np.testing.assert_array_equal(
        layer_to_grow.extended(10, seed=1).position_embeddings, longer.position_embeddings
    )


def test_interpolate_is_linear_along_positions(layer_to_grow: GPTStyleEmbedding) -> None:
    longer = layer_to_grow.extended(
        11, method="interpolate"
    )  # (6 - 1) * 2 + 1 rows: old rows at even indices
    old = layer_to_grow.position_embeddings
    np.testing.assert_allclose(longer.position_embeddings[::2], old, rtol=1e-12)
    np.testing.assert_allclose(
        longer.position_embeddings[1::2], (old[:-1] + old[1:]) / 2, rtol=1e-12
    )


def test_interpolate_to_the_same_length_is_identity(layer_to_grow: GPTStyleEmbedding) -> None:
    np.testing.assert_allclose(
        layer_to_grow.extended(6, method="interpolate").position_embeddings,
        layer_to_grow.position_embeddings,
    )


def test_extension_refuses_shrinking_and_bad_arguments(layer_to_grow: GPTStyleEmbedding) -> None:
    with pytest.raises(ValueError, match=r"max_seq_len must be an integer >= 6, got 5"):
        layer_to_grow.extended(5)
    with pytest.raises(TypeError, match=r"max_seq_len must be an integer >= 6, got 7.5"):
        layer_to_grow.extended(7.5)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"^method must be 'fresh', 'interpolate' or 'tile', got 'cubic'$"
    ):
        layer_to_grow.extended(8, method="cubic")  # type: ignore[arg-type]


def test_tile_repeats_the_learned_rows(layer_to_grow: GPTStyleEmbedding) -> None:
    longer = layer_to_grow.extended(15, method="tile")
    old = layer_to_grow.position_embeddings
    assert longer.position_embeddings.shape == (15, 4)
    np.testing.assert_array_equal(longer.position_embeddings[:6], old)
    np.testing.assert_array_equal(longer.position_embeddings[6:12], old)
    np.testing.assert_array_equal(longer.position_embeddings[12:], old[:3])
    assert not np.shares_memory(longer.position_embeddings, old)
    assert longer.token_embeddings is layer_to_grow.token_embeddings
    np.testing.assert_array_equal(layer_to_grow.extended(6, method="tile").position_embeddings, old)


@pytest.mark.parametrize("method", ["fresh", "interpolate", "tile"])
def test_numpy_integer_lengths(layer_to_grow: GPTStyleEmbedding, method: str) -> None:
    for length in (np.int64(9), np.int16(9), np.uint32(9)):
        longer = layer_to_grow.extended(length, method=method, seed=2)  # type: ignore[arg-type]
        assert longer.max_seq_len == 9 and type(longer.max_seq_len) is int
        np.testing.assert_array_equal(
            longer.position_embeddings,
            layer_to_grow.extended(9, method=method, seed=2).position_embeddings,
        )


def assert_backward_matches_finite_differences(
    layer: GPTStyleEmbedding, weights: np.ndarray, ids: np.ndarray, **positions: Any
) -> None:
    """Both tables' gradients from backward equal finite differences of the loss
    sum(weights * forward), whose gradient with respect to forward is weights; `positions` is
    start_pos or position_ids, as forward and backward take them."""

    def loss() -> float:
        return float((layer(ids, **positions) * weights).sum())

    grad_tok, grad_pos = layer.backward(weights, ids, **positions)
    np.testing.assert_allclose(grad_tok, numerical_grad(loss, layer.token_embeddings), atol=1e-7)
    np.testing.assert_allclose(grad_pos, numerical_grad(loss, layer.position_embeddings), atol=1e-7)


@pytest.mark.parametrize(
    ("ids", "start"), [(np.array([3, 3, 7, 3]), 1), (np.array([[1, 2, 1], [2, 2, 12]]), 3)]
)
def test_backward_matches_finite_differences(
    layer_to_grow: GPTStyleEmbedding, ids: np.ndarray, start: int
) -> None:
    weights = np.random.default_rng(0).standard_normal((*ids.shape, 4))
    assert_backward_matches_finite_differences(layer_to_grow, weights, ids, start_pos=start)


def test_backward_repeated_ids_sum(layer_to_grow: GPTStyleEmbedding) -> None:
    grad = np.ones((3, 4))
    grad_tok, grad_pos = layer_to_grow.backward(grad, [5, 5, 5])
    np.testing.assert_array_equal(grad_tok[5], 3.0)
    assert np.count_nonzero(grad_tok) == 4
    np.testing.assert_array_equal(grad_pos[:3], 1.0)
    np.testing.assert_array_equal(grad_pos[3:], 0.0)


def test_backward_empty_and_bad_shape(layer_to_grow: GPTStyleEmbedding) -> None:
    grad_tok, grad_pos = layer_to_grow.backward(np.zeros((0, 4)), [])
    assert not grad_tok.any() and not grad_pos.any()
    with pytest.raises(
        ValueError, match=r"grad_output must have the output's shape \(2, 4\), got \(2, 3\)"
    ):
        layer_to_grow.backward(np.zeros((2, 3)), [1, 2])


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
    layer_to_grow: GPTStyleEmbedding, grad: np.ndarray
) -> None:
    """Strings once failed inside numpy's float conversion; bools were summed as ones."""
    with pytest.raises(
        TypeError, match=rf"^grad_output must hold real numbers, got dtype {grad.dtype}$"
    ):
        layer_to_grow.backward(grad, [1, 2])


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
    layer_to_grow: GPTStyleEmbedding, seed: object, error: type, message: str
) -> None:
    """numpy's own errors once came from deep inside SeedSequence; True was taken as seed 1."""
    with pytest.raises(error, match=message):
        layer_to_grow.extended(8, seed=seed)  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        GPTStyleEmbedding(3, 2, 1, seed=seed)  # type: ignore[arg-type]


# GPTStyleEmbedding read at given position ids: the same rows as start_pos, padding, gradients.


@pytest.fixture
def float64_layer() -> GPTStyleEmbedding:
    return GPTStyleEmbedding(vocab_size=11, max_seq_len=7, embed_dim=5, seed=0, dtype=np.float64)


def test_position_ids_pick_the_rows(float64_layer: GPTStyleEmbedding) -> None:
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    pos = np.array([[6, 0, 6], [2, 2, 1]])  # any order, repeats allowed
    out = float64_layer(ids, position_ids=pos)
    np.testing.assert_array_equal(
        out, float64_layer.token_embeddings[ids] + float64_layer.position_embeddings[pos]
    )


def test_shared_position_ids_apply_to_every_sequence(float64_layer: GPTStyleEmbedding) -> None:
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    shared = np.array([5, 3, 1])
    np.testing.assert_array_equal(
        float64_layer(ids, position_ids=shared),
        float64_layer(ids, position_ids=np.tile(shared, (2, 1))),
    )
    np.testing.assert_array_equal(
        float64_layer(ids[0], position_ids=shared),
        float64_layer.token_embeddings[ids[0]] + float64_layer.position_embeddings[shared],
    )


def test_explicit_start_pos_zero_is_allowed_with_position_ids(
    float64_layer: GPTStyleEmbedding,
) -> None:
    np.testing.assert_array_equal(
        float64_layer([1, 2], 0, position_ids=[3, 4]), float64_layer([1, 2], start_pos=3)
    )


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
    float64_layer: GPTStyleEmbedding, kwargs: dict, error: type, message: str
) -> None:
    for call in (
        float64_layer.forward,
        partial(float64_layer.backward, np.zeros((3, 5))),
        float64_layer.check_ids,
    ):
        with pytest.raises(error, match=message):
            call([1, 2, 3], **kwargs)


def test_position_ids_of_a_batch_must_match_its_shape(float64_layer: GPTStyleEmbedding) -> None:
    with pytest.raises(
        ValueError, match=r"position_ids must have the ids' shape \(2, 3\) or \(3,\), got \(3, 3\)"
    ):
        float64_layer(np.zeros((2, 3), dtype=int), position_ids=np.zeros((3, 3), dtype=int))


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


def test_backward_with_position_ids_matches_finite_differences(
    float64_layer: GPTStyleEmbedding,
) -> None:
    ids = np.array([[1, 2, 1], [2, 2, 10]])
    pos = np.array([[0, 0, 5], [5, 1, 0]])  # repeated positions sum their gradients
    weights = np.random.default_rng(0).standard_normal((2, 3, 5))
    assert_backward_matches_finite_differences(float64_layer, weights, ids, position_ids=pos)


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


def test_tables_too_large_for_memory_are_refused_by_name() -> None:
    """numpy's own error named a shape ("Unable to allocate 2.27 PiB for an array with shape
    (10000000000000, 64)"), or for larger sizes none ("array is too big")."""
    with pytest.raises(ValueError, match="vocab_size 10,000,000,000,000 and max_seq_len 8 rows of "
                       "embed_dim 64"):  # fmt: skip
        GPTStyleEmbedding(10**13, 8, 64)
    with pytest.raises(ValueError, match=f"max_seq_len {2**62:,} rows"):
        GPTStyleEmbedding(8, 2**62, 2**62)
