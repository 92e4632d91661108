"""What a chapter's code shows a reader: the computation, with its imports short or hidden."""

from __future__ import annotations

import json

import pytest

from tests.book_site import ROOT, SHOWN_NOWHERE, toc_docnames

MAX_IMPORT_LINES = 30
"""Lines an import cell may show; a longer one is tagged hide-input (its code a click away)."""


@pytest.mark.parametrize("docname", toc_docnames())
def test_import_cells_are_short_or_hidden(docname: str) -> None:
    cells = json.loads((ROOT / f"{docname}.ipynb").read_text(encoding="utf8"))["cells"]
    for number, cell in enumerate(cells):
        source = "".join(cell["source"])
        lines = [line for line in source.splitlines() if line.strip()]
        imports = lines and all(line.startswith(("import ", "from ", " ", ")")) for line in lines)
        shown = not SHOWN_NOWHERE & set(cell["metadata"].get("tags", []))
        if cell["cell_type"] == "code" and imports and shown:
            assert len(source.splitlines()) <= MAX_IMPORT_LINES, (
                f"{docname}, cell {number}: {len(source.splitlines())} lines of imports shown; "
                f"at most {MAX_IMPORT_LINES}, or tag the cell hide-input"
            )
