"""Chapters 1 to 3 as issue 39 left them: each main line within its minutes, and one name per
table (`tests/book/test_figures_once.py` holds their figures to the intro's)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.book_site import ROOT, markdown_of, page_minutes, require_build

BOOK = ROOT / "book"
PAGES = sorted(BOOK.glob("*.ipynb"))
CHAPTER_1 = BOOK / "01_token_plus_position.ipynb"

MAIN_LINE_BUDGET = {
    "book/01_token_plus_position": 7.0,
    "book/02_building_the_layer": 6.5,
    "book/03_parameter_asymmetry": 5.0,
}
"""Minutes each chapter's built page may take to read with its boxes closed (issue 39)."""

W_NAMES = re.compile(r"\bW_(?:tok|pos|token|position)\b")
"""Names the tables do not go by: prose says "token table" and "position table", code the
layer's `token_embeddings` and `position_embeddings` (formulas write $W_\\text{token}$, which
this does not match: `tests/book/test_names.py` holds the formulas)."""


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf8"))["cells"]


@pytest.mark.built_book
@pytest.mark.parametrize("docname", sorted(MAIN_LINE_BUDGET))
def test_the_main_line_fits_its_minutes(docname: str) -> None:
    require_build()
    minutes = page_minutes(docname)
    assert minutes <= MAIN_LINE_BUDGET[docname], (
        f"{docname}: its page takes {minutes:.1f} min to read, at most "
        f"{MAIN_LINE_BUDGET[docname]} allowed: tighten the prose or move asides into a box"
    )


@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_no_page_names_a_table_w_tok_or_w_pos(path: Path) -> None:
    found = sorted(
        {
            name
            for cell in _cells(path)
            if cell["cell_type"] in ("markdown", "code")
            for name in W_NAMES.findall("".join(cell["source"]))
        }
    )
    assert not found, f"{path.name} names a table {found}: say token/position table"


def test_chapter_1_gives_gpt2s_checkpoint_names_once() -> None:
    """Chapter 1 introduces the tables and says once what GPT-2's checkpoint calls them."""
    markdown = markdown_of(CHAPTER_1)
    counts = {name: markdown.count(f"`{name}`") for name in ("wte", "wpe")}
    assert counts == {"wte": 1, "wpe": 1}, f"chapter 1 names wte and wpe {counts} times"
