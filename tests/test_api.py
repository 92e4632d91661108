"""One API across the package: options keyword-only, and one signature per verb."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import gptembed
from gptembed import attention_model, gpt, readout

KEYWORD_ONLY = {"seed", "dtype", "ax", "axes"}
"""Options a call names, so that no positional number reads as a size."""


def _public_callables() -> Iterator[tuple[str, Callable]]:
    """Every public function and class (its constructor) and public method of the package (the
    figure modules need matplotlib, which the test environment has)."""
    for info in pkgutil.iter_modules(gptembed.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"gptembed.{info.name}")
        yield from _defined_in(module.__name__, vars(module))


def _defined_in(module: str, names: dict) -> Iterator[tuple[str, Callable]]:
    for name, obj in names.items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module:
            continue
        if inspect.isfunction(obj):
            yield f"{module}.{name}", obj
        elif inspect.isclass(obj):
            yield f"{module}.{name}", obj
            for attr, method in vars(obj).items():
                if inspect.isfunction(method) and not attr.startswith("_"):
                    yield f"{module}.{name}.{attr}", method


def test_seed_dtype_and_axes_are_keyword_only() -> None:
    positional = [
        f"{where}({param.name})"
        for where, fn in _public_callables()
        for param in inspect.signature(fn).parameters.values()
        if param.name in KEYWORD_ONLY and param.kind is not inspect.Parameter.KEYWORD_ONLY
    ]
    assert not positional, f"take these by keyword only: {positional}"


@pytest.mark.parametrize(
    ("verb", "returns"),
    [
        ("init_model", None),
        ("loss_and_grads", "tuple[float, dict[str, NDArray[np.floating]]]"),
        ("train", "TrainResult"),
        ("evaluate", "Evaluation"),
    ],
)
def test_the_toy_models_share_one_signature_per_verb(verb: str, returns: str | None) -> None:
    """Attention's evaluate adds one option (``scores``, an ablation) after the shared ones."""
    ours, theirs = (inspect.signature(getattr(m, verb)) for m in (readout, attention_model))
    shared = [(p.name, p.kind, p.default) for p in ours.parameters.values()]
    their_params = [(p.name, p.kind, p.default) for p in theirs.parameters.values()]
    assert their_params[: len(shared)] == shared
    assert [name for name, *_ in their_params[len(shared) :]] == (
        ["scores"] if verb == "evaluate" else []
    )
    if returns is not None:
        for signature in (ours, theirs):
            assert signature.return_annotation.startswith(returns)


def test_every_model_that_evaluates_returns_an_evaluation() -> None:
    """Issue 25: the small GPT's evaluate returned a float where the toys' return an Evaluation
    (loss and accuracy); all three take (model, inputs, targets, start_pos) first."""
    for module in (readout, attention_model, gpt):
        signature = inspect.signature(module.evaluate)
        names = [p.name for p in signature.parameters.values()][:4]
        assert names == ["model", "inputs", "targets", "start_pos"], module.__name__
        assert signature.return_annotation == "Evaluation", module.__name__


def test_no_two_public_classes_share_a_name() -> None:
    """Issue 25: gpt and attention_model each had a class named Forward."""
    modules: dict[str, list[str]] = {}
    for where, obj in _public_callables():
        if inspect.isclass(obj):
            module, name = where.rsplit(".", 1)
            modules.setdefault(name, []).append(module)
    shared = {name: found for name, found in modules.items() if len(found) > 1}
    assert not shared, f"one name, several classes: {shared}"


MODEL_MODULES = ("readout", "attention_model", "position_schemes", "gpt")
"""The four modules that train a model: each has the same verbs with the same leading shape."""


@pytest.mark.parametrize("name", MODEL_MODULES)
def test_every_model_module_has_the_verbs_in_one_shape(name: str) -> None:
    """Issue 25: init_model(config), loss_and_grads(model, inputs, targets) and
    train(config, ..., model=None) returning a TrainResult, in all four model modules (gpt's
    train takes the text to cut windows from before the model)."""
    module = importlib.import_module(f"gptembed.{name}")

    def params(verb: str) -> list[inspect.Parameter]:
        return list(inspect.signature(getattr(module, verb)).parameters.values())

    assert [p.name for p in params("init_model")] == ["config"]
    grads = inspect.signature(module.loss_and_grads)
    assert [p.name for p in params("loss_and_grads")] == ["model", "inputs", "targets"]
    assert grads.return_annotation.startswith("tuple[float, dict[str, ")
    train = {p.name: p for p in params("train")}
    assert next(iter(train)) == "config"
    assert "model" in train and train["model"].default is None
    assert inspect.signature(module.train).return_annotation.startswith("TrainResult")


def test_no_module_imports_another_modules_private_name() -> None:
    """Issue 25: a name with a leading underscore stays in its module; what several modules share
    is public there, or lives in a private module (``_checks``, ``_npz``, ``_arrays``)."""
    found = []
    for path in sorted(Path(gptembed.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                if node.module.startswith("_"):
                    continue
                private = [alias.name for alias in node.names if alias.name.startswith("_")]
                found += [f"{path.name}: from .{node.module} import {name}" for name in private]
    assert not found, found


def test_contributings_layer_picture_matches_the_imports() -> None:
    """CONTRIBUTING.md's map puts every module in a layer; each imports only from layers below."""
    text = (Path(gptembed.__file__).parent.parent / "CONTRIBUTING.md").read_text(encoding="utf-8")
    picture = text.split("```text\n", 1)[1].split("```", 1)[0]
    layer = {
        name: int(line.split()[0])
        for line in picture.splitlines()
        for name in line.split()[1:]
        if name.isidentifier()
    }
    modules = {p.stem: p for p in Path(gptembed.__file__).parent.glob("*.py")}
    assert set(modules) - {"__init__"} == set(layer), "every module in the picture, once"
    upward = [
        f"{name} ({layer[name]}) imports {node.module} ({layer[node.module]})"
        for name, path in modules.items()
        if name != "__init__"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        if layer[node.module] >= layer[name]
    ]
    assert not upward, upward
