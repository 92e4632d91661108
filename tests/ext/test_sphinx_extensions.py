"""The book's Sphinx extensions (`_ext/`) on a small site, built once for all these tests.

`roots/test-site` is configured as the book is (myst-nb rendering stored outputs, sphinx-exercise,
numbered figures, the download source as `.ipynb`) and its one chapter uses what each extension
handles: a glued number, a numbered figure and a reference to it, two exercises (one with a
title, whose solution spans a code cell) and their solutions, a "How we know" dropdown that holds
a code cell, a sphinx-design dropdown, the cost explorer, and cells tagged `remove-cell` and
`hide-input` as the chapters tag their plumbing. Its `conf.py` adds an inline script as
sphinx-thebe does, so that fix has something to fix. The build goes to a temporary folder, with
Sphinx's own test application.
"""

from __future__ import annotations

import json
import re
import shutil
from io import StringIO
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from sphinx.testing.util import SphinxTestApp

from _ext.cost_explorer import DATA, HERE, IN_DOWNLOAD, SCRIPT, STYLE, explorer_html
from gptembed.explorer import explorer_data

pytestmark = pytest.mark.toolchain  # Sphinx, myst-nb and sphinx-exercise: the book's tools

SITE = Path(__file__).parent / "roots" / "test-site"
INLINE_SCRIPT = "<script>const EXTENSIONS_SITE = true;</script>"
"""The inline script the site's conf.py adds."""


class Built(NamedTuple):
    """The built site: its source folder, its HTML folder and what Sphinx warned of."""

    src: Path
    html: Path
    warnings: str


def build_html(src: Path) -> Built:
    """The Sphinx project in ``src`` built as HTML with Sphinx's test application."""
    warnings = StringIO()
    app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=warnings)
    try:
        app.build()
    finally:
        app.cleanup()
    return Built(src, Path(app.outdir), warnings.getvalue())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The site, copied to a temporary folder and built there as HTML."""
    src = tmp_path_factory.mktemp("site") / "src"
    shutil.copytree(SITE, src)
    return build_html(src)


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    """``gptembed.explorer.explorer_data()``, computed here rather than taken from the build."""
    return explorer_data()


def _page(built: Built, name: str) -> str:
    return (built.html / f"{name}.html").read_text(encoding="utf8")


def test_the_site_builds_without_a_warning(built: Built) -> None:
    """As the book's build is strict (-W), so is this one."""
    assert built.warnings == ""


def test_the_chapter_shows_its_glued_number_figure_reference_and_exercise(built: Built) -> None:
    """What myst-nb, Sphinx's numfig and sphinx-exercise make of the chapter with the book's
    extensions loaded: the number glued in a stored output, formatted; "Fig. 1"; "Exercise 1"."""
    page = _page(built, "chapter")
    assert '<span class="caption-number">Fig. 1 </span><span class="caption-text">A dot.' in page
    assert (
        'Pi is about <span class="pasted-text">3.14</span>, and <a class="reference internal" '
        'href="#fig-dot"><span class="std std-numref">Fig. 1</span></a> shows a dot.'
    ) in page
    assert '<span class="caption-number">Exercise 1 </span>' in page


def test_the_explorer_and_its_files_are_on_its_page_and_no_other(
    built: Built, data: dict[str, Any]
) -> None:
    """cost_explorer: the directive writes the explorer's markup, and only its page loads the
    data, the script and the style."""
    tags = (
        f'<link rel="stylesheet" type="text/css" href="_static/{STYLE}" />',
        f'<script src="_static/{DATA}"></script>',
        f'<script src="_static/{SCRIPT}"></script>',
    )
    chapter, index = _page(built, "chapter"), _page(built, "index")
    assert explorer_html(data) in chapter
    assert all(tag in chapter for tag in tags), tags
    assert not any(tag in index for tag in tags), tags
    assert "cost-explorer" not in index


def test_the_explorer_data_is_the_packages(built: Built, data: dict[str, Any]) -> None:
    """cost_explorer: `_static` holds the package's data as a script, and the extension's script
    and style."""
    static = built.html / "_static"
    script = re.fullmatch(
        r"//[^\n]*\nwindow\.GPTEMBED_COST_DATA = (?P<data>.*);\n",
        (static / DATA).read_text(encoding="utf8"),
        re.DOTALL,
    )
    assert script is not None
    assert json.loads(script["data"]) == json.loads(json.dumps(data))
    for name in (SCRIPT, STYLE):
        assert (static / name).read_bytes() == (HERE / name).read_bytes(), name


def test_a_how_we_know_dropdown_holds_its_cells_closed(built: Built) -> None:
    """how_we_know: the cells between the start and the end are in one closed `<details>`, whose
    summary names it; the prose before and after stays outside."""
    page = _page(built, "chapter")
    dropdown = re.search(r'<details class="how-we-know">(.*?)</details>', page, re.DOTALL)
    assert dropdown is not None and page.count("<details") == page.count("</details>")
    inside = dropdown[1]
    assert "<summary>How we know: Counting the characters</summary>" in inside
    assert "The image is 96 base64 characters:" in inside
    assert "24 groups of four base64 characters" in inside and 'class="cell' in inside
    assert "The dot is one pixel." not in inside and "Back in the main line." not in inside
    assert page.index("The dot is one pixel.") < dropdown.start()
    assert page.index("Back in the main line.") > dropdown.end()


@pytest.mark.parametrize(
    ("cells", "warning"),
    [
        (["```{how-we-know-start} Open\n```\nText.", "## A heading\n\nMore."], "no heading"),
        (["Text.\n```{how-we-know-end}\n```"], "without a how-we-know-start"),
    ],
)
def test_a_dropdown_that_cannot_close_is_a_warning(
    tmp_path: Path, cells: list[str], warning: str
) -> None:
    """how_we_know: a start whose section ends first (a heading inside), or an end with no start,
    warns (an error in the book's strict build) and names the problem."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["myst_nb", "_ext.how_we_know"]\nnb_execution_mode = "off"\n'
    )
    (src / "index.md").write_text("# Page\n\n" + "\n\n".join(cells) + "\n")
    warnings = build_html(src).warnings
    assert warning in warnings, warnings


@pytest.mark.parametrize(
    ("pages", "problem"),
    [
        ({"index.md": "# Page\n\nSee {cost-explorer}`start=64`.\n"}, "needs a text and a setting"),
        ({"index.md": "# Page\n\nSee {cost-explorer}`the explorer <n=1024>`.\n"}, "0 pages hold"),
        (
            {
                "index.md": "# Page\n\n```{toctree}\na\nb\n```\n",
                "a.md": "# A\n\n```{cost-explorer}\n```\n",
                "b.md": "# B\n\n```{cost-explorer}\n```\n\n{cost-explorer}`here <n=1>`\n",
            },
            "2 pages hold",
        ),
    ],
)
def test_a_widget_link_without_a_setting_or_one_widget_page_is_named(
    tmp_path: Path, pages: dict[str, str], problem: str
) -> None:
    """page_widget's role: a link with no text and setting is an error, and a link when no page
    or two pages hold the widget a warning, each naming the problem (the book builds with
    warnings as errors); the link's text stays on the page either way."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["myst_nb", "_ext.cost_explorer"]\nnb_execution_mode = "off"\n'
    )
    for name, text in pages.items():
        (src / name).write_text(text)
    built = build_html(src)
    assert problem in built.warnings, built.warnings


def test_a_widget_link_opens_the_setting_on_the_widgets_page(tmp_path: Path) -> None:
    """page_widget's role, with one page holding the widget: a link to that page's section, the
    setting in its query."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["myst_nb", "_ext.cost_explorer"]\nnb_execution_mode = "off"\n'
    )
    (src / "index.md").write_text("# Page\n\n```{toctree}\na\n```\n\n{cost-explorer}`go <n=8>`\n")
    (src / "a.md").write_text("# A\n\n## Costs\n\n```{cost-explorer}\n```\n")
    built = build_html(src)
    page = (built.html / "index.html").read_text(encoding="utf8")
    assert re.search(r'href="a\.html\?n=8#costs"[^>]*>go</a>', page), page[-3000:]


@pytest.mark.parametrize("name", ["index", "chapter"])
def test_an_inline_script_is_written_once(built: Built, name: str) -> None:
    """inline_scripts_once: Sphinx 7.4 alone writes the script twice on every page."""
    assert _page(built, name).count(INLINE_SCRIPT) == 1


def _download(built: Built) -> dict[str, Any]:
    """`_sources/chapter.ipynb`, the download button's file."""
    return json.loads((built.html / "_sources" / "chapter.ipynb").read_text(encoding="utf8"))


def test_the_downloadable_chapter_shows_values_not_roles(built: Built) -> None:
    """readable_downloads, with the explorer's text: `_sources/chapter.ipynb` (the download
    button's file) reads as plain markdown, as the page does: each exercise under its number and
    title, each solution closed in a `<details>` (a solution that spans cells: one for its text
    in each markdown cell), the box's title on a line of its own; the chapter itself is
    untouched."""
    markdown = [
        "".join(c["source"]) for c in _download(built)["cells"] if c["cell_type"] == "markdown"
    ]
    assert markdown == [
        '# A chapter\n\nA number, a figure, two exercises, a "How we know" dropdown and the cost '
        "explorer, as the\nchapters use them.",
        "Pi is about 3.14, and Fig. 1 shows a dot.\n\n"
        "**Exercise 1 (Find the dot)**\n\nWhere is the dot?\n\n"
        "<details><summary>Solution to Exercise 1 (Find the dot)</summary>\n\n"
        "Its code is in the cells that follow.\n\n</details>",
        "<details><summary>Solution to Exercise 1 (Find the dot), continued</summary>\n\n"
        "In the middle: the image has one row and one column.\n\n</details>\n\n"
        "**Exercise 2**\n\nHow big is the dot?\n\n"
        "<details><summary>Solution to Exercise 2</summary>\n\nOne pixel.\n\n</details>",
        "The dot is one pixel.\n\n**How we know: Counting the characters**\n\n"
        "The image is 96 base64 characters:",
        "Back in the main line.\n\n**New here? The dot in brief**\n\nA dot is one pixel.",
        f"## The explorer\n\n{IN_DOWNLOAD}",
    ]
    assert (built.src / "chapter.ipynb").read_bytes() == (SITE / "chapter.ipynb").read_bytes()


def test_the_download_collapses_the_cells_the_page_hides(built: Built) -> None:
    """readable_downloads: the download keeps every code cell, its source and outputs, so that it
    runs as the chapter does; what the page hides is collapsed as JupyterLab reads a notebook's
    metadata (`jupyter.source_hidden`; `collapsed` and `jupyter.outputs_hidden` for outputs): a
    `remove-cell` cell whole, a `hide-input` cell's source, and a solution's code and outputs.
    A cell the page shows stays open."""
    chapter = json.loads((SITE / "chapter.ipynb").read_text(encoding="utf8"))
    code = {c["id"]: c for c in _download(built)["cells"] if c["cell_type"] == "code"}
    for cell in chapter["cells"]:
        if cell["cell_type"] == "code":
            assert (code[cell["id"]]["source"], code[cell["id"]]["outputs"]) == (
                cell["source"],
                cell["outputs"],
            ), cell["id"]
    figure = {c["id"]: c for c in chapter["cells"]}["figure"]["metadata"]
    assert figure["tags"] == ["hide-input"]
    whole = {"jupyter": {"source_hidden": True, "outputs_hidden": True}, "collapsed": True}
    assert {name: cell["metadata"] for name, cell in code.items()} == {
        "glue": {"tags": ["remove-cell"], **whole},
        "figure": {**figure, "jupyter": {"source_hidden": True}},
        "solution-code": whole,
        "hwk-code": {},
    }
