"""The one-head attention model: its gradients, determinism, score terms and KV cache."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from gptembed.attention_model import (
    AttentionConfig,
    AttentionModel,
    KVCache,
    cached_forward,
    evaluate,
    forward,
    init_model,
    loss_and_grads,
    score_terms,
    train,
)
from gptembed.attention_terms import term_spread
from gptembed.lookback import make_lookback, order_blind_floor
from gptembed.optim import IGNORE, Evaluation
from tests.gradcheck import numerical_grad

TINY = AttentionConfig(vocab_size=5, seq_len=6, embed_dim=4, head_dim=3, offset=2, seed=3)


def _perturbed(config: AttentionConfig) -> AttentionModel:
    """A model moved away from its tiny initial weights, so every gradient is far from zero."""
    model = init_model(config)
    rng = np.random.default_rng(11)
    for array in model.parameters().values():
        array += rng.standard_normal(array.shape) * 0.7
    return model


@pytest.mark.parametrize("name", list(init_model(TINY).parameters()))
def test_every_gradient_matches_finite_differences(name: str) -> None:
    model = _perturbed(TINY)
    inputs, targets = make_lookback(3, TINY.seq_len, TINY.vocab_size, TINY.offset, seed=5)
    _, grads = loss_and_grads(model, inputs, targets)
    numeric = numerical_grad(
        lambda: loss_and_grads(model, inputs, targets)[0], model.parameters()[name]
    )
    assert np.abs(numeric).max() > 1e-3, "the check needs gradients that are not ~0"
    np.testing.assert_allclose(grads[name], numeric, rtol=1e-5, atol=1e-8)


def test_the_mask_is_causal_and_every_row_sums_to_one() -> None:
    model = _perturbed(TINY)
    ids = make_lookback(2, TINY.seq_len, TINY.vocab_size, TINY.offset, seed=2)[0]
    f = forward(model, ids)
    assert (np.triu(f.probs[0], k=1) == 0).all()
    np.testing.assert_allclose(f.probs.sum(axis=-1), 1.0)
    # A later id cannot change an earlier output.
    changed = ids.copy()
    changed[:, -1] = (changed[:, -1] + 1) % TINY.vocab_size
    np.testing.assert_array_equal(forward(model, changed).logits[:, :-1], f.logits[:, :-1])


def test_padding_keys_get_no_weight_and_all_padding_rows_are_zero() -> None:
    model = _perturbed(TINY)
    ids = np.array([[0, 0, 1, 2, 3, 4]])
    mask = np.array([[0, 0, 1, 1, 1, 1]])
    f = forward(model, ids, attention_mask=mask)
    assert (f.probs[0, :, :2] == 0).all()
    assert (f.probs[0, :2] == 0).all()  # a padding query sees only padding: no weight at all
    np.testing.assert_allclose(f.probs[0, 2:].sum(axis=-1), 1.0)
    with pytest.raises(ValueError, match=r"attention_mask must have the ids' shape \(1, 6\)"):
        forward(model, ids, attention_mask=mask[:, 1:])
    with pytest.raises(ValueError, match="only 0"):
        forward(model, ids, attention_mask=mask * 2)


def test_a_single_sequence_gives_the_batch_row() -> None:
    model = _perturbed(TINY)
    ids = make_lookback(2, TINY.seq_len, TINY.vocab_size, TINY.offset, seed=4)[0]
    single = forward(model, ids[1])
    batch = forward(model, ids)
    assert single.logits.shape == (TINY.seq_len, TINY.vocab_size)
    np.testing.assert_allclose(single.logits, batch.logits[1], rtol=1e-12)
    np.testing.assert_allclose(single.probs, batch.probs[1], rtol=1e-12)


def test_four_terms_sum_to_the_scores() -> None:
    model = _perturbed(TINY)
    ids = make_lookback(3, 4, TINY.vocab_size, 1, seed=6)[0]
    for start in (0, 2):
        terms = score_terms(model, ids, start_pos=start)
        f = forward(model, ids, start_pos=start)
        np.testing.assert_allclose(terms.total(), f.scores, rtol=1e-12, atol=1e-12)
        assert list(terms.as_dict()) == [
            "token_token",
            "token_position",
            "position_token",
            "position_position",
        ]
        # The position-position term does not depend on the ids; the others do.
        pp = terms.position_position
        np.testing.assert_array_equal(pp[0], pp[1])
        assert not np.allclose(terms.token_token[0], terms.token_token[1])
    single = score_terms(model, ids[0])
    np.testing.assert_allclose(single.total(), forward(model, ids[0]).scores, rtol=1e-12)


def test_replacing_the_scores_changes_only_the_attention() -> None:
    model = _perturbed(TINY)
    ids = make_lookback(2, TINY.seq_len, TINY.vocab_size, TINY.offset, seed=7)[0]
    f = forward(model, ids)
    same = forward(model, ids, scores=f.scores)
    np.testing.assert_array_equal(same.logits, f.logits)
    flat = forward(model, ids, scores=np.zeros_like(f.scores))
    rows = np.arange(1, TINY.seq_len + 1)[:, None]
    np.testing.assert_allclose(flat.probs[0], np.tril(np.ones((6, 6))) / rows)
    with pytest.raises(ValueError, match=r"scores must have shape \(2, 6, 6\)"):
        forward(model, ids, scores=f.scores[:, 1:])


def test_training_is_deterministic_and_learns_the_lookback() -> None:
    config = AttentionConfig(steps=150)
    first, second = train(config), train(config)
    np.testing.assert_array_equal(first.losses, second.losses)
    for name, array in first.model.parameters().items():
        np.testing.assert_array_equal(array, second.model.parameters()[name], err_msg=name)
    inputs, targets = make_lookback(256, 32, 16, 3, seed=99)
    loss, accuracy = evaluate(first.model, inputs, targets)
    assert loss < 0.5 * math.log(16) and accuracy > 0.8


def test_without_positions_the_model_cannot_beat_the_order_blind_floor() -> None:
    config = AttentionConfig(steps=150, use_positions=False)
    run = train(config)
    assert (run.model.embedding.position_embeddings == 0).all()
    inputs, targets = make_lookback(512, 32, 16, 3, seed=99)
    loss, _ = evaluate(run.model, inputs, targets)
    assert loss > order_blind_floor(16, 32, 3) - 0.05


def test_config_refuses_bad_values() -> None:
    with pytest.raises(ValueError, match="learning_rate"):
        AttentionConfig(learning_rate=0.0)
    with pytest.raises(TypeError, match="head_dim must be an integer"):
        AttentionConfig(head_dim=2.5)  # type: ignore[arg-type]
    model = init_model(TINY)
    with pytest.raises(ValueError, match="every target is IGNORE"):
        loss_and_grads(model, np.zeros((1, 6), dtype=int), np.full((1, 6), IGNORE))


def test_a_bad_target_is_named_where_it_stands() -> None:
    """An id past V (not IGNORE) is refused at its place in the (B, T) targets, not at its place
    among the scored ones; a float target is refused as such."""
    model = init_model(TINY)
    ids = np.zeros((2, 6), dtype=int)
    targets = np.full((2, 6), IGNORE)
    targets[1, 4] = 5  # V = 5
    with pytest.raises(ValueError, match=r"^target id 5 at index \(1, 4\) is out of range"):
        evaluate(model, ids, targets)
    with pytest.raises(TypeError, match=r"^targets must be integers in \[0, 5\)"):
        loss_and_grads(model, ids, targets.astype(float))


def test_position_ids_give_what_start_pos_gives() -> None:
    model = _perturbed(TINY)
    ids = make_lookback(2, 4, TINY.vocab_size, 1, seed=8)[0]
    by_start = forward(model, ids, start_pos=2)
    by_ids = forward(model, ids, position_ids=np.arange(2, 6))
    np.testing.assert_array_equal(by_ids.logits, by_start.logits)
    terms = score_terms(model, ids, position_ids=np.tile(np.arange(2, 6), (2, 1)))
    np.testing.assert_allclose(terms.total(), by_start.scores, rtol=1e-12, atol=1e-12)


def test_a_kv_cache_continuation_gives_the_full_forward_pass() -> None:
    model = _perturbed(TINY)
    ids = make_lookback(2, TINY.seq_len, TINY.vocab_size, TINY.offset, seed=9)[0]
    full = forward(model, ids).logits
    first, cache = cached_forward(model, ids[:, :2])
    steps = [first]
    for t in range(2, TINY.seq_len):
        logits, cache = cached_forward(model, ids[:, t : t + 1], cache)
        steps.append(logits)
    assert cache.length == TINY.seq_len
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, rtol=1e-12, atol=1e-12)
    # Forgetting the offset: the new ids read rows 0, 1, ... and the answer changes.
    _, prompt = cached_forward(model, ids[:, :3])
    forgot, _ = cached_forward(model, ids[:, 3:5], prompt, start_pos=0)
    assert not np.allclose(forgot, full[:, 3:5])
    # The table has no row past the last: a full cache cannot take one more id.
    with pytest.raises(ValueError, match=r"sequence length 1 at start_pos 6 exceeds max_seq_len 6"):
        cached_forward(model, ids[:, :1], cache)
    with pytest.raises(ValueError, match="the cache holds 2 sequences, got ids for 1"):
        cached_forward(model, ids[:1, :1], prompt)


def test_no_positions_give_empty_results() -> None:
    """Length 0 once crashed in the softmax: a maximum over no keys."""
    model = _perturbed(TINY)
    f = forward(model, np.zeros((2, 0), dtype=np.intp))
    assert f.probs.shape == (2, 0, 0) and f.logits.shape == (2, 0, TINY.vocab_size)
    assert forward(model, []).logits.shape == (0, TINY.vocab_size)
    logits, cache = cached_forward(model, np.zeros((2, 0), dtype=np.intp))
    assert logits.shape == (2, 0, TINY.vocab_size) and cache.length == 0
    _, prompt = cached_forward(model, np.ones((2, 3), dtype=np.intp))
    logits, cache = cached_forward(model, np.zeros((2, 0), dtype=np.intp), prompt)
    assert logits.shape == (2, 0, TINY.vocab_size) and cache.length == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"attention_mask": [1, 1]},
            r"^attention_mask must have the ids' shape \(3,\), got \(2,\)$",
        ),
        (
            {"attention_mask": [[1, 1, 1]]},
            r"^attention_mask must have the ids' shape \(3,\), got \(1, 3\)$",
        ),
        ({"scores": np.zeros((2, 2))}, r"^scores must have shape \(3, 3\), got \(2, 2\)$"),
    ],
)
def test_a_single_sequences_shapes_are_reported_as_given(kwargs: dict, message: str) -> None:
    """These once reported the shapes after a batch axis was added: "(1, 3), got (1, 2)"."""
    with pytest.raises(ValueError, match=message):
        forward(_perturbed(TINY), [1, 2, 3], **kwargs)


def test_scores_that_are_not_numbers_are_refused() -> None:
    with pytest.raises(TypeError, match=r"^scores must hold real numbers, got dtype <U1$"):
        forward(_perturbed(TINY), [1, 2], scores=[["a", "b"], ["c", "d"]])


def test_a_cache_of_another_width_is_refused() -> None:
    """A cache whose keys are not H wide once failed inside np.concatenate."""
    cache = KVCache(np.zeros((2, 3, 5)), np.zeros((2, 3, 5)))
    with pytest.raises(
        ValueError,
        match=r"^the cache's keys and values must be \(B, n, H\) with H = 3, got shapes "
        r"\(2, 3, 5\) and \(2, 3, 5\)$",
    ):
        cached_forward(_perturbed(TINY), np.zeros((2, 1), dtype=np.intp), cache)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: make_lookback(2, 1, 3, 1), r"^seq_len must be at least 2 for an offset"),
        (lambda: order_blind_floor(3, 1, 1), r"^seq_len must be at least 2 for an offset"),
        (lambda: AttentionConfig(seq_len=1), r"^seq_len must be at least 2 for an offset"),
        (lambda: make_lookback(2, 5, 3, 5), r"^offset must be in \[1, 4\], got 5$"),
        (
            lambda: term_spread(score_terms(init_model(TINY), [1])),
            r"^term_spread needs at least 2 positions, got 1",
        ),
    ],
)
def test_too_short_sequences_name_the_length_needed(
    call: Callable[[], object], message: str
) -> None:
    """These once said "offset must be in [1, 0]" (no valid value), and term_spread returned nan."""
    with pytest.raises(ValueError, match=message):
        call()


def test_config_stores_python_numbers() -> None:
    """numpy scalars were once stored as given."""
    config = AttentionConfig(seq_len=np.int32(6), offset=np.int8(2), head_dim=np.uint8(3))  # type: ignore[arg-type]
    assert type(config.seq_len) is int and type(config.offset) is int
    assert type(config.head_dim) is int


def test_evaluate_scores_only_the_targets_that_are_not_ignored() -> None:
    model = _perturbed(TINY)
    inputs, targets = make_lookback(3, TINY.seq_len - 1, TINY.vocab_size, TINY.offset, seed=6)
    logits = forward(model, inputs, 1).logits
    scored = targets != IGNORE
    expected = Evaluation.of(logits[scored], targets[scored])
    assert evaluate(model, inputs, targets, 1) == expected
    assert evaluate(model, inputs, targets, start_pos=1) == expected
    with pytest.raises(ValueError, match=r"^every target is IGNORE \(-1\): there is nothing"):
        evaluate(model, inputs, np.full_like(targets, IGNORE))
