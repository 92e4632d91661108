"""Probes of a position table: cosine similarity of its rows, pair by pair and at a lag."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from gptembed.probes import (
    cosine_similarity_matrix,
    lagged_similarity,
    position_probe,
    shift_probe,
    similarity_by_lag,
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
