"""The marker stream: its targets against a plain loop, its draws, and the inputs it refuses."""

from __future__ import annotations

import numpy as np
import pytest

from gptembed.marker_tasks import latest_marker_distance, make_latest_marker
from gptembed.optim import IGNORE


def test_the_target_is_the_latest_marker_so_far() -> None:
    inputs, targets = make_latest_marker(20, 30, vocab_size=9, n_markers=3, rate=0.2, seed=0)
    for ids, target in zip(inputs, targets, strict=True):
        latest = IGNORE
        for token, expected in zip(ids, target, strict=True):
            if token < 3:
                latest = token
            assert expected == latest


def test_markers_appear_at_the_rate_and_the_kinds_evenly() -> None:
    inputs, _ = make_latest_marker(400, 50, vocab_size=16, n_markers=4, rate=0.25, seed=1)
    markers = inputs[inputs < 4]
    assert markers.size / inputs.size == pytest.approx(0.25, abs=0.01)
    np.testing.assert_allclose(np.bincount(markers) / markers.size, 0.25, atol=0.01)
    assert inputs.min() >= 0 and inputs.max() < 16 and inputs.dtype == np.intp


def test_the_same_seed_gives_the_same_stream() -> None:
    first = make_latest_marker(3, 8, 6, n_markers=2, rate=0.5, seed=7)
    np.testing.assert_array_equal(first, make_latest_marker(3, 8, 6, n_markers=2, rate=0.5, seed=7))


def test_the_distance_to_the_latest_marker_against_a_plain_loop() -> None:
    inputs, _ = make_latest_marker(20, 30, vocab_size=9, n_markers=3, rate=0.2, seed=2)
    distances = latest_marker_distance(inputs, n_markers=3)
    assert distances.shape == inputs.shape and distances.dtype == np.intp
    for ids, row in zip(inputs, distances, strict=True):
        since = IGNORE
        for token, expected in zip(ids, row, strict=True):
            since = 0 if token < 3 else (since if since == IGNORE else since + 1)
            assert expected == since
    np.testing.assert_array_equal(latest_marker_distance(inputs[4], 3), distances[4])


def test_the_distance_points_at_the_target() -> None:
    inputs, targets = make_latest_marker(50, 40, vocab_size=8, n_markers=2, rate=0.1, seed=3)
    distances = latest_marker_distance(inputs, n_markers=2)
    np.testing.assert_array_equal(distances == IGNORE, targets == IGNORE)
    assert (distances >= 10).any(), "the check needs answers far back"
    back = np.arange(40) - np.maximum(distances, 0)  # (B, T): where each answer sits
    answers = np.take_along_axis(inputs, back, axis=1)
    np.testing.assert_array_equal(np.where(distances >= 0, answers, IGNORE), targets)


@pytest.mark.parametrize(
    ("inputs", "n_markers", "error", "message"),
    [
        ([[1.0, 2.0]], 1, TypeError, "inputs must be integers, got dtype float64"),
        ([[[1, 2]]], 1, ValueError, r"inputs must have shape \(T,\) or \(B, T\), got \(1, 1, 2\)"),
        ([3, -1], 1, ValueError, "ids must be >= 0, got -1"),
        ([3, 1], 0, ValueError, "n_markers must be an integer >= 1, got 0"),
        ([3, 1], 1.5, TypeError, "n_markers must be an integer"),
    ],
)
def test_latest_marker_distance_refuses_bad_input(
    inputs: list, n_markers: object, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        latest_marker_distance(inputs, n_markers)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"n_markers": 6}, ValueError, r"n_markers must be in \[1, 5\] \(some ids must be filler"),
        (
            {"n_markers": 0},
            ValueError,
            r"n_markers must be in \[1, 5\] \(some ids must be filler\), got 0",
        ),
        ({"n_markers": 2.0}, TypeError, "n_markers must be an integer"),
        ({"rate": 1.5}, ValueError, "rate must be a finite number > 0 and <= 1, got 1.5"),
        ({"rate": True}, TypeError, "rate must be a number > 0 and <= 1, got True"),
        ({"seq_len": 0}, ValueError, "seq_len must be an integer >= 1, got 0"),
        ({"seed": -1}, ValueError, r"^seed must be an integer >= 0, got -1$"),
        ({"seed": True}, TypeError, r"^seed must be an integer >= 0, got True of type bool$"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict, error: type, message: str) -> None:
    arguments = {"n_sequences": 2, "seq_len": 5, "vocab_size": 6, "n_markers": 2, "rate": 0.5}
    with pytest.raises(error, match=message):
        make_latest_marker(**{**arguments, **kwargs})
