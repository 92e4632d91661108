"""Chapter 4's cost explorer: a ``{cost-explorer}`` directive, and the data its page looks up.

The directive writes the explorer's controls and its empty table into the page, labelled for
screen readers. After the build, ``_static/cost_explorer_data.js`` holds
``gptembed.explorer.explorer_grid()``: every value the explorer can show, computed by the
package. The page loads it and ``cost_explorer.js`` (next to this file) with plain ``<script
src>`` tags, which work from ``file://`` too (a ``fetch`` of a JSON file would not), and the
script only looks values up and shows them. The three files are added to the pages that hold
the directive and to no other. In the chapter's downloadable copy, the directive becomes a
sentence that says where the explorer is (``readable_downloads.add_download_text``).
"""

from __future__ import annotations

import functools
import json
import shutil
from html import escape
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from _ext.readable_downloads import add_download_text
from gptembed.explorer import explorer_grid

HERE = Path(__file__).parent
SCRIPT, STYLE, DATA = "cost_explorer.js", "cost_explorer.css", "cost_explorer_data.js"
START = {"model": "gpt2-small", "length": 1024, "dtype": 0, "batch": 1, "mode": "eager"}
"""The setting the explorer opens at: GPT-2 small at its own 1,024 tokens, fp32, one sequence."""
IN_DOWNLOAD = (
    "*The cost explorer is on this chapter's page in the book; `context_costs` (below) "
    "computes every number it shows.*"
)
"""What the directive becomes in the chapter's downloadable copy."""
HELD = '<span class="ce-held"></span>'
"""Where a heading names what the chosen kind of attention holds (the script fills it in)."""
ROWS = (
    (
        "Position table for this context",
        '<data id="ce-position-params"></data> parameters, '
        '<data id="ce-position-share"></data> of all <data id="ce-params"></data>',
    ),
    ("All weights", '<data id="ce-weights"></data>'),
    (f"{HELD}, one layer", '<data id="ce-scores-layer"></data>'),
    (f"{HELD}, all layers", '<data id="ce-scores-all"></data>'),
    ("KV cache", '<data id="ce-kv-cache"></data>'),
    ("What attention keeps at once", '<data id="ce-kept"></data>'),
    ("Accelerators that hold it", '<data id="ce-holds"></data>'),
    (
        "Attention's share of the FLOPs",
        '<data id="ce-share"></data> (by Kaplan et al.\'s count: '
        '<data id="ce-share-kaplan"></data>)',
    ),
)
"""The result table's rows: each heading, and the ``<data>`` slots the script fills."""


@functools.cache
def grid() -> dict[str, Any]:
    """``gptembed.explorer.explorer_grid()``, computed once a process (it is the same each time)."""
    return explorer_grid()


def _options(labels: list[str], selected: int) -> str:
    return "".join(
        f'<option value="{i}"{" selected" if i == selected else ""}>{escape(label)}</option>'
        for i, label in enumerate(labels)
    )


def _select(name: str, label: str, options: str) -> str:
    return (
        f'<div class="cost-explorer__field"><label for="ce-{name}">{label}</label>'
        f'<select id="ce-{name}" name="{name}">{options}</select></div>'
    )


def explorer_html(grid: dict[str, Any]) -> str:
    """The explorer's controls and result table for ``grid`` (``explorer_grid()``)."""
    models = [f"{m['label']} ({m['sizes']})" for m in grid["models"]]
    start_model = [m["key"] for m in grid["models"]].index(START["model"])
    lengths = [length["tokens"] for length in grid["lengths"]]
    start_length = lengths.index(START["length"])
    length_text = grid["lengths"][start_length]["label"]
    modes = "".join(
        f'<label class="cost-explorer__choice"><input type="radio" name="mode" value="{i}"'
        f"{' checked' if mode['key'] == START['mode'] else ''}> {escape(mode['label'])}</label>"
        for i, mode in enumerate(grid["modes"])
    )
    start_mode = next(mode for mode in grid["modes"] if mode["key"] == START["mode"])
    held = f'<span class="ce-held">{escape(start_mode["held"])}</span>'
    rows = "".join(
        f'<tr><th scope="row">{heading.replace(HELD, held)}</th><td>{slots}</td></tr>'
        for heading, slots in ROWS
    )
    return (
        '<div class="cost-explorer" data-cost-explorer>'
        '<form class="cost-explorer__controls" aria-label="Settings of the cost explorer">'
        + _select("model", "Model", _options(models, start_model))
        + '<div class="cost-explorer__field cost-explorer__field--length">'
        '<label for="ce-length">Context length</label>'
        f'<input type="range" id="ce-length" name="length" min="0" '
        f'max="{len(grid["lengths"]) - 1}" step="1" value="{start_length}" '
        f'aria-valuetext="{length_text}">'
        '<div class="cost-explorer__range" aria-hidden="true">'
        f"<span>{grid['lengths'][0]['label']}</span><span>{grid['lengths'][-1]['label']}</span>"
        "</div>"
        f'<output id="ce-length-shown" for="ce-length" aria-hidden="true">{length_text}</output>'
        "</div>"
        + _select(
            "dtype",
            "Number format",
            _options([f"{d['label']} ({d['bytes']} bytes)" for d in grid["dtypes"]], 0),
        )
        + _select(
            "batch",
            "Batch size",
            _options([str(b) for b in grid["batch_sizes"]], grid["batch_sizes"].index(1)),
        )
        + '<fieldset class="cost-explorer__modes"><legend>Attention</legend>'
        + modes
        + "</fieldset></form>"
        '<table class="cost-explorer__results"><caption id="ce-caption">'
        "What the setting costs</caption><tbody>" + rows + "</tbody></table>"
        '<p class="cost-explorer__note" id="ce-note"></p>'
        '<p class="cost-explorer__summary" id="ce-summary" aria-live="polite"></p>'
        "<noscript><p>The explorer needs JavaScript; <code>context_costs</code> in the next "
        "cell computes the same numbers.</p></noscript>"
        "</div>"
    )


class cost_explorer(nodes.General, nodes.Element):
    """Where the explorer goes in the page."""


class CostExplorer(SphinxDirective):
    """``{cost-explorer}``: the explorer, at this point of the page (no arguments, no content)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        return [cost_explorer()]


def visit_html(translator: Any, node: cost_explorer) -> None:
    translator.body.append(explorer_html(grid()))
    raise nodes.SkipNode


def skip(translator: Any, node: cost_explorer) -> None:
    raise nodes.SkipNode


def add_page_files(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Load the data, the script and the style on pages that hold an explorer, and no other."""
    if doctree is None or not any(doctree.findall(cost_explorer)):
        return
    app.add_css_file(STYLE)
    app.add_js_file(DATA)
    app.add_js_file(SCRIPT)


def write_files(app: Sphinx, exception: Exception | None) -> None:
    """Write the grid, and copy the script and style, into the build's ``_static``."""
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    data = json.dumps(grid(), separators=(",", ":"))
    (static / DATA).write_text(
        f"// gptembed.explorer.explorer_grid(), written by the book's build.\n"
        f"window.GPTEMBED_COST_GRID = {data};\n",
        encoding="utf8",
    )
    for name in (SCRIPT, STYLE):
        shutil.copyfile(HERE / name, static / name)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(
        cost_explorer,
        html=(visit_html, None),
        latex=(skip, None),
        text=(skip, None),
        man=(skip, None),
        texinfo=(skip, None),
    )
    app.add_directive("cost-explorer", CostExplorer)
    app.connect("html-page-context", add_page_files)
    app.connect("build-finished", write_files)
    add_download_text(app, "cost-explorer", IN_DOWNLOAD)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
