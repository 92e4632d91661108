"""What every figure shares: no pyplot, shown once in Jupyter, a clear error without
matplotlib, panels that fit the page, and text measured as the page shows it."""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

import gptembed
from gptembed._figures import (
    FIGSIZE,
    new_figure,
    panel_grid,
    smallest_text_px,
)
from gptembed.plotting import (
    plot_loss_curves,
    plot_position_similarity,
)

pytestmark = pytest.mark.usefixtures("no_pyplot_figures")


FIGURE_MODULES = (
    "gptembed.plotting",
    "gptembed.cost_figures",
    "gptembed.layer_diagrams",
    "gptembed.scheme_diagrams",
)
"""The modules that draw, each with matplotlib through :mod:`gptembed._figures`."""

ONE_FIGURE_EACH = (
    "from gptembed.plotting import plot_loss_curves\n"
    "from gptembed.cost_figures import plot_context_costs\n"
    "from gptembed.layer_diagrams import plot_kv_cache\n"
    "from gptembed.scheme_diagrams import plot_alibi_bias\n"
    "figures = [plot_loss_curves({'run': [2.0, 1.0]}), plot_context_costs('gpt2-small', "
    "[256, 512]), plot_kv_cache(2), plot_alibi_bias(2, 3)]\n"
)
"""Code that imports every figure module and draws a figure with each."""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_the_figure_modules_are_those_that_draw() -> None:
    """Every public module that draws (imports the shared figure helpers) is one of the
    FIGURE_MODULES the tests below check, and no other module imports one of them."""
    package = Path(gptembed.__file__).parent
    sources = {f"gptembed.{p.stem}": p.read_text(encoding="utf-8") for p in package.glob("*.py")}
    drawing = {name for name, text in sources.items() if "from ._figures import" in text}
    assert drawing == set(FIGURE_MODULES)
    importers = {
        name
        for name, text in sources.items()
        for module in (*FIGURE_MODULES, "gptembed._figures")
        if re.search(rf"^from \.{module.split('.')[1]} import", text, re.MULTILINE)
    }
    assert importers <= set(FIGURE_MODULES), "a module that computes imports a figure module"


def test_the_modules_that_compute_import_without_matplotlib() -> None:
    """The math never imports plotting: every other module imports where matplotlib is not."""
    others = sorted(
        f"gptembed.{info.name}"
        for info in pkgutil.iter_modules(gptembed.__path__)
        if f"gptembed.{info.name}" not in (*FIGURE_MODULES, "gptembed._figures")
    )
    result = _run(
        "import importlib, sys\n"
        "sys.modules['matplotlib'] = None  # as if it were not installed\n"
        f"for name in {others!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.startswith('matplotlib')))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['matplotlib']"  # only the None put there


def test_axes_on_a_subfigure_return_the_whole_figure() -> None:
    """What a notebook shows is the top-level figure, even when the axes sit in a subfigure."""
    fig = Figure()
    ax = fig.subfigures(1, 2)[1].subplots()
    assert plot_loss_curves({"run": [2.0, 1.0]}, ax=ax) is fig


def test_no_figure_module_imports_pyplot() -> None:
    result = _run(f"import sys\n{ONE_FIGURE_EACH}print('matplotlib.pyplot' in sys.modules)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


FORMATS = {None: "image/png", "svg": "image/svg+xml", "retina": "image/png"}
"""The figure format a reader may choose in IPython (None: the default), and what it shows."""


@pytest.mark.toolchain  # IPython comes with the book's tools, not with the package
def test_a_returned_figure_displays_in_ipython_in_the_format_the_reader_chose() -> None:
    """Jupyter shows a cell's value through IPython's formatters: the Figure needs one, PNG by
    default. Issue 25: the import used to reset the formats to PNG; a reader's choice is kept.
    One process imports the figure modules afresh for each choice (their module code runs
    again, as in a new kernel), made before the import."""
    result = _run(
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from IPython.core.pylabtools import select_figure_formats\n"
        "shell = InteractiveShell.instance()\n"
        f"for chosen in {list(FORMATS)!r}:\n"
        "    if chosen:  # None: the first pass, nothing chosen yet\n"
        "        select_figure_formats(shell, {chosen})\n"
        "    for name in [m for m in sys.modules if m.startswith('gptembed')]:\n"
        "        del sys.modules[name]\n"
        "    from gptembed.plotting import plot_loss_curves\n"
        "    fig = plot_loss_curves({'run': [2.0, 1.0]})\n"
        "    data, metadata = shell.display_formatter.format(fig)\n"
        "    print(chosen, sorted(data))\n"
        "    if chosen is None:  # the book's PNG: drawn at twice the size it is shown at\n"
        "        png = data['image/png']\n"
        "        drawn = int.from_bytes(png[16:20], 'big')  # the PNG's width\n"
        "        shown = metadata['image/png']\n"
        "        print(drawn // 2 == shown['width'], sorted(shown))\n"
        "        print(shown['width'], round(fig.get_size_inches()[0] * 100))"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"None {sorted(['image/png', 'text/plain'])}"
    assert lines[1] == "True ['width']"  # no height: a narrowed image keeps its proportions
    shown, figure = (int(n) for n in lines[2].split())
    assert abs(shown - figure) <= 30, (shown, figure)  # shown at 100 px an inch, tight box
    assert lines[3:] == [
        f"{chosen} {sorted([shown, 'text/plain'])}" for chosen, shown in list(FORMATS.items())[1:]
    ]


@pytest.mark.parametrize("name", FIGURE_MODULES)
def test_without_matplotlib_the_error_says_to_install_the_plot_extra(name: str) -> None:
    result = _run(
        "import sys\n"
        "sys.modules['matplotlib'] = None  # as if it were not installed\n"
        "import gptembed\n"
        "try:\n"
        f"    import {name}\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        f"{name} draws with matplotlib, which is not installed: install the plot extra with "
        'pip install "gptembed[plot]"'
    )


def test_smallest_text_px_counts_drawn_text_as_the_page_shows_it() -> None:
    fig, ax = new_figure((6.0, 3.0))
    fig.set_layout_engine("none")  # nothing to lay out: measured without a draw
    ax.set_title("title", fontsize=14)
    ax.tick_params(labelsize=7.2)  # 7.2 pt at 100 pixels an inch: 10 px
    assert smallest_text_px(fig) == pytest.approx(10.0)
    ax.set_axis_off()  # the tick labels are no longer drawn
    assert smallest_text_px(fig) == pytest.approx(14 * 100 / 72)
    wide, wide_ax = new_figure((13.44, 3.0))  # about twice the page: shown at half size
    wide_ax.set_axis_off()  # (laid out by constrained layout: measured after a draw)
    wide_ax.set_title("title", fontsize=14)
    assert smallest_text_px(wide) == pytest.approx(14 * 100 / 72 / 2, rel=0.05)
    wide_ax.set_title("")
    with pytest.raises(ValueError, match="draws no text"):
        smallest_text_px(wide)


@pytest.mark.parametrize(
    ("n_panels", "width", "extra", "grid"),
    [
        (1, 7.0, 0.0, (1, 1)),
        (2, 7.0, 0.0, (2, 1)),
        (4, 3.0, 1.0, (2, 2)),
        (3, 3.0, 1.0, (2, 2)),
        (4, 2.6, 1.2, (2, 2)),
        (3, 2.0, 0.9, (1, 3)),
        (2, 9.0, 0.0, (2, 1)),
    ],
)
def test_panels_wrap_into_rows_that_fit_the_page(
    n_panels: int, width: float, extra: float, grid: tuple[int, int]
) -> None:
    assert panel_grid(n_panels, width, extra) == grid
    columns = grid[1]
    assert columns * width + extra <= FIGSIZE[0] or columns == 1


def test_a_short_last_row_leaves_no_empty_panel() -> None:
    rng = np.random.default_rng(0)
    fig = plot_position_similarity({f"t{k}": rng.normal(size=(8, 16)) for k in range(3)})
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert len(heatmaps) == 3 and len(fig.axes) == 4  # three heat maps and the colour bar
