"""Profiles of a head by lag: the mean of each diagonal of a (..., T, T) array."""

from __future__ import annotations

import numpy as np
import pytest

from gptembed.attention_terms import attention_by_lag, mean_by_lag


def test_mean_by_lag_averages_each_diagonal_below_the_main_one() -> None:
    scores = np.arange(9.0).reshape(3, 3)  # lag 0: 0 4 8; lag 1: 3 7; lag 2: 6
    np.testing.assert_allclose(mean_by_lag(scores), [4.0, 5.0, 6.0])
    np.testing.assert_allclose(mean_by_lag(np.stack([scores, -scores])), [0.0, 0.0, 0.0])
    future = scores.copy()
    future[0, 2] = np.nan  # a key no query may see: not averaged, so allowed
    np.testing.assert_allclose(mean_by_lag(future), [4.0, 5.0, 6.0])
    future[2, 1] = np.inf
    with pytest.raises(ValueError, match="scores hold a NaN or inf at lag 1"):
        mean_by_lag(future)
    with pytest.raises(ValueError, match=r"shape \(\.\.\., T, T\) with T >= 1, got \(2, 3\)"):
        mean_by_lag(np.zeros((2, 3)))


def test_attention_by_lag_reads_the_diagonals() -> None:
    probs = np.zeros((2, 4, 4))
    probs[0] = np.eye(4)  # every query on itself
    probs[1, np.arange(1, 4), np.arange(3)] = 1.0  # every query but the first one back
    probs[1, 0, 0] = 1.0
    by_lag = attention_by_lag(probs, 2)
    np.testing.assert_allclose(by_lag, [[1.0, 0.0, 0.0], [0.25, 1.0, 0.0]])
    with pytest.raises(ValueError, match=r"max_lag must be in \[0, 3\], got 4"):
        attention_by_lag(probs, 4)
    with pytest.raises(ValueError, match=r"\(\.\.\., T, T\)"):
        attention_by_lag(np.zeros((3, 4)), 1)
    # no positions: said so, not "max_lag must be in [0, -1]"
    with pytest.raises(ValueError, match=r"hold no position: no lag to average"):
        attention_by_lag(np.zeros((2, 0, 0)), 0)
