"""The small GPT: every gradient against finite differences, causality, the tied head, the four
score terms through LayerNorm, the learning-rate schedule and determinism."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from gptembed import gpt
from gptembed.corpus import held_out_stream, random_passages, train_stream
from gptembed.embedding import GPTStyleEmbedding
from gptembed.gpt import (
    GPT,
    GPTConfig,
    at_length,
    evaluate,
    forward,
    init_model,
    load,
    logits,
    loss_and_grads,
    losses_of_logits,
    save,
    score_terms,
    stored_run,
    stored_scheme_run,
    token_losses,
    train,
)
from gptembed.optim import IGNORE, cross_entropy
from gptembed.positions import SCHEMES, sinusoidal_table
from tests.gradcheck import numerical_grad
from tests.stored_files import load_tool, savez_that_fails

TINY = GPTConfig(
    vocab_size=7, seq_len=5, n_layers=2, n_heads=2, embed_dim=8, dtype="float64", seed=3
)
ONE_BLOCK = GPTConfig(vocab_size=7, seq_len=8, n_layers=1, n_heads=2, embed_dim=8)
"""One block of two heads, in float32 as the stored runs are: the model the tests train."""


def _perturbed(config: GPTConfig = TINY) -> GPT:
    """A model moved away from its initial weights (biases 0, gains 1, tiny matrices), so every
    gradient is far from zero and every path through the model carries signal."""
    model = init_model(config)
    rng = np.random.default_rng(11)
    for array in model.parameters().values():
        array += rng.standard_normal(array.shape) * 0.5
    return model


def _batch(config: GPTConfig = TINY, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ids = rng.integers(config.vocab_size, size=(3, config.seq_len + 1))
    return ids[:, :-1], ids[:, 1:]


SCHEME_PATH = ("token_embeddings", "position_embeddings", "w_attn", "b_attn")
"""The arrays whose gradients pass through where a scheme acts (the scores of both blocks, which
``w_attn`` stacks, and the inputs): the rest are checked with the learned table, as a scheme
changes none of their own backward code."""


@pytest.mark.parametrize(
    ("scheme", "name"),
    [("learned", name) for name in init_model(TINY).parameters()]
    + [(scheme, name) for scheme in SCHEMES[1:] for name in SCHEME_PATH],
)
def test_every_gradient_matches_finite_differences(scheme: str, name: str) -> None:
    """Every array with the learned table; for the other schemes, every array whose gradient
    passes through a rotation or a bias, the position table included (those schemes freeze it in
    training, but it is still an input the loss depends on)."""
    model = _perturbed(dataclasses.replace(TINY, scheme=scheme))
    inputs, targets = _batch()
    _, grads = loss_and_grads(model, inputs, targets)
    assert set(grads) == set(model.parameters())
    # the loss alone, from the forward pass (the mean that loss_and_grads returns)
    numeric = numerical_grad(
        lambda: token_losses(model, inputs, targets).mean(), model.parameters()[name]
    )
    assert np.abs(numeric).max() > 1e-3, "the check needs gradients that are not ~0"
    assert grads[name].shape == model.parameters()[name].shape
    np.testing.assert_allclose(grads[name], numeric, rtol=1e-5, atol=1e-8)


def test_ignored_targets_are_not_scored_and_their_gradient_is_the_scored_mean() -> None:
    """Scoring only the last position (chapter 9's control): the loss is the mean over the
    scored predictions, and a gradient matches finite differences of that loss."""
    model = _perturbed()
    inputs, targets = _batch()
    last_only = np.full_like(targets, IGNORE)
    last_only[:, -1] = targets[:, -1]
    loss, grads = loss_and_grads(model, inputs, last_only)
    assert loss == pytest.approx(token_losses(model, inputs, targets)[:, -1].mean(), rel=1e-6)
    table = model.parameters()["position_embeddings"]
    numeric = numerical_grad(lambda: loss_and_grads(model, inputs, last_only)[0], table)
    np.testing.assert_allclose(grads["position_embeddings"], numeric, rtol=1e-5, atol=1e-8)
    with pytest.raises(ValueError, match=r"every target is IGNORE \(-1\): there is nothing"):
        loss_and_grads(model, inputs, np.full_like(targets, IGNORE))
    with pytest.raises(ValueError, match=r"target id -2 at index \(0, 0\) is out of range"):
        loss_and_grads(model, inputs, np.where(last_only == IGNORE, -2, last_only))


def test_early_rows_get_more_gradient_unless_every_row_serves_one_scored_query() -> None:
    """Chapter 9's control: at initialisation the first rows of the table get a larger gradient
    than the last (more queries read them); in one block scored at its last position only, where
    every earlier row is a key for exactly that one query, the rows get equal gradients."""
    config = GPTConfig(n_layers=1, dtype="float64", seed=3)
    inputs, targets = random_passages(train_stream(), 32, config.seq_len, seed=0)
    last_only = np.full_like(targets, IGNORE)
    last_only[:, -1] = targets[:, -1]

    def row_norms(scored: np.ndarray) -> np.ndarray:
        grads = loss_and_grads(init_model(config), inputs, scored)[1]
        return np.linalg.norm(grads["position_embeddings"], axis=1)

    every = row_norms(targets)
    assert every[:10].mean() > 1.5 * every[-10:].mean()
    one = row_norms(last_only)
    assert one[:10].mean() == pytest.approx(one[-11:-1].mean(), rel=0.15)
    assert one[-1] > 20 * one[:-1].max()  # the scored query's own row


def test_the_forward_pass_by_hand_one_block_one_head() -> None:
    """GPT-2's block written out plainly, on a model of one block and one head."""
    config = GPTConfig(vocab_size=6, seq_len=4, n_layers=1, n_heads=1, embed_dim=4, dtype="float64")
    m = _perturbed(config)
    ids = np.array([[1, 5, 0, 2]])
    wte, wpe = m.embedding.token_embeddings, m.embedding.position_embeddings

    def ln(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        return g * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) + b

    x = wte[ids[0]] + wpe[:4]
    q, k, v = np.split(ln(x, m.ln1_gain[0], m.ln1_bias[0]) @ m.w_attn[0] + m.b_attn[0], 3, -1)
    s = q @ k.T / 2.0 + np.triu(np.full((4, 4), -np.inf), 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    x = x + (p @ v) @ m.w_attn_proj[0] + m.b_attn_proj[0]
    f = ln(x, m.ln2_gain[0], m.ln2_bias[0]) @ m.w_fc[0] + m.b_fc[0]
    gelu = 0.5 * f * (1 + np.tanh(math.sqrt(2 / math.pi) * (f + 0.044715 * f**3)))
    x = x + gelu @ m.w_mlp_proj[0] + m.b_mlp_proj[0]
    logits = ln(x, m.lnf_gain, m.lnf_bias) @ wte.T
    np.testing.assert_allclose(forward(m, ids).logits[0], logits, rtol=1e-12, atol=1e-12)


def test_the_model_is_causal() -> None:
    model = _perturbed()
    inputs, _ = _batch()
    f = forward(model, inputs)
    for block in f.blocks:
        assert (np.triu(block.probs, k=1) == 0).all()
        np.testing.assert_allclose(block.probs.sum(axis=-1), 1.0)
    changed = inputs.copy()
    changed[:, -1] = (changed[:, -1] + 1) % TINY.vocab_size
    np.testing.assert_allclose(
        forward(model, changed).logits[:, :-1], f.logits[:, :-1], rtol=1e-12, atol=1e-12
    )


def test_the_output_head_is_the_token_table() -> None:
    model = _perturbed()
    inputs, _ = _batch()
    f = forward(model, inputs)
    np.testing.assert_allclose(f.logits, f.final @ model.embedding.token_embeddings.T)
    assert "w_head" not in model.parameters() and len(model.parameters()) == 16


def test_token_losses_are_the_cross_entropy_of_each_prediction() -> None:
    model = _perturbed()
    inputs, targets = _batch()
    per_token = token_losses(model, inputs, targets)
    assert per_token.shape == inputs.shape
    np.testing.assert_allclose(per_token.mean(), loss_and_grads(model, inputs, targets)[0])
    logits = forward(model, inputs).logits
    np.testing.assert_allclose(per_token[1, 2], cross_entropy(logits[1, 2], targets[1, 2])[0])
    assert evaluate(model, inputs, targets).loss == pytest.approx(per_token.mean())
    with pytest.raises(ValueError, match=r"targets must have the inputs' shape \(3, 5\)"):
        token_losses(model, inputs, targets[:, 1:])
    with pytest.raises(ValueError, match=r"target id 7 at index \(0, 0\) is out of range"):
        token_losses(model, inputs, np.where(np.arange(5) == 0, 7, targets))
    np.testing.assert_array_equal(losses_of_logits(logits, targets), per_token)


@pytest.mark.parametrize(
    ("kwargs", "per_row_positions"),
    [({}, False), ({"start_pos": 2}, False), ({"window": 3}, False), ({}, True)],
)
def test_windows_scored_a_few_at_a_time_give_what_one_piece_gives(
    monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, int], per_row_positions: bool
) -> None:
    """logits and token_losses run the windows in chunks of EVAL_TOKENS positions (here 2
    windows of 3, and a last chunk of 1): the logits are those of the whole batch in one
    forward pass, each window with its own position ids where it has them (to the last bit or
    so: BLAS may order a product's sums by the number of rows)."""
    model = _perturbed()
    ids = np.random.default_rng(3).integers(TINY.vocab_size, size=(5, 3))
    if per_row_positions:
        kwargs = {"position_ids": np.arange(15).reshape(5, 3) % TINY.seq_len}
    whole = forward(model, ids, **kwargs).logits
    monkeypatch.setattr(gpt, "EVAL_TOKENS", 7)
    np.testing.assert_allclose(logits(model, ids, **kwargs), whole, rtol=1e-13, atol=1e-14)
    targets = np.roll(ids, -1, axis=1)
    np.testing.assert_allclose(
        token_losses(model, ids, targets, **kwargs),
        losses_of_logits(whole, targets),
        rtol=1e-13,
    )
    assert logits(model, ids[:0]).shape == (0, 3, TINY.vocab_size)


@pytest.mark.parametrize(
    ("scheme", "kwargs"),
    [
        (scheme, kwargs)
        for scheme in SCHEMES
        for kwargs in ({}, {"window": 3}, {"window": 2, "sinks": 1})
        if scheme not in ("learned", "sinusoidal") or "sinks" not in kwargs  # absolute: no sinks
    ],
)
def test_scoring_a_few_queries_at_a_time_gives_the_full_weights_logits(
    monkeypatch: pytest.MonkeyPatch, scheme: str, kwargs: dict[str, int]
) -> None:
    """logits and token_losses work out attention QUERY_BLOCK queries at a time, each block on
    the keys up to its last query only (here blocks of 3 queries on 8 positions, the last one
    short): the logits of forward's full (T, T) weights, for every scheme, window and sinks (to
    the last bits: a softmax over fewer keys sums in another order)."""
    model = _perturbed(dataclasses.replace(ONE_BLOCK, n_layers=2, scheme=scheme, dtype="float64"))
    ids = np.random.default_rng(4).integers(ONE_BLOCK.vocab_size, size=(3, 8))
    whole = forward(model, ids, **kwargs).logits
    monkeypatch.setattr(gpt, "QUERY_BLOCK", 3)
    np.testing.assert_allclose(logits(model, ids, **kwargs), whole, rtol=1e-12, atol=1e-13)


def test_start_pos_moves_the_rows_read() -> None:
    config = dataclasses.replace(ONE_BLOCK, dtype="float64")
    model = _perturbed(config)
    inputs, _ = _batch(config)
    shifted = forward(model, inputs[:, :5], start_pos=3).logits
    by_ids = forward(model, inputs[:, :5], position_ids=np.arange(3, 8)).logits
    np.testing.assert_array_equal(shifted, by_ids)
    assert not np.allclose(shifted, forward(model, inputs[:, :5]).logits)
    with pytest.raises(ValueError, match="exceeds max_seq_len 8"):
        forward(model, inputs[:, :5], start_pos=4)
    with pytest.raises(ValueError, match=r"token_ids must have shape \(B, T\)"):
        forward(model, inputs[0])


def test_score_terms_with_each_tokens_own_scale_sum_to_the_first_blocks_scores() -> None:
    model = _perturbed()
    inputs, _ = _batch()
    for start in (0, 2):
        ids = inputs[:, : TINY.seq_len - start]
        terms = score_terms(model, ids, start_pos=start)
        block = forward(model, ids, start_pos=start).blocks[0]
        scores = block.q @ block.k.swapaxes(-1, -2) / math.sqrt(model.head_dim)  # (B, nh, T, T)
        assert len(terms) == TINY.n_heads
        for head, split in enumerate(terms):
            np.testing.assert_allclose(split.total(), scores[:, head], rtol=1e-10, atol=1e-10)


def test_a_fixed_scale_makes_the_position_term_the_same_for_every_sequence() -> None:
    model = _perturbed()
    inputs, _ = _batch()
    own = score_terms(model, inputs)[0].position_position
    assert not np.allclose(own[0], own[1]), "each token's own scale differs between sequences"
    fixed = score_terms(model, inputs, fixed_scale=1.3)[0]
    np.testing.assert_allclose(fixed.position_position[0], fixed.position_position[1])
    # With one scale for everything the split no longer sums to the scores exactly.
    block = forward(model, inputs).blocks[0]
    scores = block.q @ block.k.swapaxes(-1, -2) / math.sqrt(model.head_dim)
    assert not np.allclose(fixed.total(), scores[:, 0])


def test_the_schedule_warms_up_then_decays_to_a_tenth() -> None:
    config = GPTConfig(steps=1000, warmup=100, learning_rate=1e-3)
    rates = [config.learning_rate_at(step) for step in range(1000)]
    assert rates[0] == pytest.approx(1e-5) and rates[99] == pytest.approx(1e-3)
    assert rates[100] == pytest.approx(1e-3)
    assert rates[-1] == pytest.approx(1e-4)
    assert all(a >= b for a, b in itertools.pairwise(rates[100:]))
    assert GPTConfig(steps=10, warmup=0).learning_rate_at(0) == pytest.approx(3e-3)


def test_config_refuses_bad_values() -> None:
    with pytest.raises(ValueError, match="embed_dim must be a multiple of n_heads"):
        GPTConfig(embed_dim=10, n_heads=4)
    with pytest.raises(TypeError, match="n_layers must be an integer"):
        GPTConfig(n_layers=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="floating dtype"):
        GPTConfig(dtype="int32")


def test_config_stores_python_numbers_and_the_dtype_by_name(tmp_path: Path) -> None:
    """Sizes were once checked but kept as the numpy scalars given, which save() could not write
    into its JSON header."""
    config = dataclasses.replace(
        ONE_BLOCK, seq_len=np.int64(8), warmup=np.int32(2), dtype=np.dtype(np.float64)
    )
    assert type(config.seq_len) is int and type(config.warmup) is int
    assert config == dataclasses.replace(ONE_BLOCK, warmup=2, dtype="float64")
    run = gpt.StoredRun(init_model(config), config, np.zeros(0), np.zeros(0, int), np.zeros(0), {})
    save(tmp_path / "run.npz", run)
    assert load(tmp_path / "run.npz").config == config


def test_training_is_deterministic_and_learns() -> None:
    config = dataclasses.replace(ONE_BLOCK, steps=60, warmup=5, learning_rate=0.03)
    stream = np.tile(np.arange(7), 40)  # 0 1 2 ... 6 0 1 ...: the next id is the id plus one
    first, second = train(config, stream), train(config, stream)
    np.testing.assert_array_equal(first.losses, second.losses)
    for name, array in first.model.parameters().items():
        np.testing.assert_array_equal(array, second.model.parameters()[name], err_msg=name)
        assert array.dtype == np.float32, name
    assert first.losses[0] == pytest.approx(math.log(7), abs=0.05)
    assert first.losses[-5:].mean() < 0.2
    for scheme in ("rotary", "alibi", "none"):  # nothing added to the inputs: zeros, kept
        frozen = train(dataclasses.replace(config, scheme=scheme, steps=3), stream)
        assert (frozen.model.embedding.position_embeddings == 0).all(), scheme
    fixed = train(dataclasses.replace(config, scheme="sinusoidal", steps=3), stream).model
    table = fixed.embedding.position_embeddings
    np.testing.assert_array_equal(table, (0.02 * sinusoidal_table(8, 8)).astype(np.float32))
    with pytest.raises(ValueError, match="use_positions=False is scheme='none' here"):
        dataclasses.replace(config, use_positions=False)


def test_relative_schemes_see_only_distances() -> None:
    """Rotary, ALiBi and no positions give the same logits wherever a sequence starts; the two
    tables do not."""
    inputs, _ = _batch()
    for scheme in SCHEMES:
        model = at_length(_perturbed(dataclasses.replace(TINY, scheme=scheme)), 12)
        moved = logits(model, inputs, 7)
        same = np.allclose(moved, logits(model, inputs), rtol=0, atol=1e-12)
        assert same == (scheme in ("rotary", "alibi", "none")), scheme


@pytest.mark.parametrize("scheme", ["rotary", "alibi", "none"])
def test_a_window_is_the_last_keys_and_its_sinks_sit_at_cache_positions(scheme: str) -> None:
    """In one block, a window of W keys at query i gives the logits of the W ids ending at i
    run on their own; with sinks, those of the first ids followed by those W ids: the cache a
    streaming model holds, at the positions StreamingLLM gives it."""
    config = dataclasses.replace(TINY, n_layers=1, seq_len=12, scheme=scheme)
    model = _perturbed(config)
    model.embedding.position_embeddings[:] = 0.0  # as the scheme keeps it (_perturbed moved it)
    ids = np.random.default_rng(2).integers(config.vocab_size, size=(2, 12))
    np.testing.assert_allclose(forward(model, ids, window=12).logits, logits(model, ids))
    windowed = forward(model, ids, window=4).logits
    kept = forward(model, ids, window=4, sinks=2).logits
    for i in range(6, 12):
        alone = logits(model, ids[:, i - 3 : i + 1])[:, -1]
        np.testing.assert_allclose(windowed[:, i], alone, rtol=1e-10, err_msg=str(i))
        cache = np.concatenate([ids[:, :2], ids[:, i - 3 : i + 1]], axis=1)
        np.testing.assert_allclose(kept[:, i], logits(model, cache)[:, -1], rtol=1e-10)


def test_window_and_sinks_refuse_what_a_cache_cannot_do() -> None:
    model = init_model(TINY)
    ids = np.zeros((1, 5), dtype=int)
    for kwargs, message in [
        ({"sinks": 1}, r"sinks=1 needs a window"),
        ({"window": 0}, r"window must be"),
        ({"window": 2, "sinks": -1}, r"sinks must be"),
        (
            {"window": 2, "sinks": 1},
            r"sinks need a relative scheme \(rotary, alibi or none\), got 'learned'",
        ),
        ({"window": 2, "start_pos": 1}, r"pass neither start_pos nor position_ids"),
    ]:
        with pytest.raises(ValueError, match=message):
            forward(model, ids, **kwargs)


def test_at_length_grows_each_schemes_table_by_its_rule() -> None:
    for scheme in SCHEMES:
        model = init_model(dataclasses.replace(TINY, scheme=scheme))
        longer = at_length(model, 9, "tile")
        table = longer.embedding.position_embeddings
        assert table.shape == (9, 8) and longer.w_attn is model.w_attn
        if scheme == "learned":
            np.testing.assert_array_equal(table[5:], table[:4])
        elif scheme == "sinusoidal":
            np.testing.assert_array_equal(table, 0.02 * sinusoidal_table(9, 8))
        else:
            assert not table.any()
    with pytest.raises(ValueError, match=r"max_seq_len must be an integer >= 5, got 3"):
        at_length(init_model(TINY), 3)


def test_training_continues_from_a_given_model_even_one_with_a_grown_table() -> None:
    """Chapter 9 fine-tunes its model after growing the table: train copies the given model, so
    it is left as it was, and starts from its values."""
    config = dataclasses.replace(ONE_BLOCK, steps=20, warmup=2, learning_rate=0.03)
    stream = np.tile(np.arange(7), 40)
    first = train(config, stream).model
    before = {name: array.copy() for name, array in first.parameters().items()}
    longer = dataclasses.replace(config, seq_len=16, seed=1)
    grown = dataclasses.replace(first, embedding=first.embedding.extended(16, method="tile"))
    more = train(longer, stream, grown)
    for name, array in first.parameters().items():
        np.testing.assert_array_equal(array, before[name], err_msg=name)
    assert more.model.embedding.max_seq_len == 16
    assert more.losses[0] < train(longer, stream).losses[0]  # it started from what it knew
    with pytest.raises(ValueError, match=r"position_embeddings \(8, 8\) \(the config's: \(16"):
        train(longer, stream, first)


# The small GPT stored in the package: it loads, it is the run its stored curve says, and the
# first steps of ``tools/train_lm.py`` reproduce that curve.


DATA = Path(gpt.__file__).parent / "data"
SEEDS = (0, 1, 2)


def test_the_stored_runs_are_small() -> None:
    runs = sorted(DATA.glob("gpt_seed*.npz"))
    assert [p.name for p in runs] == [f"gpt_seed{s}.npz" for s in SEEDS]
    assert sum(p.stat().st_size for p in runs) <= 2 * 1024 * 1024


@pytest.mark.parametrize("seed", SEEDS)
def test_each_stored_run_has_its_seed_and_the_same_sizes(seed: int) -> None:
    run = stored_run(seed=seed)
    assert run.config == dataclasses.replace(stored_run(seed=0).config, seed=seed)
    assert run.config.seq_len >= 128
    assert len(run.losses) == run.config.steps
    assert run.held_out_steps[-1] == run.config.steps
    assert run.info["command"] == f"python tools/train_lm.py --seed {seed}"
    assert run.info["seconds"] > 0


def test_the_scheme_runs_are_stored_for_five_schemes_and_three_seeds() -> None:
    runs = sorted(p.name for p in DATA.glob("scheme_*.npz"))
    assert runs == sorted(f"scheme_{k}_seed{s}.npz" for k in SCHEMES for s in SEEDS)
    assert sum((DATA / name).stat().st_size for name in runs) <= 15 * 256 * 1024
    with pytest.raises(ValueError, match="scheme must be one of"):
        stored_scheme_run("relative")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no stored rotary run for seed 3"):
        stored_scheme_run("rotary", seed=3)


def test_every_scheme_run_names_its_scheme_seed_and_command() -> None:
    base = dataclasses.replace(stored_run(seed=0).config, seq_len=64)
    for scheme in SCHEMES:
        for seed in SEEDS:
            run = stored_scheme_run(scheme, seed=seed)
            assert run.config == dataclasses.replace(base, scheme=scheme, seed=seed)
            command = f"python tools/train_lm.py --scheme {scheme} --seed {seed}"
            assert run.info["command"] == command
            assert len(run.losses) == run.config.steps == run.held_out_steps[-1]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_each_scheme_run_is_what_its_command_trains(scheme: str) -> None:
    """The stored config is chapter 9's but for the length and the scheme; the first steps of
    ``tools/train_lm.py --scheme`` reproduce the stored curve; the stored weights, rounded to
    float16, still give the final held-out loss to within a hundredth of a nat."""
    run = stored_scheme_run(scheme, seed=0)
    base = stored_run(seed=0).config
    assert run.config == dataclasses.replace(base, seq_len=64, scheme=scheme)
    assert run.info["command"] == f"python tools/train_lm.py --scheme {scheme} --seed 0"
    steps = 3
    again = train(dataclasses.replace(run.config, steps=steps), train_stream())
    np.testing.assert_allclose(again.losses, run.losses[:steps], rtol=1e-5)
    spec = run.info["held_out_windows"]
    windows = random_passages(held_out_stream(), spec["windows"], 64, seed=spec["seed"])
    assert evaluate(run.model, *windows).loss == pytest.approx(run.held_out_losses[-1], abs=0.01)


def test_the_stored_weights_give_the_stored_held_out_loss() -> None:
    run = stored_run(seed=0)
    spec = run.info["held_out_windows"]
    windows = random_passages(
        held_out_stream(), spec["windows"], run.config.seq_len, seed=spec["seed"]
    )
    assert evaluate(run.model, *windows).loss == pytest.approx(run.held_out_losses[-1], rel=1e-4)
    # Read as float64, the same values: the loss agrees to float32's rounding.
    wide = stored_run(seed=0, dtype=np.float64)
    assert wide.config == run.config and wide.model.embedding.dtype == np.float64
    for name, array in run.model.parameters().items():
        np.testing.assert_array_equal(wide.model.parameters()[name], array, err_msg=name)
    assert evaluate(wide.model, *windows).loss == pytest.approx(run.held_out_losses[-1], rel=1e-4)


def test_the_first_steps_reproduce_the_stored_curve() -> None:
    """tools/train_lm.py's run, re-made for its first steps (all inside the warmup, whose rates
    do not depend on the run's length). Another CPU may round float32 differently, hence the
    tolerance; on the machine that stored the run the losses agree to the last bits."""
    run = stored_run(seed=0)
    steps = 4
    assert steps <= run.config.warmup
    again = train(dataclasses.replace(run.config, steps=steps), train_stream())
    np.testing.assert_allclose(again.losses, run.losses[:steps], rtol=1e-5)


def test_runs_stored_with_the_old_field_names_still_load() -> None:
    """The stored runs' headers name n_layer and n_head; the package now says n_layers and
    n_heads, as ModelConfig and attention_cost do (issue 25)."""
    with np.load(DATA / "gpt_seed0.npz") as data:
        stored = json.loads(str(data["header"]))["config"]
    assert {"n_layer", "n_head"} <= stored.keys()
    config = GPTConfig.from_stored(stored)
    assert (config.n_layers, config.n_heads) == (stored["n_layer"], stored["n_head"])
    assert GPTConfig.from_stored(dataclasses.asdict(config)) == config


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    config = dataclasses.replace(ONE_BLOCK, steps=3)
    result = train(config, np.tile(np.arange(7), 20))
    stored = gpt.StoredRun(
        result.model, config, result.losses, np.array([3]), np.array([1.5]), {"note": "x"}
    )
    save(tmp_path / "run.npz", stored)
    back = load(tmp_path / "run.npz")
    assert back.config == config and back.info == {"note": "x"}
    for name, array in result.model.parameters().items():
        np.testing.assert_array_equal(back.model.parameters()[name], array, err_msg=name)
    np.testing.assert_allclose(back.losses, result.losses, rtol=1e-6)


def test_a_damaged_file_or_an_unknown_seed_is_refused(tmp_path: Path) -> None:
    with np.load(DATA / "gpt_seed0.npz") as data:
        arrays = dict(data)
    arrays["w_fc"] = arrays["w_fc"][:, :, :3]
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=r"w_fc must have shape \(2, 64, 256\), got \(2, 64, 3\)"):
        load(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="no stored run for seed 7"):
        stored_run(seed=7)


# Every input handled (issue 25): what save writes load reads, a save is whole or not at all, and
# each bad input is refused at the boundary with its name and range.


def _stored(model: GPT, config: GPTConfig) -> gpt.StoredRun:
    return gpt.StoredRun(model, config, np.zeros(2), np.array([2]), np.array([1.5]), {})


def test_a_save_that_fails_partway_leaves_the_stored_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk, Ctrl-C or a kill while the .npz is written: the run stored before is kept
    byte for byte and no half-written file is left beside it."""
    path = tmp_path / "run.npz"
    save(path, _stored(init_model(ONE_BLOCK), ONE_BLOCK))
    before = path.read_bytes()

    monkeypatch.setattr(np, "savez", savez_that_fails(OSError(28, "No space left on device")))
    with pytest.raises(OSError, match="No space left"):
        save(path, _stored(init_model(ONE_BLOCK), dataclasses.replace(ONE_BLOCK, seed=1)))
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]


def test_save_adds_npz_as_numpy_does_and_refuses_a_folder(tmp_path: Path) -> None:
    save(tmp_path / "run", _stored(init_model(ONE_BLOCK), ONE_BLOCK))
    assert [p.name for p in tmp_path.iterdir()] == ["run.npz"]
    assert load(tmp_path / "run.npz").config == ONE_BLOCK
    assert gpt.npz_path(tmp_path / "run") == tmp_path / "run.npz"
    with pytest.raises(ValueError, match=f"{tmp_path} is a folder: name the file"):
        save(tmp_path, _stored(init_model(ONE_BLOCK), ONE_BLOCK))
    with pytest.raises(ValueError, match=f"the folder {tmp_path / 'no'} does not exist"):
        save(tmp_path / "no" / "run.npz", _stored(init_model(ONE_BLOCK), ONE_BLOCK))


def test_save_refuses_a_run_that_load_could_not_read(tmp_path: Path) -> None:
    model = init_model(ONE_BLOCK)
    grown = dataclasses.replace(model, embedding=model.embedding.extended(16, method="tile"))
    with pytest.raises(ValueError, match=r"position_embeddings \(16, 8\) \(the config's: \(8, 8\)"):
        save(tmp_path / "run.npz", _stored(grown, ONE_BLOCK))
    with pytest.raises(ValueError, match="the model has n_heads 2, its config 1"):
        save(tmp_path / "run.npz", _stored(model, dataclasses.replace(ONE_BLOCK, n_heads=1)))
    with pytest.raises(ValueError, match="the model has scheme 'learned', its config 'alibi'"):
        save(tmp_path / "run.npz", _stored(model, dataclasses.replace(ONE_BLOCK, scheme="alibi")))
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_run_stored_in_float16_loads_as_its_rounded_weights(scheme: str, tmp_path: Path) -> None:
    config = dataclasses.replace(ONE_BLOCK, scheme=scheme)
    model = init_model(config)
    save(tmp_path / "run", _stored(model, config), weights_dtype=np.float16)
    back = load(tmp_path / "run.npz", dtype=np.float64)
    assert back.config == config and back.model.scheme == scheme
    for name, array in model.parameters().items():
        expected = array.astype(np.float16).astype(np.float64)
        np.testing.assert_array_equal(back.model.parameters()[name], expected, err_msg=name)


def test_load_refuses_an_npz_that_is_not_a_stored_run(tmp_path: Path) -> None:
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(
        ValueError,
        match=r"not a stored run: it lacks header, losses, held_out_steps, held_out_losses",
    ):
        load(tmp_path / "other.npz")


def _no_training(*args: object, **kwargs: object) -> None:
    raise AssertionError("trained before the output path was checked")


@pytest.mark.parametrize("tool_name", ["train_lm", "fine_tune_lm"])
@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("missing/run.npz", r"--out: the folder \S+missing does not exist"),
        ("", r"--out: \S+ is a folder: name the file"),
    ],
)
def test_the_tools_check_their_out_path_before_training(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tool_name: str,
    out: str,
    message: str,
) -> None:
    tool = load_tool(tool_name, monkeypatch)
    monkeypatch.setattr(tool, "train", _no_training)
    monkeypatch.setattr(sys, "argv", [f"{tool_name}.py", "--out", str(tmp_path / out)])
    with pytest.raises(SystemExit):
        tool.main()
    assert re.search(message, capsys.readouterr().err)


def _tiny_train_lm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str) -> ModuleType:
    """train_lm made to train a tiny model for 2 steps into ``tmp_path / out``."""
    tool = load_tool("train_lm", monkeypatch)
    tiny = GPTConfig(seq_len=8, n_layers=1, n_heads=2, embed_dim=8, steps=2, warmup=1)
    monkeypatch.setattr(tool, "CONFIG", tiny)
    monkeypatch.setattr(tool, "HELD_OUT", random_passages(held_out_stream(), 2, 8, seed=0))
    monkeypatch.setattr(sys, "argv", ["train_lm.py", "--out", str(tmp_path / out)])
    return tool


def test_train_lm_stores_a_path_without_npz_where_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _tiny_train_lm(tmp_path, monkeypatch, "run").main()
    stored = tmp_path / "run.npz"
    assert f"stored {stored} ({stored.stat().st_size:,} bytes)" in capsys.readouterr().err
    assert load(stored).config.steps == 2


def test_train_lm_with_a_scheme_trains_that_scheme_and_stores_it_in_float16(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = _tiny_train_lm(tmp_path, monkeypatch, "run.npz")
    monkeypatch.setattr(tool, "SCHEME_LEN", 6)
    monkeypatch.setattr(sys, "argv", ["train_lm.py", "--scheme", "alibi", "--seed", "2"])
    monkeypatch.setattr(tool._cli, "DATA", tmp_path)
    tool.main()
    run = load(tmp_path / "scheme_alibi_seed2.npz")
    assert (run.config.scheme, run.config.seq_len, run.config.seed) == ("alibi", 6, 2)
    assert run.info["command"] == "python tools/train_lm.py --scheme alibi --seed 2"
    with np.load(tmp_path / "scheme_alibi_seed2.npz") as data:
        assert data["w_attn"].dtype == np.float16


def test_ctrl_c_while_train_lm_trains_leaves_the_stored_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = tmp_path / "run.npz"
    stored.write_bytes(b"the run stored before")
    tool = _tiny_train_lm(tmp_path, monkeypatch, "run.npz")
    steps: list[int] = []

    def ctrl_c(model: GPT, *windows: object) -> float:  # called by gpt.train after a step
        steps.append(len(steps))
        raise KeyboardInterrupt

    monkeypatch.setattr(tool, "evaluate", ctrl_c)
    monkeypatch.setattr(tool, "HELD_OUT_EVERY", 1)
    with pytest.raises(KeyboardInterrupt):
        tool.main()
    assert steps == [0]
    assert stored.read_bytes() == b"the run stored before"
    assert list(tmp_path.iterdir()) == [stored]


def test_float16_is_refused_before_it_trains_to_nan() -> None:
    with pytest.raises(TypeError, match="dtype must be float32 or float64, got float16"):
        GPTConfig(dtype="float16")


def test_evaluate_refuses_zero_windows() -> None:
    model = init_model(ONE_BLOCK)
    with pytest.raises(ValueError, match=r"evaluate needs at least one window, got shape \(0, 8\)"):
        evaluate(model, np.zeros((0, 8), int), np.zeros((0, 8), int))


@pytest.mark.parametrize("scale", [0, -1.0, float("nan"), float("inf")])
def test_score_terms_refuse_a_fixed_scale_that_is_not_a_positive_number(scale: float) -> None:
    inputs, _ = _batch()
    with pytest.raises(ValueError, match="fixed_scale must be a finite number > 0"):
        score_terms(_perturbed(), inputs, fixed_scale=scale)


def test_the_schedule_refuses_a_step_before_the_first() -> None:
    with pytest.raises(ValueError, match="step must be an integer >= 0, got -5"):
        GPTConfig(warmup=10).learning_rate_at(-5)
    with pytest.raises(ValueError, match="step must be an integer >= 0, got -1"):
        GPTConfig(warmup=0).learning_rate_at(-1)  # was a division by warmup = 0
    with pytest.raises(TypeError, match="step must be an integer"):
        GPTConfig().learning_rate_at(1.5)  # type: ignore[arg-type]
    no_warmup = GPTConfig(steps=3, warmup=0, learning_rate=1e-3)
    assert [no_warmup.learning_rate_at(s) for s in range(3)] == pytest.approx([1e-3, 5.5e-4, 1e-4])


def test_losses_of_logits_refuse_complex_logits() -> None:
    with pytest.raises(TypeError, match="logits must hold real numbers, got dtype complex128"):
        losses_of_logits(np.ones((2, 3)) + 1j, [0, 1])


def test_forward_refuses_sequences_of_no_ids() -> None:
    with pytest.raises(ValueError, match=r"token_ids must have shape \(B, T\) with T >= 1"):
        forward(init_model(TINY), np.zeros((2, 0), int))


def test_training_checks_the_whole_stream_before_the_first_step() -> None:
    stream = np.tile(np.arange(7), 40)
    stream[-1] = 99
    done: list[int] = []
    with pytest.raises(ValueError, match=r"stream id 99 at index \(279,\) is out of range"):
        train(
            dataclasses.replace(ONE_BLOCK, steps=3), stream, after_step=lambda n, m: done.append(n)
        )
    assert done == []


def test_a_training_step_checks_its_ids_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25: the ids were checked four times a step (loss_and_grads, forward, the embedding's
    forward and backward)."""
    calls: list[int] = []
    checked = GPTStyleEmbedding.checked_lookup

    def counting(self: GPTStyleEmbedding, *args: Any) -> Any:
        calls.append(1)
        return checked(self, *args)

    monkeypatch.setattr(GPTStyleEmbedding, "checked_lookup", counting)
    loss_and_grads(_perturbed(), *_batch())
    assert len(calls) == 1


@pytest.mark.parametrize(
    "dtype",
    [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, bool,
     np.float32, np.float64, object, str],
)  # fmt: skip
def test_every_id_dtype_gives_the_same_result_or_a_type_error(dtype: type) -> None:
    model = _perturbed()
    inputs, targets = _batch()
    loss, grads = loss_and_grads(model, inputs, targets)
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(
            forward(model, inputs.astype(dtype)).logits, forward(model, inputs).logits
        )
        again, again_grads = loss_and_grads(model, inputs.astype(dtype), targets.astype(dtype))
        assert again == loss
        for name, grad in grads.items():
            np.testing.assert_array_equal(again_grads[name], grad, err_msg=name)
    else:
        with pytest.raises(TypeError, match=r"token_ids must be integers in \[0, 7\)"):
            forward(model, inputs.astype(dtype))
        with pytest.raises(TypeError, match=r"token_ids must be integers in \[0, 7\)"):
            loss_and_grads(model, inputs.astype(dtype), targets)


def test_sizes_too_large_for_memory_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="GPTConfig's vocab_size 10,000,000,000,000, seq_len 128"):
        init_model(GPTConfig(vocab_size=10**13))
    long = dataclasses.replace(ONE_BLOCK, seq_len=10**6)
    with pytest.raises(ValueError, match=r"batch_size 32 x n_heads 2 x n_layers 1 x seq_len\*\*2"):
        train(long, np.zeros(10**6 + 1, int))
