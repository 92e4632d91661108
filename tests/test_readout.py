"""The read-out model: its gradients, deterministic training, and what the position table learns."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gptembed.optim import cross_entropy
from gptembed.probes import lagged_similarity
from gptembed.readout import (
    ReadoutConfig,
    ReadoutModel,
    evaluate,
    init_model,
    loss_and_grads,
    train,
)
from gptembed.records import loss_floor, make_records
from tests.gradcheck import numerical_grad


@pytest.fixture
def small_model() -> ReadoutModel:
    model = init_model(ReadoutConfig(record_format="A9-", seq_len=5, embed_dim=3, seed=4))
    rng = np.random.default_rng(9)  # move away from the tiny initial values
    for array in model.parameters().values():
        array += rng.standard_normal(array.shape) * 0.5
    return model


def test_model_gradients_match_finite_differences(small_model: ReadoutModel) -> None:
    inputs, targets = make_records(3, 5, "A9-", seed=2)
    _, grads = loss_and_grads(small_model, inputs, targets)
    for name, array in small_model.parameters().items():
        numeric = numerical_grad(lambda: evaluate(small_model, inputs, targets).loss, array)
        np.testing.assert_allclose(grads[name], numeric, atol=1e-7, err_msg=name)


def test_training_is_deterministic() -> None:
    config = ReadoutConfig(steps=40, seed=7)
    first, second = train(config), train(config)
    np.testing.assert_array_equal(first.losses, second.losses)
    for name, array in first.model.parameters().items():
        np.testing.assert_array_equal(array, second.model.parameters()[name], err_msg=name)
    assert not np.array_equal(train(ReadoutConfig(steps=40, seed=8)).losses, first.losses)


def test_evaluate_scores_the_logits_at_start_pos(small_model: ReadoutModel) -> None:
    inputs, targets = make_records(3, 4, "A9-", seed=5)
    at_one = evaluate(small_model, inputs, targets, start_pos=1)
    logits = small_model.readout(small_model.embedding.forward(inputs, start_pos=1))
    assert at_one.loss == cross_entropy(logits, targets)[0]
    assert at_one.accuracy == np.mean(logits.argmax(axis=-1) == targets)
    assert at_one != evaluate(small_model, inputs, targets)  # position 0 reads other rows


def test_loss_decreases_and_positions_beat_no_positions() -> None:
    with_pos = train(ReadoutConfig(steps=100))
    without = train(ReadoutConfig(steps=100, use_positions=False))
    assert with_pos.losses[-10:].mean() < with_pos.losses[0] - 1.0
    assert without.losses[-10:].mean() < without.losses[0] - 1.0
    inputs, targets = make_records(128, 30, seed=99)
    loss_with = evaluate(with_pos.model, inputs, targets).loss
    loss_without = evaluate(without.model, inputs, targets).loss
    assert loss_with < loss_without - 0.3
    # Each run ends near its floor, and never meaningfully below it.
    assert loss_with == pytest.approx(loss_floor("AA-99;", 30, True), abs=0.05)
    assert loss_without == pytest.approx(loss_floor("AA-99;", 30, False), abs=0.05)
    assert not without.model.embedding.position_embeddings.any()  # frozen at zero


def test_training_learns_the_record_period() -> None:
    result = train(ReadoutConfig(steps=100))
    table = result.model.embedding.position_embeddings
    assert lagged_similarity(table, 6).mean() > 0.8
    assert abs(lagged_similarity(result.initial_positions, 6).mean()) < 0.2


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
        ({"learning_rate": "0.1"}, TypeError, r"^learning_rate must be a number > 0, got '0.1'"),
        ({"use_positions": "no"}, TypeError, r"^use_positions must be True or False, got 'no'"),
        ({"use_positions": 0}, TypeError, r"^use_positions must be True or False, got 0 of"),
        ({"random_offset": "yes"}, TypeError, r"^random_offset must be True or False, got 'yes'"),
    ],
)
def test_config_refuses_bad_values(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        ReadoutConfig(**kwargs)


def test_sequences_longer_than_the_model_are_refused() -> None:
    model = init_model(ReadoutConfig(seq_len=4))
    with pytest.raises(ValueError, match=r"sequence length 5 at start_pos 0 exceeds max_seq_len 4"):
        loss_and_grads(model, np.zeros((1, 5), dtype=int), np.zeros((1, 5), dtype=int))


def test_config_stores_python_numbers() -> None:
    """numpy scalars were once stored as given, so a config held np.int64 and np.float32."""
    given = [  # field, its Python value, the numpy type it is given as
        ("seed", 3, np.int64),
        ("steps", 2, np.int8),
        ("batch_size", 4, np.uint16),
        ("learning_rate", 0.5, np.float32),
        ("seq_len", 8, np.int32),
        ("embed_dim", 4, np.int64),
        ("use_positions", False, np.bool_),
        ("random_offset", True, np.bool_),
    ]
    config = ReadoutConfig(**{name: as_numpy(value) for name, value, as_numpy in given})
    for name, value, _ in given:
        assert type(getattr(config, name)) is type(value), name
    assert config == ReadoutConfig(**{name: value for name, value, _ in given})
