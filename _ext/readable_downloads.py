"""Make each chapter's downloadable ``.ipynb`` read cleanly outside the book, as its page reads.

The download button serves ``_build/html/_sources/<docname>.ipynb``, a copy of the chapter, and
``./dev lab`` copies the same files. Its markdown is written for the book: ``{glue:text}`name:fmt```
roles that myst-nb fills in, ``{numref}``, ``{ref}`` and ``{doc}`` cross-references,
sphinx-exercise's fenced ``exercise-start`` / ``solution-start`` directives and the book's
``how-we-know-start``. In plain Jupyter those show as raw syntax, and the cells the page hides
(tagged ``remove-cell``, ``hide-input``, ...) show in full.

After an HTML build, one handler rewrites those copies (never the chapters themselves), each
markdown cell in these steps, in this order:

1. a fenced directive that another extension registered with ``add_download_text`` (one whose
   output only the book's page can show, such as the cost explorer) becomes that extension's
   text;
2. an exercise becomes a bold line with its number and title as the page shows them ("Exercise
   6.1 (Look four back)") and its text; a solution's text goes in a closed HTML ``<details>``
   whose summary is the page's ("Solution to Exercise 6.1 (Look four back)"), one in each
   markdown cell that a solution spanning cells reaches; a "How we know" dropdown
   (``how_we_know``) becomes a bold line of its own with its title, then its cells; a
   ``{dropdown}`` a bold line with its title and its text; the closing directives and MyST
   targets go;
3. a glue role becomes the value glued in that notebook's stored outputs, formatted as myst-nb
   formats it (the format spec applied to the number when the glued text is a number);
   ``{numref}`` becomes the number the book shows ("Fig. 2"), ``{ref}`` the target's title and
   ``{doc}`` the page's title (an explicit link text wins in all three); any other role keeps
   only its text;
4. runs of blank lines left by the steps become one (none at either end), and a markdown cell
   left empty is dropped.

Every cell stays, so the copy runs as the chapter does, but what the page hides is collapsed as
JupyterLab reads a notebook's metadata: the source (``jupyter.source_hidden``) of a cell tagged
``remove-cell``, ``hide-cell``, ``remove-input`` or ``hide-input``, the outputs (``collapsed``,
and nbformat's ``jupyter.outputs_hidden``) of one tagged ``remove-cell``, ``hide-cell``,
``remove-output`` or ``hide-output``, and both of a code cell inside a solution.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from html import escape
from pathlib import Path, PurePosixPath
from typing import Any, cast

import nbformat
from sphinx.application import Sphinx
from sphinx.domains.std import StandardDomain
from sphinx.util import logging

from _ext.how_we_know import SUMMARY

logger = logging.getLogger(__name__)

GLUE_MIME = "application/papermill.record/text/plain"
ROLE = re.compile(r"\{(?P<name>[\w:.-]*)\}`(?P<content>[^`]*)`")
EXPLICIT = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
GATED = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{(?P<kind>exercise|solution|how-we-know)-(?P<edge>start|end)\}"
    r"[ \t]*(?P<arg>[^\n]*)\n(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)(?P=fence)[ \t]*$",
    re.MULTILINE,
)
DROPDOWN = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{dropdown\}[ \t]*(?P<title>[^\n]*)\n"
    r"(?:[ \t]*:[\w-]+:[^\n]*\n)*(?P<body>(?:.*\n)*?)(?P=fence)[ \t]*$",
    re.MULTILINE,
)
"""A fenced sphinx-design ``{dropdown}``: its title, options and body."""
HIDES_SOURCE = frozenset({"remove-cell", "hide-cell", "remove-input", "hide-input"})
"""The tags whose cell's source the page does not show (removed, or closed behind a toggle)."""
HIDES_OUTPUTS = frozenset({"remove-cell", "hide-cell", "remove-output", "hide-output"})
"""The tags whose cell's outputs the page does not show."""
SOLUTION_IN_CODE = "Its code is in the cells that follow."
"""The text of a solution's ``<details>`` where the solution starts at the end of a cell."""
TARGET_LINE = re.compile(r"^\([\w.:-]+\)=[ \t]*\n?", re.MULTILINE)
TEXTS = "readable_downloads_texts"
"""The app's attribute that holds the texts registered by ``add_download_text``, by directive."""


def add_download_text(app: Sphinx, directive: str, text: str) -> None:
    """In every downloadable copy, replace each fenced ``{directive}`` block with ``text``.

    For a directive whose output only the book's page can show: its extension calls this from
    its ``setup`` (which sets this extension up first, if the book has not yet).
    """
    app.setup_extension(__name__)
    _texts(app)[directive] = text


def _texts(app: Sphinx) -> dict[str, str]:
    """The texts registered for ``app``, by directive (``setup`` gives the app an empty dict)."""
    texts: dict[str, str] = getattr(app, TEXTS)
    return texts


def fenced(directives: Iterable[str]) -> re.Pattern[str]:
    """A fenced block (backticks or colons, any options and content) of one of ``directives``,
    whose name is the group ``name``; with no directives, a pattern that matches nothing."""
    names = "|".join(map(re.escape, directives)) or "(?!)"
    return re.compile(
        rf"^(?P<fence>`{{3,}}|:{{3,}})\{{(?P<name>{names})\}}[^\n]*\n(?:.*\n)*?(?P=fence)[ \t]*$",
        re.MULTILINE,
    )


def glued_values(nb: Any) -> dict[str, str]:
    """Every value glued in ``nb``'s stored outputs, by name, as its text/plain."""
    values = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name and GLUE_MIME in output.get("data", {}):
                values[name] = output["data"][GLUE_MIME]
    return values


def format_glued(text: str, spec: str) -> str:
    """``text`` (a glued text/plain) under the format ``spec``, as myst-nb renders it.

    The text is read as a Python literal when it is one (which also drops a string's quotes);
    the spec's type letter says whether the value is formatted as an int, a float or a string.
    """
    try:
        value: Any = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if not spec:
        return str(value)
    kind = spec[-1]
    if kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    elif kind == "s":
        value = str(value)
    return format(value, spec)


class Rewriter:
    """Rewrites one chapter's markdown with what the finished build knows."""

    def __init__(self, app: Sphinx, docname: str, nb: Any) -> None:
        self.env = app.env
        self.config = app.config
        self.docname = docname
        self.glue = glued_values(nb)
        self.std = cast(StandardDomain, app.env.get_domain("std"))
        self.texts = _texts(app)
        self.fenced = fenced(self.texts)
        self.exercises: dict[str, str] = {}
        """Each exercise's heading as the page shows it ("Exercise 6.1 (Title)"), by label."""
        self.solution: str | None = None
        """The summary of the solution the cells being read are in, if any."""
        self.continued = False
        """Whether the open solution's text began in an earlier cell."""

    def number(self, kind: str, docname: str, node_id: str) -> str | None:
        """The number Sphinx gave the ``kind`` (figure, exercise, ...) ``node_id``, as shown."""
        numbers = self.env.toc_fignumbers.get(docname, {}).get(kind, {}).get(node_id)
        return ".".join(map(str, numbers)) if numbers else None

    def role(self, match: re.Match[str]) -> str:
        name, content = match["name"], match["content"]
        explicit = EXPLICIT.match(content)
        title, target = (explicit["title"], explicit["target"]) if explicit else ("", content)
        if name.startswith("glue"):
            # Only {glue:text} takes a format: `name:spec`.
            key, spec = content, ""
            if name == "glue:text" and ":" in content:
                key, spec = content.rsplit(":", 1)
            if key not in self.glue:
                logger.warning(f"{self.docname}: no glued value {key!r} for the download")
                return content
            return format_glued(self.glue[key], spec)
        if name == "numref":
            return self.numref(title, target)
        if name == "ref":
            return f"*{title or self.label_title(target) or target}*"
        if name == "doc":
            return f"*{title or self.doc_title(target) or target}*"
        if name == "math":
            return f"${content}$"
        return title or content

    def label_title(self, label: str) -> str | None:
        entry = self.std.labels.get(label.lower())
        return entry[2] if entry and entry[2] else None

    def numref(self, title: str, label: str) -> str:
        entry = self.std.anonlabels.get(label.lower())
        caption = self.label_title(label) or ""
        if entry:
            docname, node_id = entry
            for kind, fmt in self.config.numfig_format.items():
                number = self.number(kind, docname, node_id)
                if number is not None:
                    if title:
                        return (
                            title.replace("%s", number)
                            .replace("{number}", number)
                            .replace("{name}", caption)
                        )
                    return fmt % number
        logger.warning(f"{self.docname}: no number for {{numref}} {label!r} in the download")
        return title or caption or label

    def doc_title(self, target: str) -> str | None:
        path = PurePosixPath(target.removesuffix(".ipynb").removesuffix(".md"))
        if not target.startswith("/"):
            path = PurePosixPath(self.docname).parent / path
        docname = str(path).lstrip("/")
        title = self.env.titles.get(docname)
        return title.astext() if title is not None else None

    def heading(self, match: re.Match[str]) -> str:
        """An exercise's heading as the page shows it, kept for its solution's summary."""
        label = re.search(r":label:\s*(\S+)", match["options"])
        number = self.number("exercise", self.docname, label[1]) if label else None
        title = match["arg"].strip()
        heading = " ".join(part for part in ("Exercise", number, title and f"({title})") if part)
        if label:
            self.exercises[label[1]] = heading
        return heading

    def directive(self, match: re.Match[str]) -> str:
        """An exercise's or a box's start: its heading, a bold paragraph of its own."""
        if match["edge"] == "end":
            return ""
        if match["kind"] == "how-we-know":  # the title the book's dropdown shows
            return f"\n**{SUMMARY}{match['arg'].strip()}**\n"
        return f"\n**{self.heading(match)}**\n"

    def solution_start(self, match: re.Match[str]) -> None:
        """Open the solution that ``match`` starts, under its exercise's heading."""
        label = match["arg"].strip()
        number = self.number("exercise", self.docname, label)
        exercise = self.exercises.get(label) or (f"Exercise {number}" if number else "Exercise")
        self.solution, self.continued = f"Solution to {exercise}", False

    def details(self, solution: str, body: str) -> str:
        """The ``solution``'s ``body`` (its text in one cell) closed in a ``<details>``; the
        summary says "continued" after its first; nothing for an empty body after the first."""
        summary = f"{solution}, continued" if self.continued else solution
        if not body.strip():
            if self.continued:
                return ""
            body = SOLUTION_IN_CODE
        self.continued = True
        summary = escape(summary, quote=False)
        return f"\n<details><summary>{summary}</summary>\n\n{body.strip()}\n\n</details>\n"

    def gated(self, text: str) -> str:
        """A markdown cell's exercises, solutions and boxes; a solution's text in ``<details>``.

        A solution can span cells: it stays open from its start to its end, in whichever cell
        that is, and the code cells between are :meth:`hide`'s.
        """
        done: list[str] = []  # the cell's text outside a solution, and each solution's details
        body = ""  # the open solution's text in this cell so far
        at = 0
        for match in GATED.finditer(text):
            piece = text[at : match.start()]
            if match["kind"] != "solution":
                piece += self.directive(match)
            at = match.end()
            if self.solution is None:
                done.append(piece)
            else:
                body += piece
            if match["kind"] == "solution" and match["edge"] == "start":
                self.solution_start(match)
            elif match["kind"] == "solution" and self.solution is not None:
                done.append(self.details(self.solution, body))
                body, self.solution = "", None
        if self.solution is None:
            return "".join([*done, text[at:]])
        return "".join([*done, self.details(self.solution, body + text[at:])])

    def markdown(self, text: str) -> str:
        """A markdown cell's source, rewritten in the steps the module's docstring lists."""
        text = self.fenced.sub(lambda block: self.texts[block["name"]], text)
        text = self.gated(text)
        text = DROPDOWN.sub(lambda box: f"**{box['title'].strip()}**\n\n{box['body']}", text)
        text = TARGET_LINE.sub("", text)
        text = ROLE.sub(self.role, text)
        return re.sub(r"\n{3,}", "\n\n", text).strip("\n")

    def hide(self, cell: Any) -> None:
        """Collapse what the page hides of ``cell``: by its tags, or a solution's code cell."""
        tags = set(cell.metadata.get("tags", []))
        in_solution = self.solution is not None and cell.cell_type == "code"
        jupyter = dict(cell.metadata.get("jupyter", {}))
        if in_solution or tags & HIDES_SOURCE:
            jupyter["source_hidden"] = True
        if cell.cell_type == "code" and (in_solution or tags & HIDES_OUTPUTS):
            jupyter["outputs_hidden"] = True
            cell.metadata["collapsed"] = True
        if jupyter:
            cell.metadata["jupyter"] = jupyter


def rewrite_downloads(app: Sphinx, exception: Exception | None) -> None:
    """After a successful HTML build, rewrite every chapter's copy under ``_sources``."""
    if exception is not None or app.builder.format != "html":
        return
    sources = Path(app.outdir) / "_sources"
    for docname in sorted(app.env.found_docs):
        if not str(app.env.doc2path(docname)).endswith(".ipynb"):
            continue
        path = sources / f"{docname}.ipynb"
        if not path.is_file():
            continue
        nb = nbformat.read(path, as_version=4)
        rewriter = Rewriter(app, docname, nb)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = rewriter.markdown(cell.source)
            rewriter.hide(cell)
        nb.cells = [c for c in nb.cells if c.cell_type != "markdown" or c.source.strip()]
        nbformat.validate(nb)
        nbformat.write(nb, path)


def setup(app: Sphinx) -> dict[str, Any]:
    setattr(app, TEXTS, {})
    app.connect("build-finished", rewrite_downloads)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
