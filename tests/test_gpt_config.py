"""The small GPT's config: the values it refuses, the learning-rate schedule, and the shapes of
the arrays it makes."""

from __future__ import annotations

import itertools

import pytest

from gptembed.gpt import init_model
from gptembed.gpt_config import GPTConfig
from tests.small_gpts import ONE_BLOCK, TINY


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


def test_float16_is_refused_before_it_trains_to_nan() -> None:
    with pytest.raises(TypeError, match="dtype must be float32 or float64, got float16"):
        GPTConfig(dtype="float16")


def test_the_schedule_refuses_a_step_before_the_first() -> None:
    with pytest.raises(ValueError, match="step must be an integer >= 0, got -5"):
        GPTConfig(warmup=10).learning_rate_at(-5)
    with pytest.raises(ValueError, match="step must be an integer >= 0, got -1"):
        GPTConfig(warmup=0).learning_rate_at(-1)  # was a division by warmup = 0
    with pytest.raises(TypeError, match="step must be an integer"):
        GPTConfig().learning_rate_at(1.5)  # type: ignore[arg-type]
    no_warmup = GPTConfig(steps=3, warmup=0, learning_rate=1e-3)
    assert [no_warmup.learning_rate_at(s) for s in range(3)] == pytest.approx([1e-3, 5.5e-4, 1e-4])


def test_the_config_names_the_shapes_init_model_makes() -> None:
    """load checks a file against parameter_shapes before it makes the model: the two agree."""
    for config in (TINY, ONE_BLOCK, GPTConfig(n_layers=3, embed_dim=24, n_heads=3)):
        made = {name: array.shape for name, array in init_model(config).parameters().items()}
        assert list(made.items()) == list(config.parameter_shapes().items())
