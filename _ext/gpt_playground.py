"""The small GPT, live in the page: a ``{gpt-playground}`` directive, and the weights it is given.

The directive writes the playground's controls and its empty results into the page. After the
build, ``_static/gpt_playground_data.js`` holds :func:`playground_data`: the character set,
held-out passages, and each stored model's weights (chapter 7's text model, seed 0; chapter
10's five scheme models, seed 0), base64 of little-endian float32 (float16 for the scheme models,
stored so), with the rows a grown learned table takes (:func:`~gptembed.gpt.at_length`'s fresh
rows, seeds 0 to 2). The page loads it and ``gpt_playground.js`` with plain ``<script src>``
tags, which work from ``file://``; the script runs the model's forward pass on those weights
(``gptembed.gpt.forward``, mirrored, in float64 arithmetic), and the browser tests
(``tests/book/test_playground_in_browser.py``) hold every value it shows to the package's. The
three files are added to the page that holds the directive and to no other; in the chapter's
downloadable copy the directive becomes a sentence.
"""

from __future__ import annotations

import base64
import functools
from pathlib import Path
from typing import Any

import numpy as np
from docutils import nodes
from sphinx.application import Sphinx

from _ext.page_widget import WIDGET_CLASS, Widget, add_widget
from gptembed import corpus
from gptembed.embedding import EXTENSIONS
from gptembed.gpt import GPT, at_length
from gptembed.gpt_runs import stored_run, stored_scheme_run
from gptembed.positions import SCHEMES

HERE = Path(__file__).parent
SCRIPT, STYLE, DATA = "gpt_playground.js", "gpt_playground.css", "gpt_playground_data.js"
MAX_POSITIONS = 512
"""The most positions a setting may use (start row, padding and text together)."""
GROWTH_SEEDS = (0, 1, 2)
"""The seeds of the fresh rows a grown learned table may take (``at_length``'s ``seed``; the page
opens at 1, its default and chapter 9's)."""
PASSAGES = 6
PASSAGE_CHARS = 257
"""A passage's length: read from row 0, its 256 predictions run to row 255, so the text model's
table grows to 256 rows, as chapter 9 grows it."""
IN_DOWNLOAD = (
    "*The playground that runs this small GPT live is on this chapter's page in the book; "
    "`gptembed.gpt.token_losses` and `forward` compute every number it shows.*"
)
"""What the directive becomes in the chapter's downloadable copy."""


def _packed(array: np.ndarray, dtype: str) -> str:
    """``array`` flattened, as base64 of little-endian ``dtype`` values."""
    return base64.b64encode(np.ascontiguousarray(array, dtype=f"<{dtype}").tobytes()).decode()


def model_entry(model: GPT, label: str, stored: str) -> dict[str, Any]:
    """One model's sizes and weights (every array of ``model.parameters()``, in order, packed as
    ``stored``: ``"f4"`` or ``"f2"``, the dtype its file holds, so exactly). ``model`` is read in
    float64, as the chapters read it: a grown table's fresh rows are then the ones the chapters'
    models draw (numpy draws float32 normals by another algorithm), rounded to float32."""
    params = model.parameters()
    entry: dict[str, Any] = {
        "label": label,
        "scheme": model.scheme,
        "n_layers": model.n_layers,
        "n_heads": model.n_heads,
        "embed_dim": model.embedding.embed_dim,
        "seq_len": model.max_seq_len,
        "rotary_base": model.rotary_base,
        "stored": stored,
        "shapes": {name: list(array.shape) for name, array in params.items()},
        "weights": _packed(np.concatenate([a.reshape(-1) for a in params.values()]), stored),
    }
    if model.scheme == "learned":
        rows = model.max_seq_len
        entry["fresh"] = {
            str(seed): _packed(
                at_length(model, MAX_POSITIONS, "fresh", seed=seed).embedding.position_embeddings[
                    rows:
                ],
                "f4",
            )
            for seed in GROWTH_SEEDS
        }
    return entry


def passages() -> list[str]:
    """Held-out passages the reader may pick: ``PASSAGES`` of ``PASSAGE_CHARS`` characters,
    evenly spaced through the held-out stream, each starting after a line break."""
    stream = corpus.decode(corpus.held_out_stream())
    found = []
    for k in range(PASSAGES):
        at = stream.index("\n", k * (len(stream) - 2 * PASSAGE_CHARS) // PASSAGES) + 1
        found.append(stream[at : at + PASSAGE_CHARS])
    return found


@functools.cache
def playground_data() -> dict[str, Any]:
    """What the page is given: characters, passages, models (the text model first)."""
    models = {
        "text": model_entry(
            stored_run(seed=0, dtype=np.float64).model, "Chapter 7's text model", "f4"
        )
    }
    for scheme in SCHEMES:
        models[scheme] = model_entry(
            stored_scheme_run(scheme, seed=0, dtype=np.float64).model,
            f"Chapter 10's {scheme} model",
            "f2",
        )
    return {
        "alphabet": list(corpus.decode(np.arange(corpus.VOCAB_SIZE))),
        "pad": corpus.END_OF_TEXT,
        "max_positions": MAX_POSITIONS,
        "growth": list(EXTENSIONS),
        "growth_seeds": list(GROWTH_SEEDS),
        "passages": passages(),
        "models": models,
    }


def _field(name: str, label: str, control: str, help_text: str = "") -> str:
    helper = f'<p class="gp-help" id="gp-{name}-help">{help_text}</p>' if help_text else ""
    return (
        f'<div class="gp-field gp-field--{name}"><label for="gp-{name}">{label}</label>'
        f"{control}{helper}</div>"
    )


def _number(name: str, low: int, high: int, value: str = "", help_text: str = "") -> str:
    described = f' aria-describedby="gp-{name}-help"' if help_text else ""
    control = (
        f'<input type="number" id="gp-{name}" name="{name}" min="{low}" max="{high}" step="1" '
        f'value="{value}" inputmode="numeric"{described}>'
    )
    return _field(name, NUMBER_LABELS[name], control, help_text)


NUMBER_LABELS = {
    "start": "Start row (start_pos)",
    "pad": "Padding characters on the left",
    "window": "Attention window (keys a query sees)",
    "sinks": "Sink tokens kept",
    "query": "Query character",
}


def playground_html(data: dict[str, Any]) -> str:
    """The playground's controls, results and texts (the script fills the results in)."""
    models = "".join(
        f'<option value="{key}">{"text model" if key == "text" else key} ({m["seq_len"]} rows)'
        "</option>"
        for key, m in data["models"].items()
    )
    picks = '<option value="">your own text</option>' + "".join(
        f'<option value="{i + 1}">passage {i + 1}</option>' for i in range(len(data["passages"]))
    )
    growth = "".join(f'<option value="{m}">{m}</option>' for m in data["growth"])
    seeds = "".join(
        f'<option value="{s}"{" selected" if s == 1 else ""}>{s}</option>'
        for s in data["growth_seeds"]
    )
    most = data["max_positions"]
    return (
        f'<div class="{WIDGET_CLASS} gpt-playground" data-gpt-playground>'
        '<form class="gp-controls" aria-label="Settings of the playground">'
        + _field("model", "Model", f'<select id="gp-model" name="model">{models}</select>')
        + _field(
            "passage", "Held-out text", f'<select id="gp-passage" name="passage">{picks}</select>'
        )
        + _field(
            "text",
            "The text the model reads",
            '<textarea id="gp-text" name="text" rows="4" spellcheck="false" '
            'aria-describedby="gp-text-help"></textarea>',
            f"Type or paste; the model knows {len(data['alphabet'])} characters. Start row, "
            f"padding and text together may use up to {most} positions.",
        )
        + '<fieldset class="gp-positions"><legend>Positions</legend><div class="gp-group">'
        + _number("start", 0, most - 1, "0")
        + _number("pad", 0, most - 1, "0")
        + _field(
            "ids",
            "Position ids with padding",
            '<select id="gp-ids" name="ids"><option value="count">counted from the first slot'
            '</option><option value="mask">from the mask (position_ids_from_mask)</option>'
            "</select>",
        )
        + _field(
            "grow",
            "Rows past the table's end",
            f'<select id="gp-grow" name="grow">{growth}</select>',
        )
        + _field("seed", "Seed of fresh rows", f'<select id="gp-seed" name="seed">{seeds}</select>')
        + _number("window", 1, most, "", "Empty: every earlier key.")
        + _number("sinks", 0, most, "0")
        + "</div></fieldset>"
        '<fieldset class="gp-heads"><legend>Attention</legend><div class="gp-group">'
        + _field(
            "head",
            "Head",
            '<select id="gp-head" name="head" autocomplete="off"></select>',
        )
        + _number("query", 1, most, "", "The character whose prediction is shown; empty: the last.")
        + "</div></fieldset></form>"
        '<p class="gp-message" id="gp-message" role="alert"></p>'
        '<p class="gp-summary" id="gp-summary" aria-live="polite"></p>'
        '<figure class="gp-figure"><div class="gp-strip" id="gp-strip" role="group" '
        'aria-label="The text, each character shaded by its loss"></div>'
        "<figcaption>Each character shaded by the model's loss in predicting it (stronger: "
        "harder).</figcaption></figure>"
        '<div class="gp-prediction" id="gp-prediction"></div>'
        '<figure class="gp-figure"><svg id="gp-curve" role="img" '
        'aria-labelledby="gp-curve-caption" '
        'viewBox="0 0 640 200" preserveAspectRatio="xMidYMid meet"></svg>'
        '<figcaption id="gp-curve-caption">Loss by position.</figcaption></figure>'
        '<figure class="gp-figure"><svg id="gp-row" role="img" aria-labelledby="gp-row-caption" '
        'viewBox="0 0 640 120" preserveAspectRatio="xMidYMid meet"></svg>'
        '<figcaption id="gp-row-caption">The head\'s weights for the query.</figcaption></figure>'
        '<figure class="gp-figure gp-map"><canvas id="gp-map" width="320" height="320" role="img" '
        'aria-labelledby="gp-map-caption"></canvas>'
        '<figcaption id="gp-map-caption">The head\'s whole map.</figcaption></figure>'
        '<p class="gp-link"><a id="gp-link" href="">A link to this setting</a> (the address bar '
        "holds it too).</p>"
        "<noscript><p>The playground needs JavaScript; <code>gptembed.gpt.token_losses</code> "
        "computes the same numbers.</p></noscript>"
        "</div>"
    )


class gpt_playground(nodes.General, nodes.Element):
    """Where the playground goes in the page."""


def setup(app: Sphinx) -> dict[str, Any]:
    add_widget(
        app,
        Widget(
            directive="gpt-playground",
            node=gpt_playground,
            html=playground_html,
            data=playground_data,
            folder=HERE,
            script=SCRIPT,
            style=STYLE,
            data_file=DATA,
            data_global="GPTEMBED_PLAYGROUND_DATA",
            data_source="_ext/gpt_playground.py's playground_data()",
            in_download=IN_DOWNLOAD,
        ),
    )
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
