"""Checks on the built book in `_build/html` that need no browser (run `./dev book` first)."""

from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from _ext import cost_explorer, gpt_playground, page_widget
from tests.book_site import (
    BUILD,
    ROOT,
    SHOWN_NOWHERE,
    built_page,
    markdown_of,
    repository_url,
    require_build,
    source_of,
    tags_of,
    title_of,
    toc_docnames,
)

pytestmark = pytest.mark.built_book

PAGES = toc_docnames()
REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)
"""A URL that names a host: `https://...`, `http://...`, protocol-relative `//...`."""
LOADING_ATTRIBUTES = ("src", "srcset", "poster", "data")
"""Attributes whose URL the browser fetches by itself when it renders the page."""


@pytest.fixture(scope="module", autouse=True)
def _built() -> None:
    require_build()


def _html_pages() -> list[Path]:
    """Every HTML page of the book: toc pages, index, search, genindex (not theme templates)."""
    return sorted(
        path
        for path in BUILD.rglob("*.html")
        if path.relative_to(BUILD).parts[0] not in {"_static", "_sources", "_images"}
    )


def _fetched_urls(path: Path) -> list[str]:
    """Each URL the page makes a browser fetch on its own: `src`-like attributes, `<link href>`."""
    urls = []
    for tag, attrs in tags_of(path):
        for name in LOADING_ATTRIBUTES:
            value = attrs.get(name, "").strip()
            if not value or (name == "data" and tag != "object"):
                continue
            if name == "srcset":
                urls += [part.split()[0] for part in value.split(",") if part.strip()]
            else:
                urls.append(value)
        if tag == "link" and attrs.get("href"):
            urls.append(attrs["href"].strip())
    return urls


def _links(path: Path) -> list[tuple[str, dict[str, str]]]:
    """Each `<a href>` of a page with its attributes."""
    return [
        (attrs["href"], attrs) for tag, attrs in tags_of(path) if tag == "a" and "href" in attrs
    ]


@pytest.mark.parametrize("docname", PAGES)
def test_every_toc_page_is_built(docname: str) -> None:
    """Each page `_toc.yml` lists has a source and a built HTML page with its content."""
    source_of(docname)
    page = built_page(docname)
    assert page.is_file(), f"{docname} is in _toc.yml but {page} was not built"
    assert any(tag == "main" for tag, _ in tags_of(page)), f"{page} has no <main> content"


def test_index_redirects_to_the_root_page() -> None:
    """Opening the folder's index.html lands on the book's first page."""
    root = toc_docnames()[0]
    refresh = [
        attrs.get("content", "")
        for tag, attrs in tags_of(BUILD / "index.html")
        if tag == "meta" and attrs.get("http-equiv", "").lower() == "refresh"
    ]
    assert refresh, "index.html is not a redirect"
    assert refresh[0].endswith(f"{root}.html"), refresh


def test_no_page_loads_anything_from_another_host() -> None:
    """Only `<a href>` may leave the book: no `src=`, `srcset=` or `<link href=` names a host."""
    pages = _html_pages()
    assert len(pages) >= len(PAGES)
    remote = [
        f"{page.relative_to(BUILD)}: {url}"
        for page in pages
        for url in _fetched_urls(page)
        if REMOTE.match(url)
    ]
    assert not remote, "pages fetch from other hosts:\n" + "\n".join(remote)


def test_every_page_asset_is_in_the_build() -> None:
    """Each relative `src`/`<link href>` of a page names a file that the build wrote."""
    missing = []
    for page in _html_pages():
        for url in _fetched_urls(page):
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or not parts.path:
                continue  # remote URLs: the test above
            base = BUILD if parts.path.startswith("/") else page.parent
            if not (base / unquote(parts.path.lstrip("/"))).resolve().is_file():
                missing.append(f"{page.relative_to(BUILD)}: {url}")
    assert not missing, "assets not in _build/html:\n" + "\n".join(missing)


def test_stylesheets_load_only_local_files() -> None:
    """Every `url(...)` and `@import` in the theme's CSS is a data URL or a file in the build."""
    sheets = sorted((BUILD / "_static").rglob("*.css"))
    assert sheets
    pattern = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)['"]""")
    bad = []
    for sheet in sheets:
        for match in pattern.finditer(sheet.read_text(encoding="utf8", errors="replace")):
            url = match.group(1) or match.group(2)
            if url.startswith(("data:", "#")):
                continue
            target = sheet.parent / unquote(urlsplit(url).path)
            if REMOTE.match(url) or not target.resolve().is_file():
                bad.append(f"{sheet.relative_to(BUILD)}: {url}")
    assert not bad, "stylesheets load remote or missing files:\n" + "\n".join(bad)


def test_no_stylesheet_locks_the_orientation() -> None:
    """No CSS of the site asks for an orientation (`@media (orientation: ...)`): what axe's
    css-orientation-lock rule judges, which the browser tests' axe scans leave out (they run
    without axe's stylesheet preload: tests/browsing.py says why)."""
    sheets = sorted((BUILD / "_static").rglob("*.css"))
    assert sheets
    found = [
        str(sheet.relative_to(BUILD))
        for sheet in sheets
        if re.search(r"orientation\s*:", sheet.read_text(encoding="utf8", errors="replace"))
    ]
    assert not found, f"stylesheets that query the orientation: {found}"


@pytest.mark.parametrize("docname", PAGES)
def test_math_uses_the_local_mathjax(docname: str) -> None:
    """A page with math loads MathJax from `_static/mathjax`, which the build contains."""
    page = built_page(docname)
    tags = tags_of(page)
    scripts = [attrs["src"] for tag, attrs in tags if tag == "script" and attrs.get("src")]
    mathjax = [src for src in scripts if "mathjax" in src.lower()]
    has_math = any("math" in attrs.get("class", "").split() for _, attrs in tags)
    if has_math:
        assert mathjax, f"{docname} has math but loads no MathJax"
    for src in mathjax:
        target = (page.parent / urlsplit(src).path).resolve()
        assert target.is_relative_to(BUILD / "_static" / "mathjax"), src
        assert target.is_file(), f"{src} is not in the build"


@pytest.mark.parametrize("docname", PAGES)
def test_download_button_offers_the_source(docname: str) -> None:
    """The download button links the page's own source (`.ipynb` for a chapter) in the build."""
    source = source_of(docname)
    page = built_page(docname)
    wanted = f"_sources/{docname}{source.suffix}"
    hrefs = [href for href, _ in _links(page) if urlsplit(href).path.endswith(wanted)]
    assert hrefs, f"{docname} has no download link to {wanted}"
    target = (page.parent / urlsplit(hrefs[0]).path).resolve()
    assert target.is_file(), f"the download link {hrefs[0]} is broken"
    if source.suffix == ".ipynb":
        assert "nbformat" in json.loads(target.read_text(encoding="utf8"))


@pytest.mark.parametrize("docname", PAGES)
def test_the_repository_button_uses_the_one_repository_url(docname: str) -> None:
    """The repository button links `repository.url`."""
    by_title = {attrs.get("title", ""): href for href, attrs in _links(built_page(docname))}
    assert by_title.get("Source repository") == repository_url()


def test_the_wheel_the_install_cell_names_is_published_with_the_book() -> None:
    """`_build/html/wheels/` holds the one wheel every chapter's first cell installs, and it is
    this checkout's package: each file byte for byte, its dependencies as pyproject says, and
    under 8 MB in all (issue 37: every install cell downloads it)."""
    import zipfile

    from tools.install_cell import WHEEL_DIR, wheel_name

    published = sorted(p.name for p in (BUILD / WHEEL_DIR).iterdir())
    assert published == [wheel_name()], published
    size = (BUILD / WHEEL_DIR / wheel_name()).stat().st_size
    assert size < 8_000_000, f"the wheel every chapter downloads is {size:,} bytes"
    with zipfile.ZipFile(BUILD / WHEEL_DIR / wheel_name()) as wheel:
        files = {n for n in wheel.namelist() if n.startswith("gptembed/")}
        source = {
            p.relative_to(ROOT).as_posix()
            for p in (ROOT / "gptembed").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
        assert files == source  # the modules, py.typed and the data (chapter 7's text and model)
        for name in files:
            assert wheel.read(name) == (ROOT / name).read_bytes(), f"{name} differs"
        (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [
            line for line in wheel.read(metadata).decode().splitlines() if "Requires-Dist" in line
        ]
    assert any(line.startswith("Requires-Dist: numpy") for line in requires), requires
    assert any("matplotlib" in line and "plot" in line for line in requires), requires


def test_strict_build_left_no_checkpoints() -> None:
    """No `.ipynb_checkpoints` folder was copied into or made in the build."""
    found = [str(p.relative_to(ROOT)) for p in (ROOT / "_build").rglob(".ipynb_checkpoints")]
    assert not found, found


CHAPTERS = [name for name in PAGES if source_of(name).suffix == ".ipynb"]
GLUE_TEXT = re.compile(r"\{glue:text\}`([^`:]+):([^`]*)`")
MYST_SYNTAX = re.compile(r"\{[\w:.-]+\}`|^(?:`{3,}|:{3,})\{", re.MULTILINE)
"""A MyST role (`{name}`...``) or directive fence (```` ```{name} ````) left in markdown."""


def _download(docname: str) -> dict:
    return json.loads((BUILD / "_sources" / f"{docname}.ipynb").read_text(encoding="utf8"))


def _markdown(nb: dict) -> str:
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def _glued(nb: dict) -> dict[str, str]:
    """Each value a notebook glued, by name, as the text/plain stored in its outputs."""
    mime = "application/papermill.record/text/plain"
    return {
        output["metadata"]["scrapbook"]["name"]: output["data"][mime]
        for cell in nb["cells"]
        for output in cell.get("outputs", [])
        if mime in output.get("data", {})
    }


@pytest.mark.parametrize("docname", CHAPTERS)
def test_downloaded_chapter_reads_cleanly(docname: str) -> None:
    """The `.ipynb` the download button serves has no MyST roles or directives left, only text."""
    import nbformat

    path = BUILD / "_sources" / f"{docname}.ipynb"
    nbformat.validate(nbformat.read(path, as_version=4))
    left = MYST_SYNTAX.findall(_markdown(_download(docname)))
    assert not left, f"{path.relative_to(BUILD)} still shows MyST syntax: {left}"


@pytest.mark.parametrize("docname", CHAPTERS)
def test_downloaded_chapter_links_only_what_jupyter_opens(docname: str) -> None:
    """Every link of the download's markdown, rendered as Jupyter renders it (raw HTML kept),
    opens from Jupyter, where the notebook sits alone: a web address or a place in the notebook,
    never a page of the book (a link to a setting of the playground keeps only its text, which
    names the setting)."""
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark", {"html": True}).render(_markdown(_download(docname)))
    hrefs = [html.unescape(href) for href in re.findall(r'href="([^"]*)"', rendered)]
    local = [href for href in hrefs if not re.match(r"(https?:|mailto:|#)", href)]
    assert not local, f"{docname}'s download links pages that only the book has: {local}"


def test_no_link_opens_a_notebook_that_shows_myst_syntax() -> None:
    """Every link of a page to a notebook opens one that the build rewrote for readers: a file
    in the build with no MyST role or directive left. Binder and Colab open a notebook only from
    the repository, where the chapters keep their roles, so the book offers no launch button;
    the download button is the way to run a chapter."""
    checked, bad = 0, []
    for page in _html_pages():
        for href, _ in _links(page):
            if ".ipynb" not in href:
                continue
            parts = urlsplit(href)
            target = (page.parent / unquote(parts.path)).resolve()
            checked += 1
            if parts.scheme or parts.netloc or not target.is_file():
                bad.append(f"{page.relative_to(BUILD)}: {href} is not the build's copy")
            elif MYST_SYNTAX.search(_markdown(json.loads(target.read_text(encoding="utf8")))):
                bad.append(f"{page.relative_to(BUILD)}: {href} shows MyST syntax")
    assert not bad, "\n".join(bad)
    assert checked >= len(CHAPTERS), "fewer links to notebooks than chapters: no download?"


@pytest.mark.parametrize("docname", CHAPTERS)
def test_downloaded_chapter_shows_glued_values_as_the_page_does(docname: str) -> None:
    """Each `{glue:text}`name:fmt`` became its formatted value, the same text the page shows.

    The repository's chapter keeps its roles: only the build's copy is rewritten.
    """
    source = json.loads(source_of(docname).read_text(encoding="utf8"))
    roles = GLUE_TEXT.findall(_markdown(source))
    if not roles:
        return  # a chapter without formatted glue: the clean-read test above covers it
    glued = _glued(source)
    download = _markdown(_download(docname))
    page = built_page(docname).read_text(encoding="utf8")
    for name, spec in roles:
        value = format(ast.literal_eval(glued[name]), spec)
        assert value in download, f"{name}:{spec} should read {value!r} in the download"
        assert value in page, f"{name}:{spec}: the page does not show {value!r} either"


SOLUTION_EDGE = re.compile(r"\{solution-(start|end)\}")
QUOTES = str.maketrans("\u2018\u2019\u201c\u201d", "''\"\"")
"""The page's typographic quotes (Sphinx's smartquotes), as the chapters write them."""


def _solution_code(nb: dict) -> set[str]:
    """The ids of the code cells between a solution's start and its end, in the chapter."""
    inside, ids = False, set()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and inside:
            ids.add(cell["id"])
        for edge in SOLUTION_EDGE.findall("".join(cell["source"])):
            inside = edge == "start"
    return ids


def _paragraph_in(nb: dict, line: str) -> bool:
    """Whether ``line`` is a paragraph of its own in one of ``nb``'s markdown cells: a blank
    line (or the cell's edge) before and after it."""
    return any(
        f"\n\n{line}\n\n" in f"\n\n{''.join(cell['source'])}\n\n"
        for cell in nb["cells"]
        if cell["cell_type"] == "markdown"
    )


def _exercise_headings(docname: str) -> list[str]:
    """Each exercise's heading as the page shows it: "Exercise 6.1 (Look four back)"."""
    page = built_page(docname).read_text(encoding="utf8")
    headings = re.findall(
        r'<span class="caption-number">(Exercise [\d.]+) </span>([^<]*)</p>', page
    )
    return [f"{number} {html.unescape(title).strip()}".strip() for number, title in headings]


@pytest.mark.parametrize("docname", CHAPTERS)
def test_downloaded_exercises_keep_their_titles_and_close_their_solutions(docname: str) -> None:
    """Each exercise of the download is a line of its own with the number and title the page
    shows, and its solution is under the page's summary in a closed `<details>`, one in each
    markdown cell the solution's text is in."""
    headings = [h.translate(QUOTES) for h in _exercise_headings(docname)]
    download = _download(docname)
    markdown = _markdown(download)
    source = markdown_of(source_of(docname))
    assert len(headings) == source.count("{exercise-start}"), headings
    for heading in headings:
        assert _paragraph_in(download, f"**{heading}**"), f"no line **{heading}**"
        summary = f"<details><summary>Solution to {html.escape(heading, quote=False)}</summary>"
        assert _paragraph_in(download, summary), f"no closed solution to {heading}"
    assert markdown.count("<details><summary>Solution to ") >= len(headings)
    assert markdown.count("<details") == markdown.count("</details>")
    assert "<details open" not in markdown


@pytest.mark.parametrize("docname", CHAPTERS)
def test_downloaded_chapter_collapses_the_code_the_page_hides(docname: str) -> None:
    """Every code cell of the chapter is in the download, to run as it does, and the code a
    reader sees open there is the code the page shows open: a cell tagged `remove-cell`,
    `remove-input` or `hide-input`, or in a solution, has its source hidden as JupyterLab reads
    it (`jupyter.source_hidden`); a removed cell's outputs and a solution's are collapsed too."""
    source = json.loads(source_of(docname).read_text(encoding="utf8"))
    solution = _solution_code(source)
    download = {c["id"]: c for c in _download(docname)["cells"] if c["cell_type"] == "code"}
    code = [c for c in source["cells"] if c["cell_type"] == "code"]
    assert [(c["id"], c["source"]) for c in code] == [
        (name, cell["source"]) for name, cell in download.items()
    ]
    wrong = []
    for cell in code:
        tags = set(cell["metadata"].get("tags", []))
        metadata = download[cell["id"]]["metadata"]
        hidden = metadata.get("jupyter", {})
        in_solution = cell["id"] in solution
        if hidden.get("source_hidden", False) != bool(tags & SHOWN_NOWHERE or in_solution):
            wrong.append(f"{cell['id']} source")
        closed = "remove-cell" in tags or in_solution
        outputs = (hidden.get("outputs_hidden", False), metadata.get("collapsed", False))
        if outputs != (closed, closed):
            wrong.append(f"{cell['id']} outputs")
    assert not wrong, f"collapsed where the page shows, or open where it hides: {wrong}"


@pytest.mark.parametrize("docname", CHAPTERS)
def test_downloaded_how_we_know_titles_stand_on_their_own_line(docname: str) -> None:
    """Each "How we know" box of the download starts with its title in bold, a paragraph of its
    own: not run into the paragraph above it, as a title at the end of a cell's text would be."""
    source = markdown_of(source_of(docname))
    titles = [t.strip() for t in re.findall(r"\{how-we-know-start\}[ \t]*([^\n]+)", source)]
    download = _download(docname)
    for title in titles:
        assert _paragraph_in(download, f"**How we know: {title}**"), f"{title} runs into text"


def test_glue_formatting_matches_myst_nb() -> None:
    """The download rewriter formats glued text as myst-nb does: numbers by the spec's type."""
    from _ext.readable_downloads import format_glued

    assert format_glued("38597376", ",") == "38,597,376"
    assert format_glued("3.9154956505114233", ".2f") == "3.92"
    assert format_glued("786432", ".3f") == "786432.000"
    assert format_glued("0.25", ".1%") == "25.0%"
    assert format_glued("7.0", "d") == "7"
    assert format_glued("'a string'", "") == "a string"
    assert format_glued("array([1, 2])", "") == "array([1, 2])"


def test_dot_directories_are_not_read(tmp_path: Path) -> None:
    """A venv or a stray note in a dot-directory of the clone is no page of the book.

    Sphinx reads every source file it discovers that `exclude_patterns` (from `_config.yml`,
    through Jupyter Book) does not exclude; a second venv such as `.venv-lower` once made the
    strict build read its site-packages, and a `.hidden/a.md` failed it. This asks Sphinx's own
    discovery, with the book's real configuration, what it would read in such a clone.
    """
    from jupyter_book.config import get_final_config
    from sphinx.project import Project

    for name in ("_config.yml", "_toc.yml"):
        (tmp_path / name).write_text((ROOT / name).read_text(encoding="utf8"), encoding="utf8")
    strays = [
        ".hidden/a.md",
        ".venv-x/lib/python3.10/site-packages/pkg/README.md",
        ".venv-x/lib/python3.10/site-packages/pkg/docs/index.rst",
        "book/.ipynb_checkpoints/intro-checkpoint.md",
    ]
    for relative in [*strays, "book/intro.md"]:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("# A page\n", encoding="utf8")
    config, _ = get_final_config(
        user_yaml=tmp_path / "_config.yml",
        cli_config={"latex_individualpages": False},
        sourcedir=tmp_path,
    )
    project = Project(tmp_path, {".md": "markdown", ".rst": "restructuredtext", ".ipynb": "nb"})
    found = project.discover(exclude_paths=config["exclude_patterns"])
    assert found == {"book/intro"}, f"Sphinx would read {sorted(found - {'book/intro'})}"


def test_search_index_holds_every_page() -> None:
    """The book's offline search index (searchindex.js) lists every page under its title, each
    chapter's with its number, the one its file name starts with (_toc.yml numbers the chapters
    in reading order; the intro has none): figures and exercises are numbered within their
    chapter by it (Fig. 6.2), so the two must agree."""
    text = (BUILD / "searchindex.js").read_text(encoding="utf8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    titles = dict(zip(index["docnames"], index["titles"], strict=True))
    expected = {PAGES[0]: title_of(PAGES[0])}
    for name in PAGES[1:]:
        number = int(name.rpartition("/")[2].split("_")[0])
        expected[name] = f'<span class="section-number">{number}. </span>{title_of(name)}'
    wrong = {name: titles.get(name) for name in PAGES if titles.get(name) != expected[name]}
    assert not wrong, f"pages missing from the search index, or under another title: {wrong}"


@pytest.mark.parametrize("docname", PAGES)
def test_each_how_we_know_dropdown_is_on_its_page_closed(docname: str) -> None:
    """Every `how-we-know-start` of a chapter is one closed `<details class="how-we-know">` on
    its page, with a summary and some content: the main line is what shows unopened."""
    path = source_of(docname)
    markdown = (
        "\n".join(
            "".join(c["source"]) for c in json.loads(path.read_text(encoding="utf8"))["cells"]
        )
        if path.suffix == ".ipynb"
        else path.read_text(encoding="utf8")
    )
    starts = [t.strip() for t in re.findall(r"\{how-we-know-start\}[ \t]*([^\n]+)", markdown)]
    page = built_page(docname).read_text(encoding="utf8")
    dropdowns = re.findall(
        r'<details class="how-we-know"( open)?>\s*<summary>How we know: ([^<]+)</summary>'
        r"(.*?)</details>",
        page,
        re.DOTALL,
    )
    assert [html.unescape(title) for _, title, _ in dropdowns] == starts, docname
    assert not [title for opened, title, _ in dropdowns if opened], "a dropdown opens by itself"
    assert all(re.search(r"<(p|div)\b", body) for _, _, body in dropdowns), "an empty dropdown"


@pytest.mark.parametrize(
    ("directive", "files"),
    [
        ("cost-explorer", (cost_explorer.DATA, cost_explorer.SCRIPT, cost_explorer.STYLE)),
        ("gpt-playground", (gpt_playground.DATA, gpt_playground.SCRIPT, gpt_playground.STYLE)),
    ],
)
def test_a_widgets_files_load_only_where_the_widget_is(
    directive: str, files: tuple[str, str, str]
) -> None:
    """A page widget's data, script and style (`_ext/page_widget.py`) are on the pages that hold
    its directive and on no other (a page that links to a setting of it, with the role of the
    same name, loads none of them)."""
    require_build()
    fence = f"```{{{directive}}}"
    pages = [name for name in toc_docnames() if fence in source_of(name).read_text()]
    assert pages, f"no page holds {{{directive}}}"
    stem = files[1].removesuffix(".js")
    for docname in toc_docnames():
        text = built_page(docname).read_text(encoding="utf8")
        found = set(re.findall(rf"_static/({stem}[\w.]*)", text))
        assert found == (set(files) if docname in pages else set()), docname


def test_the_widgets_box_loads_only_where_a_widget_is() -> None:
    """The stylesheet of the box every widget sits in (`_ext/page_widget.css`) is on the pages
    that hold a widget, once, and on no other; each widget's outermost element has its class."""
    require_build()
    fences = ("```{cost-explorer}", "```{gpt-playground}")
    for docname in toc_docnames():
        text = built_page(docname).read_text(encoding="utf8")
        holds = any(fence in source_of(docname).read_text() for fence in fences)
        links = re.findall(rf"_static/{re.escape(page_widget.STYLE)}\b", text)
        assert len(links) == (1 if holds else 0), docname
        boxes = re.findall(rf'<div class="{page_widget.WIDGET_CLASS} [\w-]+" data-', text)
        assert len(boxes) == (1 if holds else 0), docname
