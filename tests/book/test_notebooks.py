"""Every chapter is stored executed, in order, with the python3 kernel and no volatile metadata.

nbval re-runs each notebook and compares outputs, but a code cell stored without outputs has
nothing to compare and passes silently; these checks close that gap.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from tests.book_site import SHOWN_NOWHERE
from tools import install_cell, store_outputs

pytestmark = pytest.mark.toolchain

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
NOTEBOOKS = sorted(BOOK.glob("*.ipynb"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _code_cells_with_source(nb: dict) -> list[tuple[int, dict]]:
    return [
        (index, cell)
        for index, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "code" and "".join(cell["source"]).strip()
    ]


def test_the_book_has_chapters() -> None:
    assert NOTEBOOKS, f"no notebooks in {BOOK}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_code_cell_was_executed_in_order(path: Path) -> None:
    cells = _code_cells_with_source(_load(path))
    unexecuted = [index for index, cell in cells if cell.get("execution_count") is None]
    assert not unexecuted, (
        f"{path.name}: code cells {unexecuted} have no stored execution; run "
        f"jupyter execute --inplace book/{path.name} (or nbconvert --execute --inplace)"
    )
    counts = [cell["execution_count"] for _, cell in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        f"{path.name}: execution counts {counts} are not 1..{len(cells)}: re-execute the "
        "notebook top to bottom in a fresh kernel"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_declares_the_python3_kernel(path: Path) -> None:
    meta = _load(path)["metadata"]
    assert meta.get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernelspec"
    assert meta.get("kernelspec", {}).get("language") == "python", f"{path.name}: language"
    assert meta.get("language_info", {}).get("name") == "python", f"{path.name}: language_info"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_volatile_execution_metadata(path: Path) -> None:
    timed = [i for i, cell in enumerate(_load(path)["cells"]) if "execution" in cell["metadata"]]
    assert not timed, f"{path.name}: cells {timed} keep execution timing metadata: strip it"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_stored_stderr(path: Path) -> None:
    """Nothing a chapter printed to stderr is stored: a warning shown to a reader is a failure.

    The build renders stored outputs without executing, so this stands where the executing
    build's `stderr_output: error` stood; nbval's re-run then shows the stored outputs are fresh.
    """
    cells = _load(path)["cells"]
    noisy = [
        index
        for index, cell in enumerate(cells)
        for output in cell.get("outputs", [])
        if output["output_type"] == "stream" and output["name"] == "stderr"
    ]
    assert not noisy, f"{path.name}: cells {noisy} stored output on stderr"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_errors_only_where_tagged(path: Path) -> None:
    """A stored error output is allowed only in a cell tagged `raises-exception`."""
    cells = _load(path)["cells"]
    untagged = [
        index
        for index, cell in enumerate(cells)
        if any(output["output_type"] == "error" for output in cell.get("outputs", []))
        and "raises-exception" not in cell["metadata"].get("tags", [])
    ]
    assert not untagged, f"{path.name}: cells {untagged} stored an error without raises-exception"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_figure_options_sit_where_myst_nb_reads_them(path: Path) -> None:
    """`image:` and `figure:` go under a cell's `mystnb:` metadata: at the top level myst-nb
    ignores them, and the page shows the image's file name as its alt text."""
    stray = [
        index
        for index, cell in enumerate(_load(path)["cells"])
        if {"image", "figure"} & set(cell["metadata"])
    ]
    assert not stray, f"{path.name}: cells {stray} have image/figure outside mystnb:"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_prose_names_exercises_by_label(path: Path) -> None:
    """The page numbers exercises within their chapter (sphinx-exercise, "Exercise 6.2"), so
    "exercise 2" in a chapter's prose names no exercise the page shows, and a number typed by
    hand goes stale when exercises move: refer with {numref}`label` instead."""
    by_number = [
        match.group(0)
        for cell in _load(path)["cells"]
        if cell["cell_type"] == "markdown"
        for match in re.finditer(r"\b[Ee]xercises? \d+", "".join(cell["source"]))
    ]
    assert not by_number, f"{path.name}: {by_number}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_exercise_has_a_title(path: Path) -> None:
    """An exercise's title says what it asks before a reader reads it (and in the sidebar of
    contents); an untitled one is only a number."""
    untitled = [
        cell.get("id")
        for cell in _load(path)["cells"]
        if cell["cell_type"] == "markdown"
        and re.search(r"```\{exercise-start\}[ \t]*\n", "".join(cell["source"]))
    ]
    assert not untitled, f"{path.name}: exercises without a title in cells {untitled}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_a_logarithmic_caption_names_its_axis(path: Path) -> None:
    """ "(log scale)" leaves a reader to guess which axis: a caption says "a logarithmic x axis",
    "log-log axes" and so on."""
    vague = [cell.get("id") for cell in _load(path)["cells"] if "log scale" in _caption(cell)]
    assert not vague, f"{path.name}: cells {vague} say 'log scale' without naming the axis"


def _caption(cell: dict) -> str:
    """A cell's figure caption, or ''."""
    return str(cell["metadata"].get("mystnb", {}).get("figure", {}).get("caption", ""))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_an_axis_label_names_what_its_ticks_count(path: Path) -> None:
    """A curve averaged over groups of positions is drawn at positions, so its label says
    "position (mean of each group of 8)": "position, in groups of 8" read as if the ticks, 0 to
    250, counted groups (issue 39)."""
    labels = [
        arg.value
        for _, cell in _code_cells_with_source(_load(path))
        for node in ast.walk(_python(cell))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "plot_loss_by"
        for arg in [*node.args[2:3], *(k.value for k in node.keywords if k.arg == "xlabel")]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    ]
    wrong = [label for label in labels if re.search(r"\bin groups of\b", label)]
    assert not wrong, f"{path.name}: x labels {wrong} read as counting groups"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_errors_show_only_their_message(path: Path) -> None:
    """A stored error is one line, `ValueError: ...` (`%xmode Minimal`): a full traceback would
    show the reader the package's file paths on the machine that ran the chapter."""
    long = [
        index
        for index, cell in enumerate(_load(path)["cells"])
        for output in cell.get("outputs", [])
        if output["output_type"] == "error" and len(output["traceback"]) > 1
    ]
    assert not long, f"{path.name}: cells {long} stored a full traceback: add %xmode Minimal"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_stored_as_dev_execute_writes_it(path: Path) -> None:
    """Each chapter is in the canonical form `./dev execute` stores, so re-runs diff cleanly."""
    import nbformat

    stored = nbformat.read(path, as_version=4)
    canonical = store_outputs.canonical(nbformat.from_dict(json.loads(json.dumps(stored))))
    assert canonical == stored, (
        f"{path.name} is not stored canonically (split streams, timing metadata or a detailed "
        f"language_info): run .venv/bin/python tools/store_outputs.py book/{path.name}"
    )


def test_consecutive_streams_of_one_name_are_merged() -> None:
    import nbformat

    cell = nbformat.v4.new_code_cell("print(1); print(2)", execution_count=1)
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="1\n"),
        nbformat.v4.new_output("stream", name="stdout", text="2\n"),
        nbformat.v4.new_output("stream", name="stderr", text="warning\n"),
        nbformat.v4.new_output("stream", name="stdout", text="3\n"),
        nbformat.v4.new_output("stream", name="stdout", text="4\n"),
    ]
    cell.metadata["execution"] = {"iopub.status.busy": "2026-11-29T15:00:00"}
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.7"}
    out = store_outputs.canonical(nb)
    assert [(o.name, o.text) for o in out.cells[0].outputs] == [
        ("stdout", "1\n2\n"),
        ("stderr", "warning\n"),
        ("stdout", "3\n4\n"),
    ]
    assert "execution" not in out.cells[0].metadata
    assert out.metadata["language_info"] == {"name": "python"}
    nbformat.validate(out)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_chapter_opens_with_the_one_install_cell(path: Path) -> None:
    """Opened outside a clone, a chapter's first code cell installs gptembed (the install test
    runs it in a fresh venv): in every chapter, the collapsed cell `tools/install_cell.py`
    makes."""
    assert install_cell.problems(path) == [], (
        f"{path.name}: run python tools/install_cell.py --write"
    )


CONCEPT_DIAGRAMS = (
    "plot_embedding_sum",
    "plot_sinusoidal_clocks",
    "plot_rotary_rotation",
    "plot_rotary_wavelengths",
    "plot_alibi_bias",
    "plot_kv_cache",
    "plot_padded_batch",
)
"""The package's pictures of the ideas (gptembed.layer_diagrams and gptembed.scheme_diagrams), each
to be drawn on a page."""


@pytest.mark.parametrize("diagram", CONCEPT_DIAGRAMS)
def test_every_concept_diagram_is_a_numbered_figure_the_prose_refers_to(diagram: str) -> None:
    """Each concept diagram is drawn in some chapter (or the intro) as a named figure with alt
    text and a stored image, and that page's prose refers to the figure by its name."""
    found = []
    for path in NOTEBOOKS:
        nb = _load(path)
        prose = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        for _, cell in _code_cells_with_source(nb):
            if not re.search(rf"\b{diagram}\(", "".join(cell["source"])):
                continue
            meta = cell["metadata"].get("mystnb", {})
            name = meta.get("figure", {}).get("name")
            assert name, f"{path.name}: {diagram} is drawn outside a named figure"
            assert len(meta.get("image", {}).get("alt", "").split()) >= 25, (path.name, name)
            assert any(o.get("data", {}).get("image/png") for o in cell["outputs"]), name
            assert f"{{numref}}`{name}`" in prose, f"{path.name}: nothing refers to {name}"
            found.append(f"{path.name}:{name}")
    assert found, f"no page draws {diagram}"


def _diagram_cells() -> list[tuple[Path, int, str]]:
    """``(chapter, cell index, plot_<idea>)`` of every chapter cell that draws a concept diagram."""
    return [
        (path, index, diagram)
        for path in NOTEBOOKS
        for index, cell in _code_cells_with_source(_load(path))
        for diagram in CONCEPT_DIAGRAMS
        if re.search(rf"\b{diagram}\(", "".join(cell["source"]))
    ]


DIAGRAM_CELLS = _diagram_cells()


def _python(cell: dict) -> ast.Module:
    """A code cell's source as Python (IPython's ``%`` and ``!`` lines as the calls they make)."""
    return ast.parse(TransformerManager().transform_cell("".join(cell["source"])))


def test_every_concept_diagram_cell_is_checked_against_its_words() -> None:
    assert {diagram for *_, diagram in DIAGRAM_CELLS} == set(CONCEPT_DIAGRAMS)


@pytest.mark.parametrize(
    ("path", "index", "diagram"),
    DIAGRAM_CELLS,
    ids=[f"{path.name}:{index}" for path, index, _ in DIAGRAM_CELLS],
)
def test_a_diagrams_alt_text_is_what_its_describe_says_of_the_same_arguments(
    path: Path, index: int, diagram: str
) -> None:
    """A concept diagram's alt text (``mystnb.image.alt``, the page's ``<img alt>``) is its
    ``describe_<idea>`` of the arguments the cell draws it with, so it cannot drift from the
    picture when an argument changes. The cell runs after the chapter's imports (only those: a
    diagram's cell computes its own arguments) with ``plot_<idea>`` standing for
    ``describe_<idea>``; its last line, the drawing, then gives the words."""
    nb = _load(path)
    namespace: dict = {}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            imports = [n for n in _python(cell).body if isinstance(n, ast.Import | ast.ImportFrom)]
            exec(compile(ast.Module(imports, type_ignores=[]), path.name, "exec"), namespace)
    module = importlib.import_module(namespace[diagram].__module__)
    namespace[diagram] = getattr(module, diagram.replace("plot_", "describe_", 1))
    cell = nb["cells"][index]
    *body, last = _python(cell).body
    assert isinstance(last, ast.Expr), f"{path.name}: cell {index} must end with the drawing"
    exec(compile(ast.Module(body, type_ignores=[]), path.name, "exec"), namespace)
    said = eval(compile(ast.Expression(last.value), path.name, "eval"), namespace)
    stored = cell["metadata"]["mystnb"]["image"]["alt"]
    assert stored == said, (
        f"{path.name}: cell {index}'s alt text is not what {diagram.replace('plot_', 'describe_')} "
        f"says of its arguments; store this instead:\n{said}"
    )


PLUMBING = re.compile(
    r"\bglue\(|\bprint\(\s*f[\"']|^\s*f[\"']|f[\"'][^\"'\n]*\{[^}\n]*:[<>^]?[+ ]?[\d.,]"
)
"""A line of plumbing: a `glue(` call, a printed f-string, an f-string line of a printed table, or
an f-string with a width or a precision (a table's column, a number's digits)."""
PLUMBING_SHARE = 0.05


def shown_code_lines(path: Path) -> list[str]:
    """The lines of code a chapter's page shows: every code cell but those hidden or removed,
    without blank lines and comments."""
    return [
        line
        for cell in _load(path)["cells"]
        if cell["cell_type"] == "code" and not SHOWN_NOWHERE & set(cell["metadata"].get("tags", []))
        for line in "".join(cell["source"]).splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


@pytest.mark.parametrize(
    ("line", "plumbing"),
    [
        ('glue("n_runs", len(lag3))', True),
        ('print(f"{name:12}{len(rows):>5}")', True),
        ('    f"{min(lag3_k):9.2f} to{max(lag3_k):6.2f}"', True),
        ('label = f"{value:.3f}"', True),
        ("print(layer)", False),
        ("losses = token_losses(model, x, y)  # (B, T)", False),
        ('model = at_length(run.model, 4 * T, "tile")', False),
    ],
)
def test_plumbing_is_told_from_computation(line: str, plumbing: bool) -> None:
    assert bool(PLUMBING.search(line)) is plumbing


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_code_a_page_shows_is_the_computation(path: Path) -> None:
    """Glued values and printed tables go through helpers or a hidden cell (`hide-input` where
    the cell prints, `remove-cell` where it only glues): under 5% of the lines a page shows."""
    lines = shown_code_lines(path)
    plumbing = [line for line in lines if PLUMBING.search(line)]
    assert len(plumbing) <= PLUMBING_SHARE * len(lines), (
        f"{path.name}: {len(plumbing)} of {len(lines)} shown code lines are glue or table "
        f"formatting (at most {PLUMBING_SHARE:.0%}), such as {plumbing[:3]}"
    )
