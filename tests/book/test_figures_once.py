"""Each figure is drawn once in the book: a chapter that needs one the intro already shows refers to
it instead of drawing it again."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

from tests.book_site import ROOT, markdown_of, toc_docnames

REFERS_BACK = {
    "book/01_token_plus_position": "fig-intro-sum",
    "book/03_parameter_asymmetry": "fig-intro-asymmetry",
}
"""Chapters whose subject the intro's front door already draws, and the intro figure each uses."""


def test_no_two_cells_store_the_same_image() -> None:
    where = defaultdict(list)
    for docname in toc_docnames():
        cells = json.loads((ROOT / f"{docname}.ipynb").read_text(encoding="utf8"))["cells"]
        for number, cell in enumerate(cells):
            for output in cell.get("outputs", []):
                png = output.get("data", {}).get("image/png")
                if png:
                    where[hashlib.sha256(png.encode()).hexdigest()].append((docname, number))
    repeated = [cells for cells in where.values() if len(cells) > 1]
    assert not repeated, f"the same image is drawn in {repeated}"


def test_chapters_refer_to_the_intros_figures_of_their_subject() -> None:
    for docname, figure in REFERS_BACK.items():
        assert f"{{numref}}`{figure}`" in markdown_of(ROOT / f"{docname}.ipynb"), docname
