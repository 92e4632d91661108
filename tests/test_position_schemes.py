"""The five position schemes: gradients, what each scheme does to the scores, and running past T."""

from __future__ import annotations

import numpy as np
import pytest

from gptembed.lookback import make_lookback
from gptembed.optim import IGNORE, cross_entropy
from gptembed.position_schemes import (
    SCHEMES,
    SchemeConfig,
    SchemeModel,
    at_length,
    forward,
    init_model,
    linear_bias,
    loss_and_grads,
    loss_by_position,
    losses_by_length,
    make_batch,
    train,
)
from gptembed.positions import sinusoidal_table
from tests.gradcheck import numerical_grad

SHARED_ROW = ("rotary", "alibi", "none")
"""The schemes that add nothing to the token rows: their table is one row, shared."""


def tiny(scheme: str, **changes: object) -> SchemeConfig:
    """A configuration small enough for finite differences."""
    sizes = {"vocab_size": 5, "seq_len": 6, "embed_dim": 4, "head_dim": 4, "offset": 2}
    return SchemeConfig(scheme=scheme, seed=3, **{**sizes, **changes})  # type: ignore[arg-type]


def perturbed(config: SchemeConfig) -> SchemeModel:
    """A model moved away from its tiny initial weights, so every gradient is far from zero.

    The position table keeps its scheme's form: sinusoidal rows untouched, a shared row shared.
    """
    model = init_model(config)
    rng = np.random.default_rng(11)
    for array in model.attention.parameters().values():
        array += rng.standard_normal(array.shape) * 0.7
    table = model.attention.embedding.position_embeddings
    if config.scheme == "sinusoidal":
        table[:] = sinusoidal_table(config.seq_len, config.embed_dim)
    elif config.scheme in SHARED_ROW:
        table[:] = table[0]
    return model


PARAMETERS = list(init_model(tiny("learned")).attention.parameters())


def test_sizes_and_the_window_are_taken_by_keyword_only() -> None:
    """Issue 25: ``SchemeConfig(8, 4, "rotary")`` set seq_len to 8, and ``forward(model, ids, 3)``
    meant window=3 here and start_pos=3 in gpt; both are refused now."""
    with pytest.raises(TypeError, match="positional argument"):
        SchemeConfig(8, 4, "rotary")  # type: ignore[misc]
    model = init_model(SchemeConfig(seq_len=8))
    ids = np.zeros((1, 8), dtype=np.intp)
    with pytest.raises(TypeError, match="positional argument"):
        forward(model, ids, 3)  # type: ignore[misc]
    assert forward(model, ids, window=3).logits.shape == forward(model, ids).logits.shape


@pytest.mark.parametrize("name", PARAMETERS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_gradient_of_every_scheme_matches_finite_differences(scheme: str, name: str) -> None:
    config = tiny(scheme, alibi_slope=0.7, rotary_base=3.0)  # a small base: large angles
    model = perturbed(config)
    inputs, targets = make_lookback(3, config.seq_len, config.vocab_size, config.offset, seed=5)
    _, grads = loss_and_grads(model, inputs, targets)
    numeric = numerical_grad(
        lambda: loss_and_grads(model, inputs, targets)[0], model.attention.parameters()[name]
    )
    assert np.abs(numeric).max() > 1e-3, "the check needs gradients that are not ~0"
    np.testing.assert_allclose(grads[name], numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("scheme", ["alibi", "none"])
def test_the_scheme_is_in_the_scores_and_nowhere_else(scheme: str) -> None:
    model = perturbed(tiny(scheme))
    ids = make_lookback(2, 6, 5, 2, seed=1)[0]
    result = forward(model, ids)
    q, k = result.q, result.k
    expected = q @ k.swapaxes(-1, -2) / 2.0  # sqrt(H) = 2
    if scheme == "alibi":
        expected = expected + linear_bias(6, model.config.alibi_slope)
    np.testing.assert_allclose(result.scores, expected, atol=1e-12)


def test_without_positions_an_output_sees_the_earlier_ids_as_a_bag() -> None:
    model = perturbed(tiny("none"))  # its shared row is the same at every position
    ids = np.array([0, 1, 2, 3, 4, 2])
    shuffled = np.array([3, 2, 0, 4, 1, 2])  # the same first five ids in another order
    np.testing.assert_allclose(
        forward(model, ids).logits[5], forward(model, shuffled).logits[5], atol=1e-12
    )
    learned = perturbed(tiny("learned"))
    assert not np.allclose(forward(learned, ids).logits[5], forward(learned, shuffled).logits[5])


def test_the_five_schemes_start_from_the_same_weights() -> None:
    models = [init_model(tiny(scheme)) for scheme in SCHEMES]
    for name in ("token_embeddings", "w_query", "w_key", "w_value", "w_out", "b_out"):
        first = models[0].attention.parameters()[name]
        for model in models[1:]:
            np.testing.assert_array_equal(model.attention.parameters()[name], first)
    tables = {m.scheme: m.attention.embedding.position_embeddings for m in models}
    np.testing.assert_array_equal(tables["sinusoidal"], sinusoidal_table(6, 4))
    for scheme in SHARED_ROW:
        assert not tables[scheme].any()


def test_training_follows_each_schemes_rule_for_the_table() -> None:
    runs = {s: train(tiny(s, steps=20, batch_size=8)) for s in SCHEMES}
    tables = {s: run.model.attention.embedding.position_embeddings for s, run in runs.items()}
    assert not np.allclose(tables["learned"], runs["learned"].initial_positions)
    assert len({tuple(row) for row in tables["learned"]}) == 6  # every row its own
    np.testing.assert_array_equal(tables["sinusoidal"], sinusoidal_table(6, 4))  # frozen
    for scheme in SHARED_ROW:
        assert tables[scheme].any(), scheme  # the shared row trained ...
        np.testing.assert_array_equal(tables[scheme], tables[scheme][[0]] * np.ones((6, 1)))


def test_training_is_deterministic() -> None:
    first, second = (train(tiny("rotary", steps=10, batch_size=4)) for _ in range(2))
    np.testing.assert_array_equal(first.losses, second.losses)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_at_length_runs_longer_and_keeps_the_trained_positions(scheme: str) -> None:
    model = perturbed(tiny(scheme))
    ids = make_lookback(3, 24, 5, 2, seed=2)[0]
    with pytest.raises(ValueError, match="exceeds max_seq_len 6"):
        forward(model, ids)
    method = "tile" if scheme == "learned" else None
    longer = at_length(model, 24, method)
    assert longer.max_seq_len == 24
    assert longer.attention.w_query is model.attention.w_query  # shared, not copied
    causal = forward(longer, ids).logits[:, :6]  # a causal model: later ids change nothing here
    np.testing.assert_allclose(causal, forward(model, ids[:, :6]).logits, atol=1e-12)


def test_at_length_makes_the_rows_each_scheme_needs() -> None:
    learned = perturbed(tiny("learned"))
    rows = learned.attention.embedding.position_embeddings
    tiled = at_length(learned, 12, "tile").attention.embedding.position_embeddings
    np.testing.assert_array_equal(tiled, np.concatenate([rows, rows]))
    sinusoidal = at_length(init_model(tiny("sinusoidal")), 12).attention.embedding
    np.testing.assert_array_equal(sinusoidal.position_embeddings, sinusoidal_table(12, 4))
    shared = perturbed(tiny("rotary"))
    shared.attention.embedding.position_embeddings[:] = [1.0, 2.0, 3.0, 4.0]
    grown = at_length(shared, 9).attention.embedding.position_embeddings
    np.testing.assert_array_equal(grown, np.tile([1.0, 2.0, 3.0, 4.0], (9, 1)))


def test_at_length_refuses_what_it_cannot_do() -> None:
    learned, rotary = init_model(tiny("learned")), init_model(tiny("rotary"))
    with pytest.raises(ValueError, match="no rows past its length: pass method="):
        at_length(learned, 12)
    with pytest.raises(ValueError, match="'rotary' has none to grow"):
        at_length(rotary, 12, "tile")
    with pytest.raises(ValueError, match="seq_len must be an integer >= 6, got 4"):
        at_length(rotary, 4)


def test_a_window_hides_the_keys_that_lie_further_back() -> None:
    model = perturbed(tiny("rotary"))
    ids = make_lookback(2, 6, 5, 2, seed=3)[0]
    np.testing.assert_array_equal(forward(model, ids, window=6).probs, forward(model, ids).probs)
    probs = forward(model, ids, window=2).probs  # (B, T, T)
    i, j = np.indices((6, 6))
    assert (probs[:, (i - j >= 2)] == 0).all()
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0)
    with pytest.raises(ValueError, match="window must be an integer >= 1, got 0"):
        forward(model, ids, window=0)


def some_unscored(n_sequences: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Lookback ids (offset 2) of length 6 with about a third of the targets IGNORE besides the
    first two positions', so that positions differ in how many rows they score."""
    inputs, targets = make_lookback(n_sequences, 6, 5, 2, seed=seed)
    dropped = np.random.default_rng(seed).random(targets.shape) < 0.3
    return inputs, np.where(dropped, IGNORE, targets)


def test_loss_by_position_averages_each_position_over_its_scored_rows() -> None:
    model = perturbed(tiny("alibi"))
    inputs, targets = some_unscored(16, seed=4)
    scored = (targets != IGNORE).sum(axis=0)
    assert scored[2:].min() < 16 and not scored[:2].any()  # the test covers both cases
    per_position = loss_by_position(model, inputs, targets)
    logits = forward(model, inputs).logits
    for t in range(6):
        rows = targets[:, t] != IGNORE
        if rows.any():
            expected = cross_entropy(logits[rows, t], targets[rows, t])[0]
            assert per_position[t] == pytest.approx(expected)
        else:
            assert np.isnan(per_position[t])
    with pytest.raises(ValueError, match=r"targets must have the inputs' shape \(16, 6\)"):
        loss_by_position(model, inputs, targets[:, :5])
    wrong = targets.copy()
    wrong[0, -1] = 7  # the vocabulary has 5 ids
    with pytest.raises(ValueError, match=r"target id 7 .* out of range"):
        loss_by_position(model, inputs, wrong)


def test_make_batch_draws_the_lookback_at_the_configs_offset() -> None:
    inputs, targets = make_batch(tiny("none"), 4, 9, seed=1)
    np.testing.assert_array_equal((inputs, targets), make_lookback(4, 9, 5, 2, seed=1))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"scheme": "relative"}, "scheme must be one of"),
        ({"use_positions": False}, "use_positions=False is scheme='none' here"),
        ({"head_dim": 3}, r"head_dim must be even \(rotary pairs\), got 3"),
        ({"alibi_slope": -1.0}, "alibi_slope must be a finite number > 0"),
        ({"rotary_base": 1.0}, "rotary_base must be a finite number > 1, got 1.0"),
    ],
)
def test_config_refuses_bad_values(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tiny(str(changes.pop("scheme", "learned")), **changes)


def test_config_stores_python_numbers() -> None:
    """Fields checked were once kept as the numpy scalars given."""
    config = tiny("alibi", offset=np.int64(3), alibi_slope=np.float32(0.5))
    assert type(config.offset) is int and type(config.alibi_slope) is float
    assert config == tiny("alibi", offset=3, alibi_slope=0.5)


def test_losses_by_length_average_the_positions_each_length_adds() -> None:
    curve = [np.nan, 1.0, 2.0, 4.0, 6.0, 6.0, 8.0, 10.0]
    assert losses_by_length(curve, 2) == {1: 1.0, 2: 3.0, 4: 7.5}
    assert losses_by_length(curve, 4, (1, 2)) == {1: 7 / 3, 2: 7.5}
    with pytest.raises(ValueError, match="the curve has 8 positions; 4 x 3 are needed"):
        losses_by_length(curve, 3)
    with pytest.raises(ValueError, match=r"multiples must increase from 1 or more, got \(2, 2\)"):
        losses_by_length(curve, 2, (2, 2))


# Every input handled (issue 25).


def test_every_scheme_runs_an_empty_sequence_to_an_empty_result() -> None:
    for scheme in SCHEMES:
        assert forward(perturbed(tiny(scheme)), np.zeros((2, 0), int)).logits.shape == (2, 0, 5)


def test_losses_by_length_refuse_a_batch_of_curves() -> None:
    with pytest.raises(ValueError, match=r"per_position must be one curve \(T,\), a loss per "
                       r"position such as loss_by_position's, got shape \(4, 4\)"):  # fmt: skip
        losses_by_length(np.ones((4, 4)), 1)


def test_loss_by_position_takes_one_sequence_as_a_batch_of_one() -> None:
    model = perturbed(tiny("alibi"))
    inputs, targets = some_unscored(2, seed=4)
    np.testing.assert_array_equal(
        loss_by_position(model, inputs[0], targets[0]),
        loss_by_position(model, inputs[:1], targets[:1]),
    )


def test_sizes_too_large_for_memory_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="vocab_size 16, seq_len 1,000,000,000,000, embed_dim 16"):
        init_model(SchemeConfig(seq_len=10**12))
    with pytest.raises(ValueError, match=r"batch_size 32 x seq_len\*\*2 1,000,000,000,000"):
        train(SchemeConfig(seq_len=10**6))
    with pytest.raises(ValueError, match="n_sequences 1,000,000,000,000 x seq_len 8"):
        make_batch(tiny("learned"), 10**12, 8)


def test_train_freezes_what_it_is_told_and_goes_through_the_one_training_loop() -> None:
    """Issue 25: position_schemes trains through optim.run_training like the other models, and
    chapter 10's frozen shared row is a call, not a hand-written loop."""
    config = SchemeConfig(scheme="rotary", steps=5)
    frozen = train(config, frozen=("position_embeddings",)).model
    assert not frozen.embedding.position_embeddings.any()  # the shared row stayed at zero
    trained = train(config).model
    assert trained.embedding.position_embeddings.any()
    again = train(config, init_model(config))  # from a fresh model: the same run
    np.testing.assert_array_equal(again.losses, train(config).losses)
    with pytest.raises(ValueError, match=r"frozen name 'wq' is not a parameter"):
        train(config, frozen=("wq",))
