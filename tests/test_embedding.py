"""GPTStyleEmbedding: shapes, values, seeding, and a clear error for every kind of bad input."""

from __future__ import annotations

import numpy as np
import pytest

from gptembed import INIT_STD, GPTStyleEmbedding, peak_bytes


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
