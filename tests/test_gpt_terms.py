"""The small GPT's first scores split into token and position terms through LayerNorm."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from gptembed.gpt import forward
from gptembed.gpt_terms import score_terms
from gptembed.positions import SCHEMES
from tests.small_gpts import TINY, batch, perturbed


def test_score_terms_with_each_tokens_own_scale_sum_to_the_first_blocks_scores() -> None:
    model = perturbed()
    inputs, _ = batch()
    for start in (0, 2):
        ids = inputs[:, : TINY.seq_len - start]
        terms = score_terms(model, ids, start_pos=start)
        block = forward(model, ids, start_pos=start).blocks[0]
        scores = block.q @ block.k.swapaxes(-1, -2) / math.sqrt(model.head_dim)  # (B, nh, T, T)
        assert len(terms) == TINY.n_heads
        for head, split in enumerate(terms):
            np.testing.assert_allclose(split.total(), scores[:, head], rtol=1e-10, atol=1e-10)


def test_a_fixed_scale_makes_the_position_term_the_same_for_every_sequence() -> None:
    model = perturbed()
    inputs, _ = batch()
    own = score_terms(model, inputs)[0].position_position
    assert not np.allclose(own[0], own[1]), "each token's own scale differs between sequences"
    fixed = score_terms(model, inputs, fixed_scale=1.3)[0]
    np.testing.assert_allclose(fixed.position_position[0], fixed.position_position[1])
    # With one scale for everything the split no longer sums to the scores exactly.
    block = forward(model, inputs).blocks[0]
    scores = block.q @ block.k.swapaxes(-1, -2) / math.sqrt(model.head_dim)
    assert not np.allclose(fixed.total(), scores[:, 0])


@pytest.mark.parametrize("scale", [0, -1.0, float("nan"), float("inf")])
def test_score_terms_refuse_a_fixed_scale_that_is_not_a_positive_number(scale: float) -> None:
    inputs, _ = batch()
    with pytest.raises(ValueError, match="fixed_scale must be a finite number > 0"):
        score_terms(perturbed(), inputs, fixed_scale=scale)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_terms_sum_to_the_scores_for_every_scheme_they_split(scheme: str) -> None:
    """Rotary rotates the queries and keys after the projection, ALiBi adds a bias to the
    scores: the four terms missed their scores (by 3.08 and 0.44) while the docstring said they
    added up. Those two are refused; for the others the terms sum to the scores."""
    model = perturbed(dataclasses.replace(TINY, scheme=scheme))
    inputs, _ = batch()
    if scheme in ("rotary", "alibi"):
        with pytest.raises(ValueError, match=f"score_terms splits .* got {scheme!r}"):
            score_terms(model, inputs)
        return
    block = forward(model, inputs).blocks[0]
    scores = block.q @ block.k.swapaxes(-1, -2) / math.sqrt(model.head_dim)
    for head, split in enumerate(score_terms(model, inputs)):
        np.testing.assert_allclose(split.total(), scores[:, head], rtol=1e-10, atol=1e-10)
