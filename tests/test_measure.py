"""Measuring tools: peak memory of a call (without disturbing a caller's tracing), slopes, bytes."""

from __future__ import annotations

import threading
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
        ([2], [4], r"^need at least two distinct x values, got 1 \(xs holds 1 values\)$"),
        ([2, 2], [4, 5], r"^need at least two distinct x values, got 1 \(xs holds 2 values\)$"),
        ([], [], r"^need at least two distinct x values, got 0 \(xs holds 0 values\)$"),
        ([0, 2], [4, 5], r"xs and ys must all be > 0"),
        ([1, 2], [4, -5], r"xs and ys must all be > 0"),
        ([1, np.inf], [4, 5], r"^xs holds inf at index \(1,\): every value must be finite$"),
        ([1, 2], [np.nan, 5], r"^ys holds nan at index \(0,\): every value must be finite$"),
    ],
)
def test_loglog_slope_refuses_bad_input(xs: list, ys: list, message: str) -> None:
    """An infinity or a NaN once passed the `> 0` check and raised LinAlgError or gave nan."""
    with pytest.raises(ValueError, match=message):
        loglog_slope(xs, ys)


def test_loglog_slope_refuses_what_is_not_numbers() -> None:
    with pytest.raises(TypeError, match=r"^xs must hold real numbers, got dtype <U1$"):
        loglog_slope(["a", "b"], [1, 2])
    with pytest.raises(TypeError, match=r"^ys must hold real numbers, got dtype bool$"):
        loglog_slope([1, 2], [True, True])


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
    if n_bytes < 2**63:
        assert format_bytes(np.int64(n_bytes)) == text  # type: ignore[arg-type]


def test_format_bytes_of_any_size() -> None:
    """10**400 bytes once raised OverflowError: the division went through a float."""
    assert format_bytes(10**400) == f"{10**400 // 2**50} PiB"
    whole = 10**400 // 2**50  # even: 10**400 is a multiple of 2**51
    assert format_bytes(10**400 + 2**49) == f"{whole} PiB"  # a half rounds to even
    assert format_bytes(10**400 + 2**49 + 1) == f"{whole + 1} PiB"
    assert format_bytes(2**50 + 2**40, digits=30) == "1.0009765625 PiB"


def test_format_bytes_digits_and_bad_input() -> None:
    assert format_bytes(int(1.2345 * 2**20), digits=5) == "1.2345 MiB"
    with pytest.raises(ValueError, match=r"n_bytes must be an integer >= 0, got -1"):
        format_bytes(-1)
    with pytest.raises(TypeError, match=r"n_bytes must be an integer >= 0, got 1.5"):
        format_bytes(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"digits must be an integer >= 1, got 0"):
        format_bytes(10, digits=0)


MB_80 = 10_000_000  # float64s: 80 MB


@pytest.mark.parametrize(
    "inner",
    [lambda: peak_bytes(lambda: None), lambda: measure_attention_scores_peak(8)],
    ids=["peak_bytes", "measure_attention_scores_peak"],
)
def test_a_nested_measurement_keeps_the_outer_peak(inner: Callable[[], int]) -> None:
    """The inner call once reset tracemalloc's one peak, so the outer one saw only what came
    after it: 229 bytes for an 80 MB peak."""

    def outer() -> None:
        np.ones(MB_80).sum()  # 80 MB, freed before the inner measurement starts
        assert inner() >= 0

    assert 8 * MB_80 <= peak_bytes(outer) <= 8 * MB_80 + 256 * 1024


def test_a_nested_measurement_reports_its_own_peak() -> None:
    """The inner call counts only what it allocates, however much the outer holds."""
    held: list[np.ndarray] = []

    def outer() -> int:
        held.append(np.ones(MB_80))  # 80 MB, kept through the inner measurement
        return peak_bytes(lambda: np.ones(1_000_000).sum())

    inner = []
    outer_peak = peak_bytes(lambda: inner.append(outer()))
    assert 8_000_000 <= inner[0] <= 8_000_000 + 64 * 1024
    assert 8 * MB_80 + 8_000_000 <= outer_peak <= 8 * MB_80 + 8_000_000 + 256 * 1024


def test_a_measurement_that_raises_leaves_nothing_behind() -> None:
    def fails() -> None:
        np.ones(MB_80).sum()
        raise RuntimeError("inside")

    with pytest.raises(RuntimeError, match="inside"):
        peak_bytes(lambda: peak_bytes(fails))
    assert not tracemalloc.is_tracing()
    assert 8_000_000 <= peak_bytes(lambda: np.ones(1_000_000).sum()) <= 8_000_000 + 64 * 1024


def test_peak_bytes_refuses_what_it_cannot_call() -> None:
    with pytest.raises(TypeError, match=r"^fn must be a callable taking no arguments, got 3$"):
        peak_bytes(3)  # type: ignore[arg-type]
    assert not tracemalloc.is_tracing()


def test_threads_measure_one_at_a_time() -> None:
    """Two threads once reset each other's peak and subtracted each other's start: negative
    counts. Measurements are serialised, so each sees its own 8 MB."""
    results: list[int] = []

    def work() -> None:
        for _ in range(10):
            results.append(peak_bytes(lambda: np.ones(1_000_000).sum()))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 20
    assert all(8_000_000 <= peak <= 8_000_000 + 64 * 1024 for peak in results), results
