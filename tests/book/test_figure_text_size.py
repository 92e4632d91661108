"""Chapter 10's concept diagrams show their text at least 9 px tall at page width, measured on
the image the chapter stores, which is the image the page shows.

The page shows a figure's PNG at the width its output's metadata gives (the PNG is drawn at
twice that), shrunk to the text column when wider; a font of ``s`` points drawn at ``dpi``
dots an inch is ``s * dpi / 72`` of the PNG's pixels, so it shows
``s * dpi / 72 * shown width / PNG width`` CSS pixels tall.
"""

from __future__ import annotations

import ast
import base64
import io
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest
from IPython.core.inputtransformer2 import TransformerManager
from matplotlib.figure import Figure

from gptembed._figures import DISPLAY_DPI, MIN_TEXT_PX, PAGE_WIDTH_PX, _drawn_texts

pytestmark = [pytest.mark.toolchain, pytest.mark.usefixtures("no_pyplot_figures")]

CHAPTER = Path(__file__).resolve().parents[2] / "book" / "10_past_the_table.ipynb"
DIAGRAMS = ("fig-clocks", "fig-rotary", "fig-alibi")
"""Chapter 10's pictures of the ideas (:mod:`gptembed.scheme_diagrams`): each cell draws its
figure from the chapter's imports alone, so a test can draw it again."""

COLUMN_PX = PAGE_WIDTH_PX
"""The text column a figure is shrunk to, in CSS pixels: 672, what a 1280-pixel window showed
every figure of the chapter at in Chromium (measured; the column narrows to 608 px at a
1200-pixel window, the narrowest before the sidebar folds away, and to 342 px on a 390-pixel
phone)."""

STORED_DPI = 2 * DISPLAY_DPI
"""Dots an inch of a chapter's PNG: twice the pixels it is shown at."""


def _png_width(png: bytes) -> int:
    """The width in pixels a PNG's IHDR chunk holds (big-endian, bytes 16 to 20)."""
    return int.from_bytes(png[16:20], "big")


def _cell(name: str) -> dict:
    """The chapter's code cell whose figure is named ``name``."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    named = [(c["metadata"].get("mystnb", {}).get("figure", {}).get("name"), c) for c in cells]
    found = [cell for figure, cell in named if figure == name]
    assert len(found) == 1, f"{CHAPTER.name}: {len(found)} cells draw {name}"
    return found[0]


def _python(source: str) -> ast.Module:
    return ast.parse(TransformerManager().transform_cell(source))


def _drawn_again(name: str) -> Figure:
    """The figure of ``name``'s cell, drawn again after the chapter's imports."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    namespace: dict = {}
    for cell in cells:
        if cell["cell_type"] == "code":
            body = _python("".join(cell["source"])).body
            imports = [n for n in body if isinstance(n, ast.Import | ast.ImportFrom)]
            exec(compile(ast.Module(imports, type_ignores=[]), CHAPTER.name, "exec"), namespace)
    *body, last = _python("".join(_cell(name)["source"])).body
    assert isinstance(last, ast.Expr), f"{name}: its cell must end with the drawing"
    exec(compile(ast.Module(body, type_ignores=[]), CHAPTER.name, "exec"), namespace)
    fig = eval(compile(ast.Expression(last.value), CHAPTER.name, "eval"), namespace)
    assert isinstance(fig, Figure), name
    return fig


def shown_text_px(points: float, png_width: int, shown_width: float) -> float:
    """CSS pixels of a font of ``points`` in a PNG ``png_width`` pixels wide drawn at
    :data:`STORED_DPI`, shown ``shown_width`` pixels wide."""
    return points * STORED_DPI / 72 * shown_width / png_width


def test_shown_text_px_scales_with_the_shown_width() -> None:
    assert shown_text_px(9.0, 1400, 700) == pytest.approx(12.5)  # 9 pt at 100 px an inch
    assert shown_text_px(9.0, 1440, 342) == pytest.approx(5.94, abs=0.01)  # a phone's column


@pytest.mark.parametrize("name", DIAGRAMS)
def test_a_diagrams_text_is_at_least_9_px_at_page_width(name: str) -> None:
    output = next(o for o in _cell(name)["outputs"] if "image/png" in o.get("data", {}))
    png = base64.b64decode(output["data"]["image/png"])
    metadata_width = output["metadata"]["image/png"]["width"]
    assert _png_width(png) // 2 == metadata_width, name  # stored at twice its shown size

    fig = _drawn_again(name)
    redrawn = io.BytesIO()
    fig.savefig(redrawn, format="png", dpi=STORED_DPI, bbox_inches="tight")
    assert _png_width(redrawn.getvalue()) == _png_width(png), (
        f"{name}: the stored image is not what the cell draws now: run ./dev execute"
    )
    smallest = min(float(text.get_fontsize()) for text in _drawn_texts(fig))
    shown = min(metadata_width, COLUMN_PX)
    px = shown_text_px(smallest, _png_width(png), shown)
    assert px >= MIN_TEXT_PX, (
        f"{name}: its smallest text, {smallest} pt in a {_png_width(png)}-pixel PNG shown "
        f"{shown} px wide, is {px:.1f} px tall (at least {MIN_TEXT_PX} px)"
    )
