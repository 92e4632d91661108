"""Every chapter is stored executed, in order, with the python3 kernel and no volatile metadata.

nbval re-runs each notebook and compares outputs, but a code cell stored without outputs has
nothing to compare and passes silently; these checks close that gap.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
NOTEBOOKS = sorted(BOOK.glob("*.ipynb"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _code_cells_with_source(nb: dict) -> list[tuple[int, dict]]:
    return [
        (index, cell)
        for index, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "code" and "".join(cell["source"]).strip()
    ]


def test_the_book_has_chapters() -> None:
    assert NOTEBOOKS, f"no notebooks in {BOOK}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_code_cell_was_executed_in_order(path: Path) -> None:
    cells = _code_cells_with_source(_load(path))
    unexecuted = [index for index, cell in cells if cell.get("execution_count") is None]
    assert not unexecuted, (
        f"{path.name}: code cells {unexecuted} have no stored execution; run "
        f"jupyter execute --inplace book/{path.name} (or nbconvert --execute --inplace)"
    )
    counts = [cell["execution_count"] for _, cell in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        f"{path.name}: execution counts {counts} are not 1..{len(cells)}: re-execute the "
        "notebook top to bottom in a fresh kernel"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_declares_the_python3_kernel(path: Path) -> None:
    meta = _load(path)["metadata"]
    assert meta.get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernelspec"
    assert meta.get("kernelspec", {}).get("language") == "python", f"{path.name}: language"
    assert meta.get("language_info", {}).get("name") == "python", f"{path.name}: language_info"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_volatile_execution_metadata(path: Path) -> None:
    timed = [i for i, cell in enumerate(_load(path)["cells"]) if "execution" in cell["metadata"]]
    assert not timed, f"{path.name}: cells {timed} keep execution timing metadata: strip it"
