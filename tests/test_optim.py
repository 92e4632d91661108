"""Cross-entropy with its gradient, Adam, evaluations, and the training run every toy model's
``train`` is."""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from gptembed import attention_model, readout
from gptembed._scoring import scored_positions
from gptembed.optim import Adam, Evaluation, cross_entropy, losses_of_logits
from gptembed.optim import _fit as fit
from tests.gradcheck import numerical_grad


def test_cross_entropy_value_and_gradient() -> None:
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((2, 3, 5))
    targets = rng.integers(5, size=(2, 3))
    loss, grad = cross_entropy(logits, targets)
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    picked = np.take_along_axis(probs, targets[..., None], -1)
    assert loss == pytest.approx(-np.log(picked).mean())
    numeric = numerical_grad(lambda: cross_entropy(logits, targets)[0], logits)
    np.testing.assert_allclose(grad, numeric, atol=1e-8)


def test_cross_entropy_is_stable_for_large_logits() -> None:
    loss, grad = cross_entropy(np.array([[1000.0, 0.0]]), np.array([0]))
    assert loss == pytest.approx(0.0, abs=1e-12)
    assert np.isfinite(grad).all()


@pytest.mark.parametrize(
    ("logits", "targets", "error", "message"),
    [
        (
            np.zeros((2, 42)),
            np.array([0, 42]),
            ValueError,
            r"^target id 42 at index \(1,\) is out of range: targets must be in \[0, 42\)$",
        ),
        (np.zeros((2, 4)), np.array([-1, 0]), ValueError, r"target id -1 at index \(0,\)"),
        (
            np.zeros((2, 4)),
            np.array([0, 1, 2]),
            ValueError,
            r"targets must have the logits' shape .* \(2,\), got \(3,\)",
        ),
        (
            np.zeros((2, 4)),
            np.array([0.0, 1.0]),
            TypeError,
            r"^targets must be integers in \[0, 4\), got dtype float64$",
        ),
        (np.zeros((2, 4)), np.array([True, False]), TypeError, r"got dtype bool"),
    ],
)
def test_cross_entropy_refuses_bad_targets(
    logits: np.ndarray, targets: np.ndarray, error: type, message: str
) -> None:
    """Float targets once raised a bare IndexError from deep inside the indexing."""
    with pytest.raises(error, match=message):
        cross_entropy(logits, targets)


@pytest.mark.parametrize(
    ("logits", "targets", "error", "message"),
    [
        ([["a", "b"]], [0], TypeError, r"^logits must hold real numbers, got dtype <U1$"),
        (3.0, 0, ValueError, r"^logits must have a last axis of V >= 1 classes, got shape \(\)$"),
        (
            np.zeros((2, 0)),
            [0, 0],
            ValueError,
            r"^logits must have a last axis of V >= 1 classes, got shape \(2, 0\)$",
        ),
    ],
)
def test_cross_entropy_refuses_bad_logits(
    logits: object, targets: object, error: type, message: str
) -> None:
    """Strings once failed in numpy's float conversion; no classes said "must be in [0, 0)"."""
    with pytest.raises(error, match=message):
        cross_entropy(logits, targets)  # type: ignore[arg-type]


def test_cross_entropy_of_no_targets_is_refused() -> None:
    """An empty batch once scored -0.0: a mean over nothing, with a sign."""
    with pytest.raises(ValueError, match=r"^cross_entropy needs at least one target, got shape"):
        cross_entropy(np.zeros((0, 3)), np.zeros(0, dtype=int))
    with pytest.raises(ValueError, match=r"got shape \(2, 0\): a mean over no targets"):
        cross_entropy(np.zeros((2, 0, 3)), np.zeros((2, 0), dtype=int))


def test_adam_first_step_moves_each_weight_by_the_learning_rate() -> None:
    """With bias correction, step one is lr * g / (|g| + eps): the sign of g, scaled by lr."""
    params = {"w": np.array([1.0, -2.0, 3.0]), "frozen": np.zeros(2)}
    Adam(learning_rate=0.1).step(params, {"w": np.array([0.5, -4.0, 0.0])})
    np.testing.assert_allclose(params["w"], [0.9, -1.9, 3.0], rtol=1e-6)
    np.testing.assert_array_equal(params["frozen"], 0.0)


def test_fit_is_the_adam_loop_and_never_touches_a_frozen_array() -> None:
    """fit gives the losses and weights of the loop written out, and leaves frozen arrays alone."""
    rng = np.random.default_rng(0)
    start = {"w": rng.standard_normal((3, 4)), "b": rng.standard_normal(4)}
    batches = [(rng.integers(3, size=(2, 5)), rng.integers(4, size=(2, 5))) for _ in range(6)]

    def loss_and_grads(params):
        def fn(inputs, targets):
            loss, dlogits = cross_entropy(params["w"][inputs] + params["b"], targets)
            grad_w = np.zeros_like(params["w"])
            np.add.at(grad_w, inputs, dlogits)
            return loss, {"w": grad_w, "b": dlogits.sum(axis=(0, 1))}

        return fn

    by_hand = {name: array.copy() for name, array in start.items()}
    optimizer, expected = Adam(0.1), []
    for inputs, targets in batches:
        loss, grads = loss_and_grads(by_hand)(inputs, targets)
        del grads["b"]
        optimizer.step(by_hand, grads)
        expected.append(loss)

    params = {name: array.copy() for name, array in start.items()}
    stream = iter(batches)
    losses = fit(params, loss_and_grads(params), lambda: next(stream), 6, 0.1, frozen=("b",))
    np.testing.assert_array_equal(losses, expected)
    np.testing.assert_array_equal(params["w"], by_hand["w"])
    np.testing.assert_array_equal(params["b"], start["b"])
    assert not np.array_equal(params["w"], start["w"])


def test_adam_refuses_gradients_that_are_not_a_mapping() -> None:
    """A list of gradients is refused by name (it failed on `.items()`), and nothing moves."""
    params = {"w": np.ones(2)}
    optimizer = Adam(0.1)
    with pytest.raises(TypeError, match="grads must be a mapping of parameter names to gradients"):
        optimizer.step(params, [np.ones(2)])  # type: ignore[arg-type]
    assert optimizer.t == 0 and np.all(params["w"] == 1.0)


@pytest.mark.parametrize(
    ("grads", "message"),
    [
        (
            {"w": np.ones(2), "x": np.ones(2)},
            r"^gradient 'x' has no parameter: the parameters are \['w', 'b'\]$",
        ),
        (
            {"w": np.ones(2), "b": np.ones(3)},
            r"^gradient 'b' has shape \(3,\), its parameter \(1,\)$",
        ),
        ({"w": np.ones(2), "b": ["a"]}, r"^gradient 'b' must hold real numbers, got dtype <U1$"),
    ],
)
def test_adam_checks_every_gradient_before_it_updates_anything(grads: dict, message: str) -> None:
    """An unknown name once raised KeyError after `w` was updated and `t` advanced."""
    params = {"w": np.ones(2), "b": np.zeros(1)}
    optimizer = Adam(0.1)
    with pytest.raises((ValueError, TypeError), match=message):
        optimizer.step(params, grads)
    np.testing.assert_array_equal(params["w"], 1.0)
    assert optimizer.t == 0 and not optimizer.m and not optimizer.v


def test_adam_refuses_a_parameter_it_cannot_update_in_place() -> None:
    with pytest.raises(TypeError, match=r"^parameter 'w' must be a floating numpy array"):
        Adam(0.1).step({"w": np.ones(2, dtype=int)}, {"w": np.ones(2)})
    with pytest.raises(TypeError, match=r"^parameter 'w' must be a floating numpy array"):
        Adam(0.1).step({"w": [1.0, 2.0]}, {"w": np.ones(2)})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"learning_rate": np.nan},
            ValueError,
            r"^learning_rate must be a finite number > 0, got nan$",
        ),
        ({"learning_rate": -0.1}, ValueError, r"^learning_rate must be a finite number > 0"),
        ({"learning_rate": "0.1"}, TypeError, r"^learning_rate must be a number > 0, got '0.1'"),
        ({"beta1": 1.0}, ValueError, r"^beta1 must be a finite number >= 0 and < 1, got 1.0$"),
        ({"beta2": -0.5}, ValueError, r"^beta2 must be a finite number >= 0 and < 1"),
        ({"eps": 0.0}, ValueError, r"^eps must be a finite number > 0, got 0.0$"),
        ({"t": -1}, ValueError, r"^t must be an integer >= 0, got -1$"),
    ],
)
def test_adam_refuses_bad_constants(kwargs: dict, error: type, message: str) -> None:
    """Adam(nan) and negative rates were once accepted, and trained to NaN or uphill."""
    with pytest.raises(error, match=message):
        Adam(**({"learning_rate": 0.1} | kwargs))


def _no_batches() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((1, 1), dtype=np.intp), np.zeros((1, 1), dtype=np.intp)


def _zero_grads(inputs: np.ndarray, targets: np.ndarray) -> tuple[float, dict]:
    return 0.0, {"w": np.zeros(2), "b": np.zeros(1)}


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"steps": -1}, ValueError, r"^steps must be an integer >= 0, got -1$"),
        ({"steps": 3.0}, TypeError, r"^steps must be an integer >= 0, got 3.0 of type float$"),
        ({"steps": True}, TypeError, r"^steps must be an integer >= 0, got True of type bool$"),
        ({"learning_rate": np.nan}, ValueError, r"^learning_rate must be a finite number > 0"),
        (
            {"frozen": "w"},
            TypeError,
            r"^frozen must be a collection of parameter names such as \('w',\), "
            r"got the string 'w'$",
        ),
        (
            {"frozen": ("w", "z")},
            ValueError,
            r"^frozen name 'z' is not a parameter: the parameters are \['w', 'b'\]$",
        ),
    ],
)
def test_fit_refuses_bad_arguments(kwargs: dict, error: type, message: str) -> None:
    """steps=-1, 3.0 and True once failed inside np.empty, or ran one step (True);
    frozen="w" was iterated letter by letter."""
    params = {"w": np.ones(2), "b": np.zeros(1)}
    arguments = {"steps": 2, "learning_rate": 0.1, "frozen": ()} | kwargs
    with pytest.raises(error, match=message):
        fit(params, _zero_grads, _no_batches, **arguments)


def test_fit_with_numpy_integer_steps_and_a_frozen_set() -> None:
    params = {"w": np.ones(2), "b": np.zeros(1)}
    losses = fit(params, _zero_grads, _no_batches, np.int8(3), np.float32(0.1), frozen={"b"})  # type: ignore[arg-type]
    assert losses.shape == (3,)


def test_an_evaluation_is_the_mean_loss_and_the_share_of_right_argmaxes() -> None:
    logits = np.array([[2.0, 0.0, 0.0], [0.0, 1.0, 3.0], [0.0, 5.0, 0.0], [1.0, 0.0, 0.0]])
    targets = np.array([0, 1, 1, 2])
    loss, accuracy = Evaluation.of(logits, targets)
    assert loss == cross_entropy(logits, targets)[0]
    assert accuracy == 0.5  # rows 0 and 2 are right
    with pytest.raises(ValueError, match=r"^target id 3 at index \(3,\) is out of range"):
        Evaluation.of(logits, [0, 1, 1, 3])


# --- the toy models' one API: train(config, model=None) and evaluate, through run_training ---

TOY_MODELS = {
    "readout": (readout, readout.ReadoutConfig(steps=20)),
    "attention_model": (attention_model, attention_model.AttentionConfig(steps=20)),
}


@pytest.fixture(params=list(TOY_MODELS))
def toy(request: pytest.FixtureRequest) -> tuple[ModuleType, Any]:
    """A toy model's module and a short run's config."""
    return TOY_MODELS[request.param]


def test_training_from_a_fresh_model_equals_training_from_scratch(toy: tuple) -> None:
    module, config = toy
    scratch = module.train(config)
    resumed = module.train(config, module.init_model(config))
    np.testing.assert_array_equal(resumed.losses, scratch.losses)
    np.testing.assert_array_equal(resumed.initial_positions, scratch.initial_positions)
    for name, array in scratch.model.parameters().items():
        np.testing.assert_array_equal(resumed.model.parameters()[name], array, err_msg=name)


def test_training_continues_from_a_model_and_leaves_it_untouched(toy: tuple) -> None:
    module, config = toy
    first = module.train(config)
    before = {name: array.copy() for name, array in first.model.parameters().items()}
    more = module.train(replace(config, seed=1), first.model)
    for name, array in first.model.parameters().items():  # the start was copied, not trained
        np.testing.assert_array_equal(array, before[name], err_msg=name)
        assert not np.shares_memory(array, more.model.parameters()[name])
    np.testing.assert_array_equal(more.initial_positions, before["position_embeddings"])
    # It picks up where the first run stopped: on the same batches, its first loss is below a
    # fresh model's, and its last steps go on below the first run's.
    assert more.losses[0] < module.train(replace(config, seed=1)).losses[0]
    assert more.losses[-5:].mean() < first.losses[-5:].mean()


def test_continued_training_freezes_the_given_position_table_without_positions(
    toy: tuple,
) -> None:
    module, config = toy
    start = module.train(config).model
    result = module.train(replace(config, steps=5, use_positions=False), start)
    for name, array in result.model.parameters().items():
        frozen = name == "position_embeddings"
        assert np.array_equal(array, start.parameters()[name]) == frozen, name


def test_continuing_needs_a_model_of_the_config_sizes(toy: tuple) -> None:
    module, config = toy
    model = module.init_model(replace(config, seq_len=8))
    dim = config.embed_dim
    with pytest.raises(
        ValueError,
        match=rf"^model's arrays do not have the config's sizes: "
        rf"position_embeddings \(8, {dim}\) \(the config's: \(16, {dim}\)\)$",
    ):
        module.train(replace(config, seq_len=16), model)


def test_a_config_or_model_of_another_type_is_refused(toy: tuple) -> None:
    """These once raised AttributeError: 'str' object has no attribute 'seq_len'."""
    module, config = toy
    wanted = f"an? {type(config).__name__}"
    for call, got in [
        (lambda: module.init_model("AA-99;"), "'AA-99;' of type str"),
        (lambda: module.train(None), "None of type NoneType"),
    ]:
        with pytest.raises(TypeError, match=rf"^config must be {wanted}, got {got}$"):
            call()
    model = type(module.init_model(config)).__name__
    with pytest.raises(TypeError, match=rf"^model must be an? {model}, got 'x' of type str$"):
        module.train(config, "x")


def test_adam_refuses_float16_parameters() -> None:
    """In float16 eps = 1e-8 rounds to 0 and so does a squared gradient of 1e-4: the step was
    -inf (issue 25)."""
    with pytest.raises(TypeError, match="parameter 'w' is float16: Adam needs float32 or float64"):
        Adam(0.1).step({"w": np.ones(2, dtype=np.float16)}, {"w": np.full(2, 1e-4)})


def test_losses_of_logits_refuse_complex_logits() -> None:
    with pytest.raises(TypeError, match="logits must hold real numbers, got dtype complex128"):
        losses_of_logits(np.ones((2, 3)) + 1j, [0, 1])


def test_losses_of_logits_refuse_logits_without_a_class_axis() -> None:
    """0-d logits raised an IndexError inside (z.shape[-1] of a scalar)."""
    with pytest.raises(ValueError, match=r"logits must have a last axis of V >= 1 classes, got"):
        losses_of_logits(np.float64(1.0), 0)


def test_an_empty_batch_is_called_empty() -> None:
    """(0, T) ids were said to have every target IGNORE (the small GPT's loss_and_grads)."""
    targets = np.zeros((0, 4), dtype=int)
    with pytest.raises(ValueError, match=r"the batch is empty \(targets of shape \(0, 4\)\)"):
        scored_positions(np.zeros((0, 4, 5)), targets)
