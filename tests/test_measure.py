"""Measuring tools: peak memory of a call (without disturbing a caller's tracing), slopes, bytes."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from gptembed import format_bytes, loglog_slope, measure_attention_scores_peak, peak_bytes


def test_peak_bytes_counts_a_temporary_array() -> None:
    n = 1_000_000
    peak = peak_bytes(lambda: np.ones(n).sum())
    assert 8 * n <= peak <= 8 * n + 64 * 1024
    assert not tracemalloc.is_tracing()


@pytest.fixture
def callers_tracing() -> Iterator[np.ndarray]:
    """The caller traces with its own frame depth and holds a traced array."""
    tracemalloc.start(5)
    try:
        yield np.ones(100_000)
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "measure",
    [
        lambda: peak_bytes(lambda: np.ones(50_000).sum()),
        lambda: measure_attention_scores_peak(64),
    ],
    ids=["peak_bytes", "measure_attention_scores_peak"],
)
def test_a_callers_tracing_goes_on_with_its_traces(
    callers_tracing: np.ndarray, measure: Callable[[], int]
) -> None:
    """Both once stopped tracemalloc at the end, ending the caller's tracing and its traces."""
    assert measure() > 0
    assert tracemalloc.is_tracing()
    assert tracemalloc.get_traceback_limit() == 5
    assert tracemalloc.get_object_traceback(callers_tracing) is not None
    assert measure() > 0  # and again


def test_loglog_slope_recovers_the_exponent() -> None:
    n = np.array([256, 512, 1024, 4096])
    assert loglog_slope(n, 4 * n**2) == pytest.approx(2.0, abs=1e-12)
    assert loglog_slope(n, 7.0 * n) == pytest.approx(1.0, abs=1e-12)
    assert loglog_slope([1, 10], [5, 5]) == pytest.approx(0.0, abs=1e-12)


def test_loglog_slope_of_measured_scores_is_two() -> None:
    lengths = [1024, 2048, 4096]
    naive = [measure_attention_scores_peak(n, naive=True) for n in lengths]
    assert loglog_slope(lengths, naive) == pytest.approx(2.0, abs=0.01)


@pytest.mark.parametrize(
    ("xs", "ys", "message"),
    [
        ([1, 2, 3], [1, 2], r"xs and ys must be 1-D of one length, got shapes \(3,\) and \(2,\)"),
        ([2], [4], r"need at least two distinct x values, got 1 points"),
        ([2, 2], [4, 5], r"need at least two distinct x values"),
        ([0, 2], [4, 5], r"xs and ys must all be > 0"),
        ([1, 2], [4, -5], r"xs and ys must all be > 0"),
    ],
)
def test_loglog_slope_refuses_bad_input(xs: list, ys: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        loglog_slope(xs, ys)


@pytest.mark.parametrize(
    ("n_bytes", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (48 * 2**20, "48 MiB"),
        (576 * 2**20, "576 MiB"),
        (9 * 2**28, "2.25 GiB"),
        (3 * 2**30, "3 GiB"),
        (1152 * 2**20, "1.12 GiB"),
        (9 * 2**40, "9 TiB"),
        (2**70, "1048576 PiB"),
    ],
)
def test_format_bytes(n_bytes: int, text: str) -> None:
    assert format_bytes(n_bytes) == text


def test_format_bytes_digits_and_bad_input() -> None:
    assert format_bytes(int(1.2345 * 2**20), digits=5) == "1.2345 MiB"
    with pytest.raises(ValueError, match=r"n_bytes must be an integer >= 0, got -1"):
        format_bytes(-1)
    with pytest.raises(TypeError, match=r"n_bytes must be an integer >= 0, got 1.5"):
        format_bytes(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"digits must be an integer >= 1, got 0"):
        format_bytes(10, digits=0)
