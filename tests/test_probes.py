"""Probes of a position table: cosine similarity of its rows, pair by pair and at a lag."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from gptembed.probes import cosine_similarity_matrix, lagged_similarity


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
        (lambda: lagged_similarity(np.eye(3), 0), r"lag must be an integer >= 1, got 0"),
    ],
)
def test_bad_input_names_the_value_and_the_range(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
