"""Probes of a position table: cosine similarity of its rows, pair by pair and at a lag."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from gptembed.attention_model import AttentionConfig, score_terms, train
from gptembed.attention_terms import ScoreTerms, term_spread
from gptembed.gpt_runs import stored_run
from gptembed.positions import sinusoidal_table
from gptembed.probes import (
    ProbeScore,
    cosine_similarity_matrix,
    lagged_similarity,
    position_probe,
    principal_components,
    random_walk,
    shift_probe,
    similarity_by_lag,
    state_position_probe,
)


def test_cosine_similarity_matrix_and_lags_by_hand() -> None:
    table = np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0]])
    np.testing.assert_allclose(
        cosine_similarity_matrix(table), [[1, 0, -1], [0, 1, 0], [-1, 0, 1]], atol=1e-12
    )
    np.testing.assert_allclose(lagged_similarity(table, 1), [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(lagged_similarity(table, 2), [-1.0])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: cosine_similarity_matrix(np.array([[1.0, 0.0], [0.0, 0.0]])),
            r"row 1 is all zeros",
        ),
        (lambda: cosine_similarity_matrix(np.zeros(3)), r"table must be a 2-D \(L, D\) array"),
        (lambda: lagged_similarity(np.eye(3), 3), r"lag must be in \[1, 2\] for this table, got 3"),
        (lambda: lagged_similarity(np.eye(3), 0), r"lag must be in \[1, 2\] for this table, got 0"),
    ],
)
def test_bad_input_names_the_value_and_the_range(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


PROBES = {
    "cosine_similarity_matrix": cosine_similarity_matrix,
    "lagged_similarity": lambda table: lagged_similarity(table, 2),
    "similarity_by_lag": similarity_by_lag,
    "position_probe": position_probe,
    "position_probe ridge": lambda table: position_probe(table, ridge=1.0),
    "shift_probe": lambda table: shift_probe(table, 1),
    "shift_probe ridge": lambda table: shift_probe(table, 1, ridge=1.0),
    "position_probe contiguous": lambda table: position_probe(table, contiguous=True),
}


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("probe", PROBES.values(), ids=PROBES.keys())
def test_every_probe_refuses_a_table_that_is_not_finite(
    probe: Callable[[np.ndarray], object], bad: float
) -> None:
    """A NaN once made position_probe hang at 100% CPU inside LAPACK (on the issue's machine;
    LinAlgError here), shift_probe raise LinAlgError, and the similarities return NaN."""
    table = np.random.default_rng(0).standard_normal((16, 4))
    table[5, 2] = bad
    message = rf"^table holds {bad} at index \(5, 2\): every value must be finite$"
    with pytest.raises(ValueError, match=message):
        probe(table)


@pytest.mark.parametrize("probe", PROBES.values(), ids=PROBES.keys())
@pytest.mark.parametrize(
    "table", [np.ones((16, 4), dtype=bool), np.full((16, 4), "a"), np.ones((16, 4), dtype=complex)]
)
def test_every_probe_refuses_a_table_that_is_not_real_numbers(
    probe: Callable[[np.ndarray], object], table: np.ndarray
) -> None:
    """Strings once failed inside numpy's float conversion; bools and complex were converted."""
    with pytest.raises(
        TypeError, match=rf"^table must hold real numbers, got dtype {table.dtype}$"
    ):
        probe(table)


def test_cosine_similarity_of_huge_and_tiny_rows() -> None:
    """Rows of 1e200 once gave all zeros: the squares in the norm overflowed to inf."""
    table = np.array([[1.0, 1.0], [1.0, -1.0], [3.0, 3.0]])
    expected = [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
    for scale in (1e200, 1e-200, 1.0):
        np.testing.assert_allclose(cosine_similarity_matrix(table * scale), expected, atol=1e-12)


def _read(probe: str, table: np.ndarray, scale: float) -> np.ndarray:
    """Every number ``probe`` gives for ``table`` times ``scale``, with those in the table's units
    (principal components' scores and mean) divided back by ``scale``."""
    if probe == "principal_components":
        pcs = principal_components(table * scale)
        parts = [pcs.scores / scale, pcs.directions, pcs.variance_share, pcs.mean / scale]
        return np.concatenate([np.ravel(part) for part in parts])
    if probe == "state_position_probe":  # the table's rows as 8 sequences of 4 states
        score = state_position_probe(table.reshape(8, 4, -1) * scale)
    else:
        score = PROBES[probe](table * scale)
    if isinstance(score, ProbeScore):
        return np.array([score.train, score.held_out, score.baseline])
    return np.asarray(score)


SCALED_PROBES = [*PROBES, "state_position_probe", "principal_components"]


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e300, 1e-300, 2.0**900, 2.0**-1000])
@pytest.mark.parametrize("probe", SCALED_PROBES)
def test_every_probe_reads_a_table_of_any_finite_scale_alike(probe: str, scale: float) -> None:
    """Tables of 1e200 and 1e-200 once gave NaN (squares overflowing or underflowing inside the
    fits; a ridge fit raised LinAlgError). A power of two scales exactly, so it gives the same
    bits; another scale rounds each value once."""
    table = random_walk(32, 6, seed=3)
    got, expected = _read(probe, table, scale), _read(probe, table, 1.0)
    assert np.isfinite(got).all()
    if np.log2(scale).is_integer():
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: position_probe(np.eye(3)), r"^table must have at least 4 rows for 2 folds of 2"),
        (lambda: position_probe(np.eye(1)), r"^table must have at least 4 rows for 2 folds of 2"),
        (
            lambda: shift_probe(np.eye(1), 1),
            r"^table must have at least 2 rows for a shift, got 1$",
        ),
        (lambda: lagged_similarity(np.eye(1), 1), r"^table must have at least 2 rows, got 1$"),
    ],
)
def test_too_few_rows_names_the_rows_needed(call: Callable[[], object], message: str) -> None:
    """These once said "n_folds must be at most 0" or "lag must be in [1, 0]": no valid value."""
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("probe", PROBES.values(), ids=PROBES.keys())
def test_every_probe_refuses_a_table_of_width_zero(probe: Callable[[np.ndarray], object]) -> None:
    """cosine_similarity_matrix of (L, 0) rows once returned all zeros: a similarity of nothing."""
    with pytest.raises(
        ValueError, match=r"^table must be a 2-D \(L, D\) array with D >= 1, got shape \(16, 0\)$"
    ):
        probe(np.zeros((16, 0)))


# Probes of what a position table encodes: similarity by lag, absolute position, shift maps.


def _random_table(rows: int = 32, dim: int = 16, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((rows, dim)) * 0.02


def test_similarity_by_lag_is_the_mean_of_each_lag() -> None:
    table = _random_table(10, 4)
    by_lag = similarity_by_lag(table)
    assert by_lag.shape == (9,)
    for lag in (1, 4, 9):
        assert by_lag[lag - 1] == pytest.approx(lagged_similarity(table, lag).mean())
    with pytest.raises(ValueError, match="at least 2 rows, got 1"):
        similarity_by_lag(table[:1])


def test_position_probe_reads_a_table_built_to_encode_position_linearly() -> None:
    rng = np.random.default_rng(1)
    rows, dim = 32, 16
    direction = rng.standard_normal(dim)
    table = np.arange(rows)[:, None] * direction + rng.standard_normal((rows, dim)) * 0.01
    linear = position_probe(table)
    assert linear.held_out < 0.1
    assert linear.baseline == pytest.approx(8.0)  # |t - mean| over interleaved folds of 0..31
    random = position_probe(_random_table(rows, dim))
    assert random.held_out > 4.0  # no better than a guess of the mean position
    assert random.train < random.held_out  # it fits the rows it saw, not the others


def test_contiguous_folds_hold_out_blocks_of_consecutive_rows() -> None:
    """On rows that lie on a line the two splits agree; where the line bends outside a block the
    blocked probe, which must extend the fitted rows past their end, fails and the interleaved
    one, which only fills the gaps between them, does not."""
    t = np.arange(16.0)
    line = np.stack([t, 2 * t], axis=1)
    assert position_probe(line, contiguous=True).held_out < 1e-9
    # Block 0..3 against the mean 9.5 of rows 4..15: off by 8 on average; block 4..7 against
    # 98 / 12: by 8/3; the other two mirror them.
    assert position_probe(line, contiguous=True).baseline == pytest.approx((8 + 8 / 3) / 2)
    bent = np.stack([np.sin(t / 5), np.cos(t / 5)], axis=1)  # a smooth arc, not a line
    assert position_probe(bent, contiguous=True).held_out > 2 * position_probe(bent).held_out
    with pytest.raises(TypeError, match=r"contiguous must be True or False, got 1 of type int"):
        position_probe(line, contiguous=1)  # type: ignore[arg-type]


def test_a_random_walk_is_smooth_and_passes_the_interleaved_probe_but_not_the_blocked_one() -> None:
    walk = random_walk(128, 64, seed=0)
    assert walk.shape == (128, 64)
    np.testing.assert_array_equal(walk, random_walk(128, 64, seed=0))
    steps = np.diff(walk, axis=0)
    assert abs(steps.std() - 1.0) < 0.02  # N(0, 1) steps
    assert similarity_by_lag(walk)[0] > 0.95  # neighbouring rows alike
    assert position_probe(walk).held_out < 3.0  # within a few of 128 positions
    assert position_probe(walk, contiguous=True).held_out > 5.0
    with pytest.raises(ValueError, match=r"dim must be an integer >= 1, got 0"):
        random_walk(4, 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_blocked_probe_separates_each_stored_text_table_from_random_walks(seed: int) -> None:
    """Chapter 7's control: every stored table reads within about a position on held-out blocks,
    several times better than any of three random walks of its size."""
    table = stored_run(seed=seed, dtype=np.float64).model.embedding.position_embeddings
    trained = position_probe(table, contiguous=True).held_out
    walks = [
        position_probe(random_walk(*table.shape, seed=s), contiguous=True).held_out
        for s in range(3)
    ]
    assert trained < 1.5
    assert 4 * trained < min(walks)


def test_shift_probe_is_exact_on_sinusoids_and_fails_on_random_rows() -> None:
    sinusoids = sinusoidal_table(32, 16)
    for shift in (1, 3, 7):
        score = shift_probe(sinusoids, shift)
        assert score.held_out < 1e-12 and score.train < 1e-12
        assert score.baseline > 0.5
    random = shift_probe(_random_table(), 3)
    assert random.held_out > 1.0  # worse than predicting the mean row


def test_shift_probe_with_too_few_rows_fits_anything_but_only_on_rows_it_saw() -> None:
    # 12 rows in 16 dimensions: 6 or 7 fitted pairs per fold, fewer than D.
    random = shift_probe(_random_table(12, 16), 3, n_folds=3)
    assert random.train < 1e-20
    assert random.held_out > 0.5


def test_probes_refuse_bad_arguments() -> None:
    table = _random_table(8, 4)
    with pytest.raises(ValueError, match=r"shift must be in \[1, 7\] for this table, got 8"):
        shift_probe(table, 8)
    with pytest.raises(
        ValueError, match=r"n_folds must be in \[2, 4\] for 8 rows \(two per fold\)"
    ):
        position_probe(table, n_folds=5)
    with pytest.raises(ValueError, match=r"n_folds must be in \[2, 4\] for 8 rows .*, got 1$"):
        position_probe(table, n_folds=1)
    with pytest.raises(TypeError, match=r"n_folds must be an integer in \[2, 4\] .*, got 2.0"):
        position_probe(table, n_folds=2.0)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"n_folds must be in \[2, 2\] for 5 pairs of rows 3 apart .*, got 3$"
    ):
        shift_probe(table, 3, n_folds=3)
    for ridge in (-1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match=rf"ridge must be a finite number >= 0, got {ridge}"):
            position_probe(table, ridge=ridge)
    with pytest.raises(TypeError, match="ridge must be a number >= 0, got '1' of type str"):
        position_probe(table, ridge="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"2-D \(L, D\) array, got shape \(8,\)"):
        shift_probe(table[:, 0], 1)


def test_term_spread_of_a_trained_head_is_mostly_position_position() -> None:
    run = train(AttentionConfig(steps=150))
    ids = np.random.default_rng(0).integers(16, size=(8, 32))
    spread = term_spread(score_terms(run.model, ids))
    assert set(spread) == {
        "token_token",
        "token_position",
        "position_token",
        "position_position",
        "total",
    }
    assert spread["position_position"] > 0.8 * spread["total"]
    assert spread["token_token"] < 0.05 * spread["total"]


def test_term_spread_ignores_what_is_constant_along_a_query_row() -> None:
    rows = np.arange(4.0)[:, None] * np.ones((4, 4))  # (T, T): constant along each row
    keys = np.tile(np.arange(4.0), (4, 1))  # varies across keys: variance of 0..i
    zero = np.zeros((4, 4))
    spread = term_spread(ScoreTerms(rows, keys, zero, zero))
    assert spread["token_token"] == 0.0
    expected = np.mean([np.var(np.arange(i + 1.0)) for i in range(1, 4)])
    assert spread["token_position"] == pytest.approx(expected)
    assert spread["total"] == pytest.approx(expected)


def test_state_position_probe_reads_a_position_direction_and_not_noise() -> None:
    rng = np.random.default_rng(0)
    noise = rng.standard_normal((16, 32, 8))  # 16 sequences of 32 states: tokens, no position
    with_position = noise.copy()
    with_position[..., 0] += np.arange(32)  # position along one direction
    readable = state_position_probe(with_position)
    blind = state_position_probe(noise)
    assert readable.held_out < 0.15 * readable.baseline  # off by the noise in that direction
    assert blind.held_out > 0.95 * blind.baseline
    assert blind.baseline == pytest.approx(8.0, abs=0.01)  # mean |t - 15.5| over t = 0 .. 31
    with pytest.raises(ValueError, match=r"states must be a non-empty \(B, T, D\) array"):
        state_position_probe(noise[0])
    with pytest.raises(ValueError, match="states must have at least 4 sequences for 2 folds"):
        state_position_probe(noise[:3])
    with pytest.raises(ValueError, match=r"states holds nan at index \(0, 9, 7\)"):
        state_position_probe(np.where(noise > 2, np.nan, noise))
