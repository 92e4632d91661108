"""One name for each table across the book: "token table" and "position table" in prose,
$W_\\text{token}$ and $W_\\text{position}$ in formulas, the layer's `token_embeddings` and
`position_embeddings` in code, GPT-2's `wte` and `wpe` only for GPT-2's own checkpoint."""

from __future__ import annotations

import json
import re

import pytest

from tests.book_site import ROOT, markdown_of, toc_docnames

OTHER_NAMES = re.compile(r"\bW_(?:tok|pos)\b|\bW_\\text\{(?:tok|pos)\}")
"""Short names the book once gave the tables (W_tok, W_pos) and no longer uses."""


@pytest.mark.parametrize("docname", toc_docnames())
def test_the_tables_have_one_name(docname: str) -> None:
    cells = json.loads((ROOT / f"{docname}.ipynb").read_text(encoding="utf8"))["cells"]
    found = {m[0] for cell in cells for m in OTHER_NAMES.finditer("".join(cell["source"]))}
    assert not found, f"{docname} names a table {sorted(found)}"


def test_chapter_1_gives_gpt2s_checkpoint_names_once() -> None:
    """Chapter 1 introduces the tables and says once what GPT-2's checkpoint calls them."""
    markdown = markdown_of(ROOT / "book" / "01_token_plus_position.ipynb")
    counts = {name: markdown.count(f"`{name}`") for name in ("wte", "wpe")}
    assert counts == {"wte": 1, "wpe": 1}, f"chapter 1 names wte and wpe {counts} times"
