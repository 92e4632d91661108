"""Chapter 4's cost explorer: a ``{cost-explorer}`` directive, and the data its page is given.

The directive writes the explorer's controls, its empty table, turning points and chart, and its
texts into the page, labelled for screen readers. After the build, ``_static/cost_explorer_data.js``
holds ``gptembed.explorer.explorer_data()``: the controls' choices, the models' sizes and the
constants of the package's formulas. The page loads it and ``cost_explorer.js`` (next to this
file) with plain ``<script src>`` tags, which work from ``file://`` too (a ``fetch`` of a JSON
file would not); the script computes every value with the package's formulas, mirrored in exact
integers, and the browser tests compare it with the package at random settings. The three files
are added to the pages that hold the directive and to no other. In the chapter's downloadable
copy, the directive becomes a sentence that says where the explorer is
(``readable_downloads.add_download_text``).
"""

from __future__ import annotations

import functools
from html import escape
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

from _ext.page_widget import WIDGET_CLASS, Widget, add_widget
from gptembed.explorer import MEMORY_RULE, OPTION_SOURCES, explorer_data

HERE = Path(__file__).parent
SCRIPT, STYLE, DATA = "cost_explorer.js", "cost_explorer.css", "cost_explorer_data.js"
START: dict[str, Any] = {
    "model": "gpt2-small",
    "tokens": 1024,
    "dtype": "fp32",
    "batch": 1,
    "mode": "eager",
}
"""The setting the explorer opens at: GPT-2 small at its own 1,024 tokens, fp32, one sequence,
eager attention, and none of the options (every head its own keys, no window, no band)."""
IN_DOWNLOAD = (
    "*The cost explorer is on this chapter's page in the book; `context_costs` (below) "
    "computes every number it shows.*"
)
"""What the directive becomes in the chapter's downloadable copy."""
HELD = '<span class="ce-held"></span>'
"""Where a heading names what the chosen kind of attention holds (the script fills it in)."""


def _slot(name: str) -> str:
    return f'<data id="ce-{name}"></data>'


ROWS = (
    (
        "Position table for this context",
        f"{_slot('position-params')} parameters, {_slot('position-share')} of all "
        f"{_slot('params')}",
    ),
    ("All weights", _slot("weights")),
    (f"{HELD}, one layer", _slot("scores-layer")),
    (f"{HELD}, all layers", _slot("scores-all")),
    ("KV cache", _slot("kv-cache")),
    (
        "Activations kept for the backward pass",
        f"{_slot('activations-layer')} a layer, {_slot('activations-all')} in all layers, "
        f"and {_slot('logits')} of logits",
    ),
    (
        '<span class="ce-states-heading" data-decode="The weights">'
        "Weights, gradients and Adam's moments</span>",
        _slot("states"),
    ),
    ("What attention keeps at once", _slot("kept")),
    ("What the step keeps in all", _slot("total")),
    ("Accelerators that hold the step", _slot("holds")),
    (
        "Attention's share of the FLOPs",
        f"{_slot('share')} (by Kaplan et al.'s count: {_slot('share-kaplan')})",
    ),
)
"""The result table's rows: each heading, and the ``<data>`` slots the script fills."""

LEGEND = (
    ("weights", "All weights"),
    ("position", "Position table"),
    ("kv", "KV cache"),
    ("scores", "Eager attention's scores, all layers"),
    ("activations", "A training step's activations and logits"),
    ("total", "What the step keeps in all (this kind of attention)"),
    ("accelerator", "16 GB and 80 GB of memory"),
)
"""The chart's lines, by the class the script draws each with, and their names."""


@functools.cache
def data() -> dict[str, Any]:
    """``gptembed.explorer.explorer_data()``, computed once a process (it is the same each time)."""
    return explorer_data()


def _options(items: list[tuple[str, str]], selected: str) -> str:
    return "".join(
        f'<option value="{escape(value)}"{" selected" if value == selected else ""}>'
        f"{escape(label)}</option>"
        for value, label in items
    )


def _select(name: str, label: str, options: str, extra: str = "") -> str:
    return (
        f'<div class="cost-explorer__field cost-explorer__field--{name}">'
        f'<label for="ce-{name}">{label}</label>'
        f'<select id="ce-{name}" name="{name}"{extra}>{options}</select></div>'
    )


def kv_choices(n_heads: int) -> list[tuple[str, str]]:
    """The key and value heads a model of ``n_heads`` heads can have: every divisor, most first
    (the script makes the same list for each model it switches to)."""
    divisors = [g for g in range(n_heads, 0, -1) if n_heads % g == 0]
    names = {n_heads: f"{n_heads} (multi-head)", 1: "1 (multi-query)"}
    return [(str(g), names.get(g, f"{g} (grouped-query)")) for g in divisors]


def explorer_html(data: dict[str, Any]) -> str:
    """The explorer's controls, result table, turning points, chart and texts for ``data``
    (``explorer_data()``); the memory rule and the options' sources in a closed ``<details>``."""
    models = [(m["key"], f"{m['label']} ({m['sizes']})") for m in data["models"]]
    start_model = next(m for m in data["models"] if m["key"] == START["model"])
    most = data["max_tokens"]
    tokens = START["tokens"]
    power = tokens.bit_length() - 1
    length_text = f"{tokens:,} tokens"
    modes = "".join(
        f'<label class="cost-explorer__choice"><input type="radio" name="mode" '
        f'value="{mode["key"]}"{" checked" if mode["key"] == START["mode"] else ""}> '
        f"{escape(mode['label'])}</label>"
        for mode in data["modes"]
    )
    start_mode = next(mode for mode in data["modes"] if mode["key"] == START["mode"])
    held = f'<span class="ce-held">{escape(start_mode["held"])}</span>'
    rows = "".join(
        f'<tr><th scope="row">{heading.replace(HELD, held)}</th><td>{slots}</td></tr>'
        for heading, slots in ROWS
    )
    windows = [("", "none: every key")] + [
        (str(w), f"{w:,}" + (" (Mistral 7B)" if w == 4096 else "")) for w in data["windows"]
    ]
    legend = "".join(
        f'<li><svg class="cost-explorer__swatch" viewBox="0 0 24 8" aria-hidden="true" '
        f'focusable="false"><line class="ce-line ce-line--{key}" x1="0" y1="4" x2="24" y2="4">'
        f"</line></svg>{escape(name)}</li>"
        for key, name in LEGEND
    )
    sources = " ".join(escape(OPTION_SOURCES[key]) for key in ("banded", "kv_heads", "window"))
    return (
        f'<div class="{WIDGET_CLASS} cost-explorer" data-cost-explorer>'
        '<form class="cost-explorer__controls" aria-label="Settings of the cost explorer">'
        + _select("model", "Model", _options(models, START["model"]))
        + '<div class="cost-explorer__field cost-explorer__field--length">'
        '<label for="ce-tokens">Context length in tokens</label>'
        '<div class="cost-explorer__length">'
        f'<input type="number" id="ce-tokens" name="n" min="1" max="{most}" step="1" '
        f'value="{tokens}" inputmode="numeric" aria-describedby="ce-tokens-help">'
        f'<input type="range" id="ce-length" name="power" min="0" '
        f'max="{most.bit_length() - 1}" step="1" value="{power}" '
        f'aria-label="Context length by powers of two" aria-valuetext="{length_text}">'
        "</div>"
        f'<p class="cost-explorer__help" id="ce-tokens-help">Type any whole number from 1 to '
        f"{most:,}, or slide through the powers of two.</p>"
        f'<output id="ce-length-shown" for="ce-tokens ce-length" aria-hidden="true">'
        f"{length_text}</output>"
        "</div>"
        + _select(
            "dtype",
            "Number format",
            _options(
                [(d["key"], f"{d['label']} ({d['bytes']} bytes)") for d in data["dtypes"]],
                START["dtype"],
            ),
        )
        + _select(
            "batch",
            "Batch size",
            _options([(str(b), str(b)) for b in data["batch_sizes"]], str(START["batch"])),
        )
        + '<fieldset class="cost-explorer__modes"><legend>Attention</legend>'
        + modes
        + "</fieldset>"
        '<fieldset class="cost-explorer__options"><legend>Options</legend>'
        + _select(
            "kv",
            "Key and value heads",
            _options(kv_choices(start_model["n_heads"]), str(start_model["n_heads"])),
            ' autocomplete="off"',  # the script rebuilds its choices for each model
        )
        + _select("window", "Sliding window in tokens", _options(windows, ""))
        + '<label class="cost-explorer__choice cost-explorer__choice--banded">'
        '<input type="checkbox" id="ce-banded" name="banded" value="1"> '
        f"GPT-3's alternating dense and banded layers (a band of {data['band']} keys, assumed)"
        "</label>"
        "</fieldset></form>"
        '<table class="cost-explorer__results"><caption id="ce-caption">'
        "What the setting costs</caption><tbody>" + rows + "</tbody></table>"
        '<p class="cost-explorer__note" id="ce-note"></p>'
        '<div class="cost-explorer__turns">'
        '<p class="cost-explorer__turns-title" id="ce-turns-title">Turning points for this '
        "model, batch and options</p>"
        '<ul id="ce-turns" aria-labelledby="ce-turns-title"></ul>'
        '<p class="cost-explorer__passed" id="ce-passed" aria-live="polite"></p>'
        "</div>"
        '<figure class="cost-explorer__chart">'
        '<svg id="ce-chart" role="img" aria-labelledby="ce-chart-caption" '
        'viewBox="0 0 640 340" preserveAspectRatio="xMidYMid meet"></svg>'
        '<figcaption><ul class="cost-explorer__legend">' + legend + "</ul>"
        '<p id="ce-chart-caption"></p></figcaption>'
        "</figure>"
        '<details class="cost-explorer__about"><summary>How the explorer counts, and its '
        "sources</summary>"
        f'<p class="cost-explorer__rule" id="ce-rule">{escape(MEMORY_RULE)}</p>'
        f'<p class="cost-explorer__sources" id="ce-sources">{sources}</p>'
        "</details>"
        '<p class="cost-explorer__link"><a id="ce-link" href="">'
        "A link to this setting</a> (the address bar holds it too).</p>"
        '<p class="cost-explorer__summary" id="ce-summary" aria-live="polite"></p>'
        "<noscript><p>The explorer needs JavaScript; <code>context_costs</code> in the next "
        "cell computes the same numbers.</p></noscript>"
        "</div>"
    )


class cost_explorer(nodes.General, nodes.Element):
    """Where the explorer goes in the page."""


def setup(app: Sphinx) -> dict[str, Any]:
    add_widget(
        app,
        Widget(
            directive="cost-explorer",
            node=cost_explorer,
            html=explorer_html,
            data=data,
            folder=HERE,
            script=SCRIPT,
            style=STYLE,
            data_file=DATA,
            data_global="GPTEMBED_COST_DATA",
            data_source="gptembed.explorer.explorer_data()",
            in_download=IN_DOWNLOAD,
        ),
    )
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}
