"""The small GPT: every gradient against finite differences, causality, the tied head, windows
and sinks, determinism, and every input handled."""

from __future__ import annotations

import dataclasses
import math
import tracemalloc
from typing import Any

import numpy as np
import pytest

from gptembed import _transformer, embedding, gpt
from gptembed._lookup import checked_lookup
from gptembed.corpus import random_passages, train_stream
from gptembed.gpt import (
    at_length,
    evaluate,
    forward,
    init_model,
    logits,
    loss_and_grads,
    token_losses,
    train,
)
from gptembed.gpt_config import GPTConfig
from gptembed.optim import IGNORE, cross_entropy, losses_of_logits
from gptembed.positions import SCHEMES, ntk_base, sinusoidal_table
from tests.gradcheck import numerical_grad
from tests.small_gpts import ONE_BLOCK, TINY, batch, perturbed

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
    model = perturbed(dataclasses.replace(TINY, scheme=scheme))
    inputs, targets = batch()
    _, grads = loss_and_grads(model, inputs, targets)
    assert set(grads) == set(model.parameters())
    # the loss alone, from the forward pass (the mean that loss_and_grads returns)
    numeric = numerical_grad(
        lambda: token_losses(model, inputs, targets).mean(), model.parameters()[name]
    )
    assert np.abs(numeric).max() > 1e-3, "the check needs gradients that are not ~0"
    assert grads[name].shape == model.parameters()[name].shape
    np.testing.assert_allclose(grads[name], numeric, rtol=1e-5, atol=1e-8)


EXTENDED = {
    "interpolated": {"rotary_interpolation": 2.5},  # fractional positions: t / 2.5
    "ntk": {"rotary_base": ntk_base(10000.0, 4.0, TINY.embed_dim // TINY.n_heads)},
}
"""The two ways past the trained length that change a rotary model's arithmetic."""


@pytest.mark.parametrize(
    ("extension", "name"), [(e, name) for e in EXTENDED for name in SCHEME_PATH]
)
def test_the_gradients_of_an_extended_rotary_model_match_finite_differences(
    extension: str, name: str
) -> None:
    """Position interpolation (each position divided by 2.5, so fractional) and an NTK base:
    every gradient that passes through the rotations, against finite differences."""
    model = dataclasses.replace(perturbed(dataclasses.replace(TINY, scheme="rotary")),
                                **EXTENDED[extension])  # fmt: skip
    inputs, targets = batch()
    _, grads = loss_and_grads(model, inputs, targets)
    numeric = numerical_grad(
        lambda: token_losses(model, inputs, targets).mean(), model.parameters()[name]
    )
    assert np.abs(numeric).max() > 1e-3, "the check needs gradients that are not ~0"
    np.testing.assert_allclose(grads[name], numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("name", ["token_embeddings", "position_embeddings", "w_attn", "w_fc"])
def test_the_gradients_at_moved_start_rows_match_finite_differences(name: str) -> None:
    """Training with random start rows (2-D position ids into a table longer than the window):
    the gradients that loss_and_grads returns for those ids, against finite differences."""
    config = dataclasses.replace(TINY, max_start=6)  # 11 rows, windows of 5
    model = perturbed(config)
    inputs, targets = batch(config)
    ids = np.array([[6, 7, 8, 9, 10], [0, 1, 2, 3, 4], [3, 4, 5, 6, 7]])
    _, grads = loss_and_grads(model, inputs, targets, position_ids=ids)
    numeric = numerical_grad(
        lambda: token_losses(model, inputs, targets, position_ids=ids).mean(),
        model.parameters()[name],
    )
    np.testing.assert_allclose(grads[name], numeric, rtol=1e-5, atol=1e-8)
    if name == "position_embeddings":  # rows 0 to 10 all read, and each by its own ids only
        assert (np.abs(grads[name]).sum(axis=1) > 0).all()
        _, at_zero = loss_and_grads(model, inputs, targets)
        assert not np.abs(at_zero[name][5:]).any()


def test_ignored_targets_are_not_scored_and_their_gradient_is_the_scored_mean() -> None:
    """Scoring only the last position (chapter 9's control): the loss is the mean over the
    scored predictions, and a gradient matches finite differences of that loss."""
    model = perturbed()
    inputs, targets = batch()
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
    """Chapter 8's control: at initialisation the first rows of the table get a larger gradient
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
    m = perturbed(config)
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
    model = perturbed()
    inputs, _ = batch()
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
    model = perturbed()
    inputs, _ = batch()
    f = forward(model, inputs)
    np.testing.assert_allclose(f.logits, f.final @ model.embedding.token_embeddings.T)
    assert "w_head" not in model.parameters() and len(model.parameters()) == 16


def test_token_losses_are_the_cross_entropy_of_each_prediction() -> None:
    model = perturbed()
    inputs, targets = batch()
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
    model = perturbed()
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
    model = perturbed(dataclasses.replace(ONE_BLOCK, n_layers=2, scheme=scheme, dtype="float64"))
    ids = np.random.default_rng(4).integers(ONE_BLOCK.vocab_size, size=(3, 8))
    whole = forward(model, ids, **kwargs).logits
    monkeypatch.setattr(_transformer, "QUERY_BLOCK", 3)
    np.testing.assert_allclose(logits(model, ids, **kwargs), whole, rtol=1e-12, atol=1e-13)


def test_start_pos_moves_the_rows_read() -> None:
    config = dataclasses.replace(ONE_BLOCK, dtype="float64")
    model = perturbed(config)
    inputs, _ = batch(config)
    shifted = forward(model, inputs[:, :5], start_pos=3).logits
    by_ids = forward(model, inputs[:, :5], position_ids=np.arange(3, 8)).logits
    np.testing.assert_array_equal(shifted, by_ids)
    assert not np.allclose(shifted, forward(model, inputs[:, :5]).logits)
    with pytest.raises(ValueError, match="exceeds max_seq_len 8"):
        forward(model, inputs[:, :5], start_pos=4)
    with pytest.raises(ValueError, match=r"token_ids must have shape \(B, T\)"):
        forward(model, inputs[0])


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
    inputs, _ = batch()
    for scheme in SCHEMES:
        model = at_length(perturbed(dataclasses.replace(TINY, scheme=scheme)), 12)
        moved = logits(model, inputs, 7)
        same = np.allclose(moved, logits(model, inputs), rtol=0, atol=1e-12)
        assert same == (scheme in ("rotary", "alibi", "none")), scheme


def test_position_interpolation_divides_every_position_by_its_factor() -> None:
    """A rotary model with interpolation 3, its ids at positions 0, 3, 6, ..., gives the logits
    the plain model gives at 0, 1, 2, ...: each position is turned by the angles of a third of
    it (and at its own positions, others); growing the table keeps the factor."""
    plain = perturbed(dataclasses.replace(TINY, scheme="rotary"))
    plain.embedding.position_embeddings[:] = 0.0  # as the scheme keeps it (perturbed moved it)
    squeezed = dataclasses.replace(at_length(plain, 13), rotary_interpolation=3.0)
    inputs, _ = batch()
    np.testing.assert_allclose(
        logits(squeezed, inputs, position_ids=3 * np.arange(5)), logits(plain, inputs),
        rtol=1e-12, atol=1e-12,
    )  # fmt: skip
    assert not np.allclose(logits(squeezed, inputs), logits(plain, inputs))
    assert at_length(squeezed, 20).rotary_interpolation == 3.0


def test_rotary_interpolation_is_refused_where_it_has_no_meaning() -> None:
    learned = init_model(TINY)
    rotary = init_model(dataclasses.replace(TINY, scheme="rotary"))
    for value, error, message in [
        (0.5, ValueError, "rotary_interpolation must be a finite number >= 1, got 0.5"),
        (math.nan, ValueError, "rotary_interpolation must be a finite number >= 1, got nan"),
        ("4", TypeError, "rotary_interpolation must be a number >= 1, got '4'"),
    ]:
        with pytest.raises(error, match=message):
            dataclasses.replace(rotary, rotary_interpolation=value)
        with pytest.raises(error, match=message):
            dataclasses.replace(TINY, scheme="rotary", rotary_interpolation=value)
    refused = r"a 'learned' model has none to divide, so it must be 1, got 4.0"
    with pytest.raises(ValueError, match=refused):
        dataclasses.replace(learned, rotary_interpolation=4.0)
    with pytest.raises(ValueError, match=refused):
        dataclasses.replace(TINY, rotary_interpolation=4.0)


def test_training_at_moved_start_rows_reads_every_row_of_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With max_start, each training window reads seq_len rows from a start row drawn
    uniformly from [0, max_start], per window and from the batches' seed; every row of the
    table is trained; with max_start 0 no position ids are passed (row 0 first)."""
    seen: list[Any] = []
    real = gpt.loss_and_grads

    def spy(model: gpt.GPT, inputs: np.ndarray, targets: np.ndarray, **kwargs: Any) -> Any:
        seen.append(kwargs["position_ids"])
        return real(model, inputs, targets, **kwargs)

    monkeypatch.setattr(gpt, "loss_and_grads", spy)
    config = dataclasses.replace(ONE_BLOCK, max_start=12, steps=30, batch_size=8)
    stream = np.tile(np.arange(7), 40)
    run = train(config, stream)
    assert run.model.max_seq_len == 20 and len(seen) == 30
    ids = np.stack(seen)  # (steps, B, T)
    np.testing.assert_array_equal(np.diff(ids, axis=-1), 1)  # windows stay contiguous
    starts = ids[..., 0]
    assert starts.min() == 0 and starts.max() == 12
    assert len(set(starts[0])) > 1  # per window, not per batch
    moved = run.model.embedding.position_embeddings != run.initial_positions
    assert moved.any(axis=1).all()  # every row trained
    seen.clear()
    again = train(config, stream)
    np.testing.assert_array_equal(np.stack(seen), ids)
    np.testing.assert_array_equal(again.losses, run.losses)
    seen.clear()
    train(dataclasses.replace(config, max_start=0, steps=2), stream)
    assert seen == [None, None]


def test_max_start_is_for_the_absolute_schemes() -> None:
    config = dataclasses.replace(TINY, max_start=3)
    assert init_model(config).max_seq_len == 8 and config.table_rows == 8
    sinusoidal = init_model(dataclasses.replace(config, scheme="sinusoidal"))
    np.testing.assert_allclose(
        sinusoidal.embedding.position_embeddings, 0.02 * sinusoidal_table(8, 8)
    )
    for scheme in ("rotary", "alibi", "none"):
        with pytest.raises(ValueError, match=f"a {scheme!r} model sees distances alone"):
            dataclasses.replace(config, scheme=scheme)
    with pytest.raises(ValueError, match="max_start must be an integer >= 0, got -1"):
        dataclasses.replace(TINY, max_start=-1)


@pytest.mark.parametrize("scheme", ["rotary", "alibi", "none"])
def test_a_window_is_the_last_keys_and_its_sinks_sit_at_cache_positions(scheme: str) -> None:
    """In one block, a window of W keys at query i gives the logits of the W ids ending at i
    run on their own; with sinks, those of the first ids followed by those W ids: the cache a
    streaming model holds, at the positions StreamingLLM gives it."""
    config = dataclasses.replace(TINY, n_layers=1, seq_len=12, scheme=scheme)
    model = perturbed(config)
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
        longer = at_length(model, 9, "tile" if scheme == "learned" else None)
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
    with pytest.raises(ValueError, match=r"its config: seq_len 8 \(the config's 16\)"):
        train(longer, stream, first)


def test_evaluate_refuses_zero_windows() -> None:
    model = init_model(ONE_BLOCK)
    with pytest.raises(
        ValueError, match=r"evaluate needs at least one passage, got shape \(0, 8\)"
    ):
        evaluate(model, np.zeros((0, 8), int), np.zeros((0, 8), int))


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

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return checked_lookup(*args, **kwargs)

    for module in (gpt, embedding):  # every module that checks a lookup there
        monkeypatch.setattr(module, "checked_lookup", counting)
    loss_and_grads(perturbed(), *batch())
    assert len(calls) == 1


@pytest.mark.parametrize(
    "dtype",
    [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, bool,
     np.float32, np.float64, object, str],
)  # fmt: skip
def test_every_id_dtype_gives_the_same_result_or_a_type_error(dtype: type) -> None:
    model = perturbed()
    inputs, targets = batch()
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


def test_scoring_keeps_nothing_once_it_returns() -> None:
    """logits made a (K, K) mask for every block of queries and cached 32 of them: 1.2 GiB kept
    after one window of 4,096. Now one mask a pass, dropped on return, and no cache anywhere."""
    model = at_length(perturbed(dataclasses.replace(ONE_BLOCK, scheme="alibi")), 300)
    ids = np.random.default_rng(0).integers(ONE_BLOCK.vocab_size, size=(1, 300))
    logits(model, ids, window=20, sinks=2)  # numpy's own first-call allocations
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for kwargs in ({}, {"window": 20}, {"window": 30, "sinks": 3}):
            logits(model, ids, **kwargs)
            token_losses(model, ids[:, :-1], ids[:, 1:], **kwargs)
            forward(model, ids, **kwargs)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 64 * 1024, f"{kept:,} bytes kept after scoring"
    for module in (gpt, _transformer):
        cached = [name for name, obj in vars(module).items() if hasattr(obj, "cache_info")]
        assert not cached, f"{module.__name__} caches {cached}"


@pytest.mark.parametrize("scheme", ["rotary", "alibi", "none"])
def test_more_sinks_than_keys_are_refused_and_sinks_past_a_block_score_as_in_one_piece(
    scheme: str,
) -> None:
    """Rotary with more sinks than the sequence has keys broke on a numpy broadcast; so did
    logits with more sinks than the first block of queries has keys (70 sinks, blocks of 64)."""
    config = dataclasses.replace(ONE_BLOCK, scheme=scheme, dtype="float64")
    model = at_length(perturbed(config), 200)
    ids = np.random.default_rng(2).integers(config.vocab_size, size=(2, 200))
    for score in (logits, lambda *a, **k: forward(*a, **k).logits):
        with pytest.raises(
            ValueError, match=r"sinks=65 with 64 ids: .* sinks must lie in \[0, 64\]"
        ):
            score(model, ids[:, :64], window=8, sinks=65)
    whole = forward(model, ids, window=30, sinks=70).logits
    np.testing.assert_allclose(
        logits(model, ids, window=30, sinks=70), whole, rtol=1e-12, atol=1e-13
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"scheme": "alibi"}, r"scheme 'rotary' \(the config's 'alibi'\)"),
        ({"n_heads": 1}, r"n_heads 2 \(the config's 1\)"),
        ({"rotary_base": 500.0}, r"rotary_base 10000.0 \(the config's 500.0\)"),
        ({"dtype": "float64"}, r"dtype 'float32' \(the config's 'float64'\)"),
        ({"vocab_size": 9}, r"vocab_size 7 \(the config's 9\)"),
        ({"embed_dim": 16}, r"embed_dim 8 \(the config's 16\)"),
        ({"n_layers": 2}, r"n_layers 1 \(the config's 2\)"),
        ({"rotary_interpolation": 4.0}, r"rotary_interpolation 1.0 \(the config's 4.0\)"),
    ],
)
def test_training_refuses_a_model_its_config_did_not_build(
    change: dict[str, Any], message: str
) -> None:
    """train(config, stream, model) trained a rotary 4-head model as the config's 2-head
    alibi one (the arrays have the same shapes), and came back learned under the config's."""
    rotary = dataclasses.replace(ONE_BLOCK, scheme="rotary", steps=2)
    model = init_model(rotary)
    with pytest.raises(ValueError, match=f"the model does not match its config: {message}"):
        train(dataclasses.replace(rotary, **change), np.tile(np.arange(7), 20), model)


def test_training_stops_at_the_first_loss_that_is_not_finite() -> None:
    config = dataclasses.replace(ONE_BLOCK, steps=5, warmup=0)
    model = init_model(config)
    model.w_fc[0, 0, 0] = np.nan
    done: list[int] = []
    with pytest.raises(FloatingPointError, match=r"step 0's loss is nan: training stopped"):
        train(config, np.tile(np.arange(7), 20), model, after_step=lambda n, m: done.append(n))
    assert done == []
    huge = dataclasses.replace(config, learning_rate=1e30)
    with (
        np.errstate(over="ignore", invalid="ignore"),  # on the way to the loss that stops it
        pytest.raises(FloatingPointError, match=r"step \d's loss is (nan|inf)"),
    ):
        train(huge, np.tile(np.arange(7), 20), after_step=lambda n, m: done.append(n))
    assert 1 <= len(done) < huge.steps


@pytest.mark.parametrize("scheme", SCHEMES[1:])
def test_at_length_refuses_a_growing_method_where_the_table_is_not_learned(scheme: str) -> None:
    """at_length(model, L, "tile") grew a sinusoidal, rotary, ALiBi or empty table by its own
    rule and ignored the method asked for."""
    model = init_model(dataclasses.replace(TINY, scheme=scheme))
    with pytest.raises(ValueError, match=f"method='tile' grows a learned table; a {scheme!r}"):
        at_length(model, 9, "tile")
    assert at_length(model, 9).max_seq_len == 9


def test_lengths_too_large_for_memory_are_refused_by_name() -> None:
    """A table grown past memory, and a sequence whose (T, T) attention would not fit, reached
    numpy, whose MemoryError names only a shape."""
    model = init_model(ONE_BLOCK)
    with pytest.raises(ValueError, match=r"max_seq_len 1,000,000,000,000 rows of embed_dim 8"):
        at_length(model, 10**12)
    ids = np.zeros((1, 200_000), dtype=int)
    long = at_length(model, 200_000)
    with pytest.raises(ValueError, match=r"attention at T = 200,000: .* more than this machine"):
        logits(long, ids)
    with pytest.raises(ValueError, match=r"attention weights, batch 1 x n_heads 2 x n_layers 1"):
        forward(long, ids)
