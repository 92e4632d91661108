"""The lookback task: its targets, its checks, and the best an order-blind model can do."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gptembed.attention_model import AttentionConfig
from gptembed.lookback import make_lookback, order_blind_floor, order_blind_probs
from gptembed.optim import IGNORE


def test_lookback_targets_are_the_ids_offset_places_back() -> None:
    inputs, targets = make_lookback(4, 9, vocab_size=7, offset=3, seed=1)
    assert inputs.shape == targets.shape == (4, 9)
    assert (targets[:, :3] == IGNORE).all()
    np.testing.assert_array_equal(targets[:, 3:], inputs[:, :-3])
    assert inputs.min() >= 0 and inputs.max() < 7


def test_lookback_refuses_an_offset_outside_the_sequence() -> None:
    with pytest.raises(ValueError, match=r"offset must be in \[1, 4\], got 5"):
        make_lookback(2, 5, vocab_size=3, offset=5)
    with pytest.raises(ValueError, match=r"offset must be in \[1, 5\], got 6"):
        AttentionConfig(seq_len=6, offset=6)


def test_order_blind_floor_by_hand_and_by_simulation() -> None:
    # V = 2, T = 3, offset 1: at t = 1 the one earlier id is the target (loss 0); at t = 2 the
    # other earlier id matches the target with probability 1/2 (loss 0) else loss ln 2.
    assert order_blind_floor(2, 3, 1) == pytest.approx(0.5 * (0.0 + 0.5 * math.log(2)))
    # Against a simulation of the best order-blind guess: (count among earlier ids) / t.
    rng = np.random.default_rng(0)
    inputs, targets = make_lookback(20_000, 8, vocab_size=4, offset=2, seed=rng)
    losses = []
    for t in range(2, 8):
        earlier = inputs[:, :t]
        count = (earlier == targets[:, t : t + 1]).sum(axis=1)
        losses.append(np.mean(np.log(t) - np.log(count)))
    assert order_blind_floor(4, 8, 2) == pytest.approx(np.mean(losses), abs=0.01)


def test_order_blind_probs_by_hand_and_against_the_floor() -> None:
    # ids 2 0 2 1 with offset 1: at t = 1 only id 2 came before; at t = 3, ids 2 0 2.
    probs = order_blind_probs([[2, 0, 2, 1]], vocab_size=3, offset=1)
    assert probs.shape == (1, 4, 3)
    np.testing.assert_allclose(probs[0, 0], [1 / 3] * 3)  # no target: uniform
    np.testing.assert_allclose(probs[0, 1], [0, 0, 1])
    np.testing.assert_allclose(probs[0, 3], [1 / 3, 0, 2 / 3])
    assert probs[0, 3].argmax() == 2  # the best order-blind guess: the most frequent earlier id
    # Its mean loss on many sequences is the expected loss order_blind_floor computes.
    inputs, targets = make_lookback(20_000, 8, vocab_size=4, offset=2, seed=0)
    probs = order_blind_probs(inputs, 4, 2)
    scored = targets != IGNORE
    target_probs = np.take_along_axis(probs, targets.clip(0)[..., None], axis=-1)[..., 0]
    loss = -np.log(target_probs[scored]).mean()
    assert loss == pytest.approx(order_blind_floor(4, 8, 2), abs=0.01)


def test_order_blind_probs_refuse_bad_input() -> None:
    with pytest.raises(ValueError, match=r"inputs must have shape \(B, T\), got \(4,\)"):
        order_blind_probs([0, 1, 2, 3], 4, 1)
    with pytest.raises(ValueError, match=r"id 4 at index \(0, 2\) is out of range"):
        order_blind_probs([[0, 1, 4]], 4, 1)
    with pytest.raises(ValueError, match=r"offset must be in \[1, 2\], got 3"):
        order_blind_probs([[0, 1, 2]], 4, 3)
    with pytest.raises(TypeError, match="inputs must be integers"):
        order_blind_probs([[0.5, 1.0]], 4, 1)


def test_make_lookback_checks_its_seed() -> None:
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, got -1$"):
        make_lookback(2, 5, 3, 1, seed=-1)
