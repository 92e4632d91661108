"""The book's order: each chapter builds only on earlier ones, and each experiment is run in one
chapter."""

from __future__ import annotations

import json

import pytest

from tests.book_site import ROOT, chapter_links, require_build, toc_docnames

CHAPTERS = toc_docnames()[1:]
EXPERIMENTS = {
    "cropped_stream_losses(": "08_absolute_positions",
    "cached_forward(": "08_absolute_positions",
    ".extended(": "09_growing_the_context",
    "stored_growth(": "09_growing_the_context",
}
"""A call that runs one of the book's experiments (nanoGPT's crop, the KV cache, growing a table,
the grown tables trained on), and the one chapter that runs it."""


def _number(docname: str) -> int:
    return int(docname.split("/")[-1][:2])


@pytest.mark.built_book
@pytest.mark.parametrize("docname", CHAPTERS)
def test_the_main_line_builds_only_on_earlier_chapters(docname: str) -> None:
    """A chapter's main line links to earlier chapters and to the next one (where its subject
    goes on); a later chapter only from a box, the Summary or the exercises."""
    require_build()
    number = _number(docname)
    ahead = [(n, text) for n, main, text in chapter_links(docname) if main and n > number + 1]
    assert not ahead, f"{docname} builds on later chapters in its main line: {ahead}"


@pytest.mark.built_book
@pytest.mark.parametrize("docname", CHAPTERS)
def test_primers_brief_only_earlier_chapters(docname: str) -> None:
    """A "Skipped chapter ...?" box stands in for chapters a reader may have skipped: earlier
    ones only."""
    require_build()
    from bs4 import BeautifulSoup

    page = (ROOT / "_build" / "html" / f"{docname}.html").read_text(encoding="utf8")
    for box in BeautifulSoup(page, "html.parser").select("details"):
        summary = box.find("summary")
        if summary is None or not summary.get_text().strip().startswith("Skipped"):
            continue
        for link in box.select("a.reference.internal"):
            target = link.get("href", "").split("#")[0].rsplit("/", 1)[-1]
            if target[:2].isdigit():
                assert int(target[:2]) < _number(docname), (docname, summary.get_text())


@pytest.mark.parametrize(("call", "home"), sorted(EXPERIMENTS.items()))
def test_each_experiment_is_run_in_one_chapter(call: str, home: str) -> None:
    runs = set()
    for docname in CHAPTERS:
        cells = json.loads((ROOT / f"{docname}.ipynb").read_text(encoding="utf8"))["cells"]
        if any(call in "".join(c["source"]) for c in cells if c["cell_type"] == "code"):
            runs.add(docname.split("/")[-1])
    assert runs == {home}, f"{call} runs in {sorted(runs)}, not only in {home}"
