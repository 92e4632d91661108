"""What the built-book and browser tests share: the table of contents and the built HTML."""

from __future__ import annotations

import contextlib
import functools
import json
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
LOCAL_HOST = "127.0.0.1"
"""Where the tests serve files from (the built book, a wheel)."""
SOURCE_SUFFIXES = (".ipynb", ".md")


def toc_docnames() -> list[str]:
    """Every page `_toc.yml` lists, root first, in reading order (docnames, no suffix)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf8"))
    names = [toc["root"]]

    def walk(node: object) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            if "file" in node:
                names.append(node["file"])
            for key in ("parts", "chapters", "sections"):
                walk(node.get(key))

    walk({key: toc.get(key) for key in ("parts", "chapters")})
    return [_strip_suffix(name) for name in names]


def _strip_suffix(name: str) -> str:
    for suffix in SOURCE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def source_of(docname: str) -> Path:
    """The chapter's source file in the repository (`.ipynb` or `.md`)."""
    for suffix in SOURCE_SUFFIXES:
        path = ROOT / f"{docname}{suffix}"
        if path.is_file():
            return path
    raise FileNotFoundError(f"_toc.yml lists {docname!r} but no {docname}.ipynb or .md exists")


def markdown_of(path: Path) -> str:
    """A notebook's markdown, every cell, a blank line between cells."""
    cells = json.loads(path.read_text(encoding="utf8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def title_of(docname: str) -> str:
    """The page's title: the first `# ` heading of its source (markdown cells of a notebook)."""
    path = source_of(docname)
    text = markdown_of(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf8")
    return next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))


def built_page(docname: str) -> Path:
    """Where the strict build writes the page for ``docname``."""
    return BUILD / f"{docname}.html"


def require_build() -> None:
    """Skip (a failure in CI) when there is no built book to test."""
    if not (BUILD / "index.html").is_file():
        pytest.skip(f"no built book in {BUILD}: run `./dev book` first (`./dev test` does)")


def repository_url() -> str:
    """The one repository URL in `_config.yml` that every button is made from."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))
    return str(config["repository"]["url"]).rstrip("/")


class _TagCollector(HTMLParser):
    """Collects every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))


SHOWN_NOWHERE = {"hide-input", "remove-input", "remove-cell"}
"""Tags of code cells whose code a page does not show (hide-input: collapsed behind a button)."""


@functools.cache
def tags_of(path: Path) -> tuple[tuple[str, dict[str, str]], ...]:
    """The start tags of a built HTML file, parsed once per test session."""
    collector = _TagCollector()
    collector.feed(path.read_text(encoding="utf8"))
    return tuple(collector.tags)


@functools.cache
def anchors_of(path: Path) -> frozenset[str]:
    """Every fragment a link may point at in a built HTML file: element ids and `<a name>`."""
    names = {attrs["id"] for _, attrs in tags_of(path) if attrs.get("id")}
    names |= {attrs["name"] for tag, attrs in tags_of(path) if tag == "a" and attrs.get("name")}
    return frozenset(names)


class _QuietHandler(SimpleHTTPRequestHandler):
    """Serves files, lets the browser cache them for the session, and logs nothing."""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    """A threaded server whose listen backlog takes a browser's burst of parallel connections.

    With the default backlog of 5, Chromium's burst of connections for one page overflows it,
    and each dropped connection is retried only after a second.
    """

    request_queue_size = 128
    daemon_threads = True


@contextlib.contextmanager
def serving(folder: Path) -> Iterator[str]:
    """Serve ``folder`` over HTTP from :data:`LOCAL_HOST` on a free port; yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = _Server((LOCAL_HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOCAL_HOST}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


PROSE_WORDS_PER_MINUTE, CODE_WORDS_PER_MINUTE = 200, 100
"""The reading speeds the intro says its times count."""


@functools.cache
def shown_words(docname: str) -> tuple[int, int]:
    """Words of prose and of code that the built page of ``docname`` shows with its boxes closed.

    Prose is the article's text with figure captions, box titles (summaries of closed
    `<details>`, titles of collapsed solutions) and the explorer's labels; code is the source of
    the code cells the page shows. Left out: what a closed box or a hidden cell holds, outputs
    (a reader looks at them, the times do not count them), images and the `#` link marks.
    """
    from bs4 import BeautifulSoup  # only the built-book tests read pages this way

    html = built_page(docname).read_text(encoding="utf8")
    article = BeautifulSoup(html, "html.parser").select_one("article.bd-article")
    assert article is not None, f"{docname}: no article in the built page"
    hidden = "script, style, img, .headerlink, div.cell_output, details.above-input"
    for tag in article.select(hidden):
        tag.decompose()
    closed = [d for d in article.find_all("details") if not d.has_attr("open")]
    collapsed = article.select("div.dropdown")  # sphinx-exercise's solutions: closed on load
    for box in closed + collapsed:
        for part in box.find_all(recursive=False):
            if part.name != "summary" and "admonition-title" not in part.get("class", []):
                part.decompose()
    code = sum(len(cell.get_text().split()) for cell in article.select("div.cell_input"))
    for cell in article.select("div.cell_input"):
        cell.decompose()
    return len(article.get_text().split()), code


def page_minutes(docname: str) -> float:
    """Minutes to read what the built page of ``docname`` shows (:func:`shown_words`): its prose
    at 200 words a minute, its code at 100, as the intro states."""
    prose, code = shown_words(docname)
    return prose / PROSE_WORDS_PER_MINUTE + code / CODE_WORDS_PER_MINUTE


def main_line_paragraphs(docname: str) -> list[tuple[int, str]]:
    """Each paragraph the built page of ``docname`` shows outside its boxes (closed `<details>`,
    collapsed solutions) and tables: how many computed (glued) values it holds, and its text."""
    from bs4 import BeautifulSoup

    html = built_page(docname).read_text(encoding="utf8")
    article = BeautifulSoup(html, "html.parser").select_one("article.bd-article")
    assert article is not None, f"{docname}: no article in the built page"
    paragraphs = []
    for paragraph in article.find_all("p"):
        boxes = paragraph.find_parents(["details", "table", "figcaption"])
        boxes += [p for p in paragraph.find_parents("div") if "dropdown" in p.get("class", [])]
        if not boxes:
            text = " ".join(paragraph.get_text().split())
            paragraphs.append((len(paragraph.select("span.pasted-text")), text))
    return paragraphs


def chapter_links(docname: str) -> list[tuple[int, bool, str]]:
    """Every link from the built page of ``docname`` to a numbered chapter: the chapter's number,
    whether the link sits in the main line (outside boxes, collapsed solutions and the chapter's
    Summary and Exercises) and the text around it."""
    from bs4 import BeautifulSoup

    html = built_page(docname).read_text(encoding="utf8")
    article = BeautifulSoup(html, "html.parser").select_one("article.bd-article")
    assert article is not None, f"{docname}: no article in the built page"
    links = []
    for link in article.select("a.reference.internal"):
        target = link.get("href", "").split("#")[0].rsplit("/", 1)[-1]
        if not (target[:2].isdigit() and target.endswith(".html")):
            continue
        boxed = bool(link.find_parents("details")) or any(
            "dropdown" in div.get("class", []) for div in link.find_parents("div")
        )
        section = link.find_parent("section")
        closing = section is not None and section.get("id", "") in {"summary", "exercises"}
        context = " ".join(link.parent.get_text().split())[:80]
        links.append((int(target[:2]), not (boxed or closing), context))
    return links
