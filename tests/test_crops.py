"""Scoring a stream through crops of its last ids, as nanoGPT's generate reads one."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from gptembed import crops
from gptembed.crops import crop_losses, cropped_stream_losses
from gptembed.optim import cross_entropy


def test_each_step_sees_the_last_context_ids_from_position_zero() -> None:
    seen: list[list[int]] = []

    def next_logits(ids: np.ndarray) -> np.ndarray:
        seen.append(ids[0].tolist())
        logits = np.zeros((*ids.shape, 4))
        logits[..., 0] = ids.shape[1]  # depends on the context length only
        return logits

    inputs = np.array([[3, 1, 2, 0, 1]])
    targets = np.array([[-1, 0, 1, 2, 3]])
    losses = cropped_stream_losses(next_logits, inputs, targets, context=3)
    assert seen == [[3, 1], [3, 1, 2], [1, 2, 0], [2, 0, 1]]  # step 0 has no target
    assert np.isnan(losses[0])
    expected = cross_entropy(np.array([[2.0, 0, 0, 0]]), np.array([0]))[0]
    assert losses[1] == pytest.approx(expected)


def test_stream_losses_refuse_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match=r"one shape, got \(1, 3\) and \(1, 2\)"):
        cropped_stream_losses(lambda ids: ids, np.zeros((1, 3)), np.zeros((1, 2)), 2)
    with pytest.raises(ValueError, match="context must be an integer >= 1, got 0"):
        cropped_stream_losses(lambda ids: ids, np.zeros((1, 3)), np.zeros((1, 3)), 0)


def _uniform(ids: np.ndarray) -> np.ndarray:
    return np.zeros((*ids.shape, 4))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: cropped_stream_losses(
                _uniform, np.zeros((1, 3), int), np.full((1, 3), np.nan), 2
            ),
            TypeError,
            r"^targets must be integers, got dtype float64$",
        ),
        (
            lambda: cropped_stream_losses(3, np.zeros((1, 3), int), np.zeros((1, 3), int), 2),
            TypeError,
            r"^next_logits must be a callable taking ids \(B, t\), got 3$",
        ),
    ],
)
def test_stream_losses_refuse_what_they_cannot_score(
    call: Callable[[], object], error: type, message: str
) -> None:
    """NaN targets once passed as "not scored" (NaN >= 0 is False): a stream of nan losses."""
    with pytest.raises(error, match=message):
        call()


def test_crop_losses_score_each_position_from_its_last_ids_alone() -> None:
    """Each crop is what cropped_stream_losses gives that step once its crop is full."""
    rng = np.random.default_rng(0)
    table = rng.standard_normal((5, 3, 5))  # logits depend on the crop's ids and their order

    def next_logits(ids: np.ndarray) -> np.ndarray:
        return table[ids, np.arange(ids.shape[1]) % 3]

    inputs = rng.integers(5, size=(2, 9))
    targets = rng.integers(5, size=(2, 9))
    cropped = crop_losses(next_logits, inputs, targets, keep=3, at=[2, 5, 8])
    assert cropped.shape == (2, 3)
    stream = cropped_stream_losses(next_logits, inputs, targets, context=3)
    np.testing.assert_allclose(cropped.mean(axis=0), stream[[2, 5, 8]], rtol=1e-12)
    for at, message in [([1], r"at must hold positions in \[2, 9\)"), ([9], r"got 9 to 9")]:
        with pytest.raises(ValueError, match=message):
            crop_losses(next_logits, inputs, targets, keep=3, at=at)
    with pytest.raises(TypeError, match="at must be integers"):
        crop_losses(next_logits, inputs, targets, keep=3, at=[2.0])
    # a crop longer than the rows is named as such, not as an empty range of positions
    with pytest.raises(ValueError, match=r"keep must be at most the 9 ids of each row, got 10"):
        crop_losses(next_logits, inputs, targets, keep=10, at=[8])


def test_crop_losses_send_the_crops_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """All crops in one call held (B * len(at), keep, V) logits at once, keep - 1 of every keep
    rows unread: 110 MB a run for chapter 10. Batches of at most _CROP_IDS ids (here 3 crops of
    8) give each crop's loss as one call does."""
    monkeypatch.setattr(crops, "_CROP_IDS", 24)
    rng = np.random.default_rng(1)
    table = rng.standard_normal((5, 8, 5))
    sizes: list[int] = []

    def next_logits(ids: np.ndarray) -> np.ndarray:
        sizes.append(ids.size)
        return table[ids, np.arange(ids.shape[1])]

    keep = 8
    inputs = rng.integers(5, size=(3, 20))
    targets = rng.integers(5, size=inputs.shape)
    at = np.arange(keep - 1, inputs.shape[1])
    cropped = crop_losses(next_logits, inputs, targets, keep=keep, at=at)
    assert max(sizes) == 24  # three crops a call
    assert sum(sizes) == len(inputs) * len(at) * keep  # each crop once
    last = table[inputs[:, at], keep - 1]  # each crop's last logits, (3, len(at), 5)
    expected = -np.take_along_axis(
        last - np.log(np.exp(last).sum(axis=-1, keepdims=True)), targets[:, at, None], axis=-1
    )[..., 0]
    np.testing.assert_allclose(cropped, expected, rtol=1e-12)
