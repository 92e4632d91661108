"""Records, cross-entropy, the read-out model and its training, and the table probes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gptembed.optim import cross_entropy
from gptembed.probes import cosine_similarity_matrix, lagged_similarity
from gptembed.readout import (
    ReadoutModel,
    TrainConfig,
    evaluate,
    init_model,
    loss_and_grads,
    train,
)
from gptembed.records import ALPHABET, VOCAB_SIZE, decode, encode, loss_floor, make_records


def test_records_follow_the_format_and_targets_are_the_next_character() -> None:
    inputs, targets = make_records(4, 13, "AA-99;", seed=3)
    assert inputs.shape == targets.shape == (4, 13)
    np.testing.assert_array_equal(inputs[:, 1:], targets[:, :-1])
    for row in inputs:
        text = decode(row)
        for t, ch in enumerate(text):
            field = "AA-99;"[t % 6]
            if field == "A":
                assert ch.isalpha()
            elif field == "9":
                assert ch.isdigit()
            else:
                assert ch == field
    np.testing.assert_array_equal(encode(decode(inputs[0])), inputs[0])


def test_random_offset_starts_inside_records() -> None:
    inputs, _ = make_records(200, 6, "A9-", seed=0, random_offset=True)
    firsts = {decode(row)[0] for row in inputs}
    assert "-" in firsts and any(c.isdigit() for c in firsts) and any(c.isalpha() for c in firsts)


def test_loss_floor_by_hand() -> None:
    # With positions: the next field is a letter, letter, '-', digit, digit, ';' in turn.
    expected = (2 * math.log(26) + 2 * math.log(10)) / 6
    assert loss_floor("AA-99;", 6, use_positions=True) == pytest.approx(expected)
    # Without: after a letter, half letters half '-'; after a digit, half digits half ';'.
    after_letter = math.log(2) + 0.5 * math.log(26)
    after_digit = math.log(2) + 0.5 * math.log(10)
    no_pos = (2 * after_letter + math.log(10) + 2 * after_digit + math.log(26)) / 6
    assert loss_floor("AA-99;", 6, use_positions=False) == pytest.approx(no_pos)


def test_cross_entropy_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((2, 3, 5))
    targets = rng.integers(5, size=(2, 3))
    loss, grad = cross_entropy(logits, targets)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    picked = np.take_along_axis(probs, targets[..., None], -1)
    assert loss == pytest.approx(-np.log(picked).mean())
    numeric = np.zeros_like(logits)
    eps = 1e-6
    for index in np.ndindex(*logits.shape):
        up, down = logits.copy(), logits.copy()
        up[index] += eps
        down[index] -= eps
        numeric[index] = (cross_entropy(up, targets)[0] - cross_entropy(down, targets)[0]) / (
            2 * eps
        )
    np.testing.assert_allclose(grad, numeric, atol=1e-8)


@pytest.fixture
def small_model() -> ReadoutModel:
    model = init_model(TrainConfig(record_format="A9-", seq_len=5, embed_dim=3, seed=4))
    rng = np.random.default_rng(9)  # move away from the tiny initial values
    for array in model.parameters().values():
        array += rng.standard_normal(array.shape) * 0.5
    return model


def test_model_gradients_match_finite_differences(small_model: ReadoutModel) -> None:
    inputs, targets = make_records(3, 5, "A9-", seed=2)
    _, grads = loss_and_grads(small_model, inputs, targets)
    eps = 1e-6
    for name, array in small_model.parameters().items():
        numeric = np.zeros_like(array)
        for index in np.ndindex(*array.shape):
            saved = array[index]
            array[index] = saved + eps
            up = evaluate(small_model, inputs, targets)
            array[index] = saved - eps
            down = evaluate(small_model, inputs, targets)
            array[index] = saved
            numeric[index] = (up - down) / (2 * eps)
        np.testing.assert_allclose(grads[name], numeric, atol=1e-7, err_msg=name)


def test_training_is_deterministic() -> None:
    config = TrainConfig(steps=40, seed=7)
    first, second = train(config), train(config)
    np.testing.assert_array_equal(first.losses, second.losses)
    for name, array in first.model.parameters().items():
        np.testing.assert_array_equal(array, second.model.parameters()[name], err_msg=name)
    assert not np.array_equal(train(TrainConfig(steps=40, seed=8)).losses, first.losses)


def test_loss_decreases_and_positions_beat_no_positions() -> None:
    with_pos = train(TrainConfig(steps=100))
    without = train(TrainConfig(steps=100, use_positions=False))
    assert with_pos.losses[-10:].mean() < with_pos.losses[0] - 1.0
    assert without.losses[-10:].mean() < without.losses[0] - 1.0
    inputs, targets = make_records(128, 30, seed=99)
    loss_with = evaluate(with_pos.model, inputs, targets)
    loss_without = evaluate(without.model, inputs, targets)
    assert loss_with < loss_without - 0.3
    # Each run ends near its floor, and never meaningfully below it.
    assert loss_with == pytest.approx(loss_floor("AA-99;", 30, True), abs=0.05)
    assert loss_without == pytest.approx(loss_floor("AA-99;", 30, False), abs=0.05)
    assert not without.model.embedding.position_embeddings.any()  # frozen at zero


def test_training_learns_the_record_period() -> None:
    result = train(TrainConfig(steps=100))
    table = result.model.embedding.position_embeddings
    assert lagged_similarity(table, 6).mean() > 0.8
    assert abs(lagged_similarity(result.initial_positions, 6).mean()) < 0.2


def test_cosine_similarity_matrix() -> None:
    table = np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0]])
    np.testing.assert_allclose(
        cosine_similarity_matrix(table), [[1, 0, -1], [0, 1, 0], [-1, 0, 1]], atol=1e-12
    )
    np.testing.assert_allclose(lagged_similarity(table, 2), [-1.0])


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"record_format": "AB-99"}, ValueError, r"character 'B' at index 1 is not allowed"),
        ({"record_format": ""}, ValueError, r"at least 1 character, got ''"),
        ({"record_format": 7}, TypeError, r"record_format must be a string .* got 7 of type int"),
        ({"seq_len": 0}, ValueError, r"seq_len must be an integer >= 1, got 0"),
        ({"embed_dim": 2.0}, TypeError, r"embed_dim must be an integer >= 1, got 2.0"),
        ({"steps": -1}, ValueError, r"steps must be an integer >= 0, got -1"),
        ({"learning_rate": 0.0}, ValueError, r"learning_rate must be a finite number > 0, got 0.0"),
        ({"learning_rate": math.nan}, ValueError, r"learning_rate must be .* got nan"),
    ],
)
def test_config_refuses_bad_values(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        TrainConfig(**kwargs)


def test_other_bad_inputs_name_the_value_and_range() -> None:
    with pytest.raises(ValueError, match=r"n_sequences must be an integer >= 1, got 0"):
        make_records(0, 5)
    with pytest.raises(ValueError, match=r"character 'a' at index 2 is not in the alphabet"):
        encode("AB" + "a")
    with pytest.raises(ValueError, match=rf"target id {VOCAB_SIZE} is out of range: .*\[0, 42\)"):
        cross_entropy(np.zeros((2, VOCAB_SIZE)), np.array([0, VOCAB_SIZE]))
    with pytest.raises(
        ValueError, match=r"targets must have the logits' shape .* \(2,\), got \(3,\)"
    ):
        cross_entropy(np.zeros((2, 4)), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match=r"row 1 is all zeros"):
        cosine_similarity_matrix(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"lag must be in \[1, 2\] for this table, got 3"):
        lagged_similarity(np.eye(3), 3)
    model = init_model(TrainConfig(seq_len=4))
    with pytest.raises(ValueError, match=r"sequence length 5 at start_pos 0 exceeds max_seq_len 4"):
        loss_and_grads(model, np.zeros((1, 5), dtype=int), np.zeros((1, 5), dtype=int))
    assert len(ALPHABET) == VOCAB_SIZE == 42
