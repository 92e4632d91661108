"""The intro: its front door reads in ten minutes and shows the idea and the book's results as
figures, each linked to its chapter; its table lists every chapter with a reading time that
matches the chapter, and the reading paths' totals match the table."""

from __future__ import annotations

import json
import re

import pytest

from tests.book_site import (
    ROOT,
    main_line_paragraphs,
    markdown_of,
    page_minutes,
    require_build,
    toc_docnames,
)

INTRO = ROOT / "book" / "intro.ipynb"
FRONT_DOOR_MINUTES = 10
"""What the intro page may take to read, by the same count as the chapters'."""
MAIN_LINE_MINUTES = 120
"""What the chapters' main lines may take in all, by that count (boxes closed)."""
MAX_VALUES_A_PARAGRAPH = 6
"""Computed values a main-line paragraph may quote: more belong in a table or a box."""
ROW = re.compile(
    r"^\| (?P<number>\d+) \| (?P<chapter>[^|]+?) \| [^|]+ "
    r"\| (?P<reading>\d+ min|being written) \|$",
    re.MULTILINE,
)
DOC = re.compile(r"^\{doc\}`(?P<doc>[\w]+)`$")
FENCED = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w-]+)\}[^\n]*\n(?P<body>(?:.*\n)*?)(?P=fence)[ \t]*$",
    re.MULTILINE,
)
"""A fenced directive (`{dropdown}`, `{admonition}`, ...) with its body."""
PATH = re.compile(r"chapters (?P<chapters>[\d, and]+), then [\d and]+; (?P<minutes>\d+) minutes")


def intro_text() -> str:
    """The intro's markdown, every cell."""
    return markdown_of(INTRO)


def table() -> dict[int, tuple[str, str]]:
    """The intro's rows: chapter number -> (the chapter cell, the reading cell)."""
    rows = {int(m["number"]): (m["chapter"], m["reading"]) for m in ROW.finditer(intro_text())}
    assert rows, "no chapter table found in book/intro.ipynb"
    return rows


def test_every_chapter_is_in_the_table_in_order() -> None:
    linked = [DOC.match(chapter) for chapter, _ in table().values()]
    docs = [f"book/{m['doc']}" for m in linked if m]
    assert docs == toc_docnames()[1:], "the intro's table and _toc.yml list different chapters"
    assert list(table()) == list(range(1, len(table()) + 1))


@pytest.mark.built_book
@pytest.mark.parametrize("number", sorted(table()))
def test_reading_time_matches_the_chapter(number: int) -> None:
    """A linked chapter's time is within a minute of what its built page shows, read at the
    stated speeds; a chapter named in plain text ("being written") must not exist yet, or it
    should be linked and timed."""
    require_build()
    chapter, reading = table()[number]
    files = sorted((ROOT / "book").glob(f"{number:02d}_*.ipynb"))
    if DOC.match(chapter) is None:
        assert not files, f"{files[0].name} exists: link it with {{doc}} and give its time"
        assert reading == "being written"
        return
    (path,) = files
    assert DOC.match(chapter)["doc"] == path.stem
    estimate = page_minutes(f"book/{path.stem}")
    stated = int(reading.split()[0])
    assert abs(stated - estimate) <= 1, (
        f"{path.name}: the intro says {stated} min, its page takes {estimate:.1f}: "
        f"write {round(estimate)} min (and the paths' totals)"
    )


def test_each_path_adds_up_the_table() -> None:
    paths = list(PATH.finditer(intro_text()))
    assert len(paths) == 2, "the intro should give two reading paths"
    times = {n: int(reading.split()[0]) for n, (_, reading) in table().items() if "min" in reading}
    for path in paths:
        chapters = [int(n) for n in re.findall(r"\d+", path["chapters"])]
        assert sum(times[n] for n in chapters) == int(path["minutes"]), path[0]


@pytest.mark.built_book
def test_the_main_line_takes_at_most_120_minutes() -> None:
    """The chapters' main lines (what their built pages show with every box closed) add up to
    at most 120 minutes, both as measured and as the intro's table states them."""
    require_build()
    minutes = {name: page_minutes(name) for name in toc_docnames()[1:]}
    assert sum(minutes.values()) <= MAIN_LINE_MINUTES, {k: round(v, 1) for k, v in minutes.items()}
    stated = sum(int(reading.split()[0]) for _, reading in table().values() if "min" in reading)
    assert stated <= MAIN_LINE_MINUTES, f"the intro's table adds up to {stated} minutes"
    readme = (ROOT / "README.md").read_text(encoding="utf8")
    for name, text in (("the intro", intro_text()), ("README.md", readme)):
        said = re.findall(r"(\d+) minutes in all", text)
        assert said == [str(stated)], f"{name} gives the main line as {said}, the table {stated}"


BUILT_ON = range(5, 10)
"""Chapters that a later chapter builds on: the toys (5, 6), the small GPT (7), what absolute
positions do in code and growing the table (8, 9). Chapters 1 to 4 a later page only mentions."""


def test_each_reading_path_primes_what_it_skips() -> None:
    """On each of the intro's paths, a chapter that links to one of :data:`BUILT_ON` that the path
    skips holds a closed `{dropdown}` primer that links to it, so the page stands on its own."""
    paths = re.findall(r"chapters ([\d, and]+), then ([\d and]+);", intro_text())
    assert len(paths) == 2, paths
    for before, after in paths:
        path = {int(n) for n in re.findall(r"\d+", f"{before} {after}")}
        for number in sorted(path):
            (chapter,) = (ROOT / "book").glob(f"{number:02d}_*.ipynb")
            markdown = markdown_of(chapter)
            primers = "".join(b[0] for b in FENCED.finditer(markdown) if b["name"] == "dropdown")
            linked = {int(n) for n in re.findall(r"\{doc\}`(\d\d)_", markdown)}
            primed = {int(n) for n in re.findall(r"\{doc\}`(\d\d)_", primers)}
            skipped = {n for n in linked if n < number and n in BUILT_ON and n not in path}
            assert skipped <= primed, (
                f"{chapter.name}, on the path {sorted(path)}, builds on chapters "
                f"{sorted(skipped - primed)} with no primer"
            )


@pytest.mark.built_book
def test_the_front_door_reads_in_ten_minutes() -> None:
    require_build()
    minutes = page_minutes(toc_docnames()[0])
    assert minutes <= FRONT_DOOR_MINUTES, f"the intro takes {minutes:.1f} min to read"


def test_the_front_door_shows_the_idea_and_four_results_each_linked_to_its_chapter() -> None:
    """The concept diagram and five figures of the four results (two for the ramp and recency),
    each drawn by the package in a cell whose code the page hides, each with alt text, and each
    referred to in the prose just before it, next to a link to a chapter."""
    cells = json.loads(INTRO.read_text(encoding="utf8"))["cells"]
    figures = [
        (i, c["metadata"]["mystnb"])
        for i, c in enumerate(cells)
        if c["cell_type"] == "code" and "mystnb" in c["metadata"]
    ]
    names = [meta["figure"]["name"] for _, meta in figures]
    assert len(names) == 6 and names[0] == "fig-intro-sum", names
    for i, meta in figures:
        assert "hide-input" in cells[i]["metadata"].get("tags", []), names
        assert len(meta["image"]["alt"].split()) >= 25, meta["figure"]["name"]
        assert any(o.get("data", {}).get("image/png") for o in cells[i]["outputs"])
        before = "".join(
            "".join(c["source"]) for c in cells[:i] if c["cell_type"] == "markdown"
        ).rsplit("###", 1)[-1]
        assert f"{{numref}}`{meta['figure']['name']}`" in before, meta["figure"]["name"]
        assert re.search(r"\{doc\}`\d\d_\w+`", before), meta["figure"]["name"]


@pytest.mark.built_book
@pytest.mark.parametrize("docname", toc_docnames())
def test_no_main_line_paragraph_quotes_more_than_six_values(docname: str) -> None:
    """A sentence carries a result, not a table: a main-line paragraph quotes at most six
    computed values; seed ranges and per-seed numbers go into a table or a box."""
    require_build()
    paragraphs = main_line_paragraphs(docname)
    crowded = [(n, text[:70]) for n, text in paragraphs if n > MAX_VALUES_A_PARAGRAPH]
    assert not crowded, f"{docname}: paragraphs with more than six computed values: {crowded}"
