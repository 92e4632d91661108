"""One API across the package: options keyword-only, and one signature per verb."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
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
    train takes the text to cut windows from before the model, and its loss_and_grads the
    windows' position ids as a keyword-only option)."""
    module = importlib.import_module(f"gptembed.{name}")

    def params(verb: str) -> list[inspect.Parameter]:
        return list(inspect.signature(getattr(module, verb)).parameters.values())

    assert [p.name for p in params("init_model")] == ["config"]
    grads = inspect.signature(module.loss_and_grads)
    positional = [p for p in params("loss_and_grads") if p.kind != p.KEYWORD_ONLY]
    assert [p.name for p in positional] == ["model", "inputs", "targets"]
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


MAX_MODULE_LINES = 800
"""Issue 36: a module longer than this holds more than one idea a reader can name."""


def test_no_module_is_longer_than_a_reader_holds() -> None:
    lengths = {
        path.name: len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(Path(gptembed.__file__).parent.glob("*.py"))
    }
    long = {name: n for name, n in lengths.items() if n > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


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


ROOT = Path(gptembed.__file__).parent.parent
PUBLIC_MODULES = sorted(
    p.stem for p in (ROOT / "gptembed").glob("*.py") if not p.stem.startswith("_")
)
READER_DOCS = ("README.md", "CONTRIBUTING.md", "benchmarks/README.md")
"""The documents a reader reads: a name in a code span there is reader API."""


def _defined(tree: ast.Module) -> dict[str, ast.stmt]:
    """The public names a module defines at its top level (not those it imports), by statement."""
    names: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        names[name.id] = node
    return {name: node for name, node in names.items() if not name.startswith("_")}


def _reexported() -> dict[str, tuple[str, str]]:
    """``from gptembed import name``: the module each of ``__init__``'s names comes from."""
    tree = ast.parse((ROOT / "gptembed" / "__init__.py").read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name: (node.module, alias.name)
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        for alias in node.names
    }


def _uses(tree: ast.AST, *, inside: bool = False) -> set[tuple[str, str]]:
    """The (module, name) pairs of gptembed that code refers to: imported from a module, from
    the package (``__init__``'s names), or read as an attribute of an imported module.
    ``inside``: the code is a module of the package (relative imports)."""
    modules = {*PUBLIC_MODULES, *(p.stem for p in (ROOT / "gptembed").glob("_*.py"))}
    package, found = _reexported(), set()
    aliases: dict[str, str | None] = {}  # a local name for a module; None: the package itself
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "gptembed":
                    module = parts[1] if len(parts) > 1 and alias.asname else None
                    aliases[alias.asname or "gptembed"] = module
        elif isinstance(node, ast.ImportFrom):
            relative = inside and node.level == 1
            name = node.module or ""
            source = node.module if relative else name.removeprefix("gptembed.")
            if source is None or (name == "gptembed" and not relative):  # the package
                for alias in node.names:
                    if alias.name in modules:
                        aliases[alias.asname or alias.name] = alias.name
                    elif alias.name in package:
                        found.add(package[alias.name])
            elif source in modules and (relative or name.startswith("gptembed.")):
                found |= {(source, alias.name) for alias in node.names}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in aliases:
            module = aliases[owner.id]
            if module is not None:
                found.add((module, node.attr))
            elif node.attr in package:
                found.add(package[node.attr])
        elif isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name):
            if owner.value.id in aliases and aliases[owner.value.id] is None:
                found.add((owner.attr, node.attr))  # gptembed.module.name
    return found


def _code_cells(notebook: Path) -> Iterator[str]:
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            lines = "".join(cell["source"]).splitlines()
            yield "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))


def _used_outside_tests() -> set[tuple[str, str]]:
    """The (module, name) pairs of gptembed used outside the tests and the name's own module: by
    a chapter's code, tools/, _ext/, benchmarks/, or another public module of the package."""
    sources = [
        *(source for nb in sorted((ROOT / "book").glob("*.ipynb")) for source in _code_cells(nb)),
        *(
            path.read_text(encoding="utf-8")
            for folder in ("tools", "_ext", "benchmarks")
            for path in sorted((ROOT / folder).rglob("*.py"))
        ),
    ]
    used = {pair for source in sources for pair in _uses(ast.parse(source))}
    for module in PUBLIC_MODULES:
        tree = ast.parse((ROOT / "gptembed" / f"{module}.py").read_text(encoding="utf-8"))
        used |= {pair for pair in _uses(tree, inside=True) if pair[0] != module}
    return used


def _documented(defined: dict[str, dict[str, ast.stmt]]) -> set[tuple[str, str]]:
    """The (module, name) pairs a code span of the reader's documents names: as
    ``module.name``, or as ``name`` alone where one public module alone defines it."""
    text = "\n".join((ROOT / doc).read_text(encoding="utf-8") for doc in READER_DOCS)
    spans = [match[1] for match in re.findall(r"(`+)(.+?)(?<!`)\1(?!`)", text, flags=re.S)]
    qualified = {pair for span in spans for pair in re.findall(r"(\w+)\.(\w+)", span)}
    words = {word for span in spans for word in re.findall(r"[A-Za-z_]\w*", span)}
    homes: dict[str, list[str]] = {}
    for module, names in defined.items():
        for name in names:
            homes.setdefault(name, []).append(module)
    alone = {(found[0], name) for name, found in homes.items() if len(found) == 1}
    return qualified | {(module, name) for module, name in alone if name in words}


MODEL_VERBS = ("init_model", "loss_and_grads", "train", "evaluate")
"""The verbs CONTRIBUTING's "Adding a model" asks of a model module (those it has are API)."""


def test_every_public_name_is_used_outside_the_tests() -> None:
    """Issue 36: a public name is what a reader or another module calls. Each public top-level
    name of a public module must be used by a chapter's code, tools/, _ext/, benchmarks/ or
    another public module, be named in a code span of README.md, CONTRIBUTING.md or
    benchmarks/README.md (``module.name``, or the name alone where one module defines it), or be
    one of the verbs of a model module (:data:`MODEL_VERBS`). A type in the signature of a used
    name of its module counts as used: it is that name's API (``SchemeModel``, what
    ``position_schemes.train`` returns). A name only its own module uses is private
    (``_name``); one that siblings share lives in a private module; one that nothing uses goes."""
    every = {
        module: _defined(ast.parse((ROOT / "gptembed" / f"{module}.py").read_text("utf-8")))
        for module in PUBLIC_MODULES
    }
    used = _used_outside_tests() | _documented(every)
    used |= {(module, verb) for module in MODEL_MODULES for verb in MODEL_VERBS}
    unused = []
    for module, defined in every.items():
        alive = {name for name in defined if (module, name) in used}
        grown = True
        while grown:  # the types in the signatures of what is used, until nothing is added
            annotations = {
                name.id
                for definition in alive
                for node in ast.walk(defined[definition])
                if isinstance(node, (ast.arg, ast.FunctionDef, ast.AnnAssign))
                for annotation in (
                    getattr(node, "annotation", None),
                    getattr(node, "returns", None),
                )
                if annotation is not None
                for name in ast.walk(annotation)
                if isinstance(name, ast.Name)
            }
            grown = bool((annotations & set(defined)) - alive)
            alive |= annotations & set(defined)
        unused += [(module, name) for name in defined if name not in alive]
    offenders = sorted(unused)
    if offenders:
        print("used by nothing but tests:", *(f"{m}.{n}" for m, n in offenders), sep="\n  ")
    assert not offenders, f"public names that nothing but tests uses: {offenders}"
