"""Make each chapter's downloadable ``.ipynb`` read cleanly outside the book.

The download button serves ``_build/html/_sources/<docname>.ipynb``, a copy of the chapter. Its
markdown is written for the book: ``{glue:text}`name:fmt``` roles that myst-nb fills in,
``{numref}``, ``{ref}`` and ``{doc}`` cross-references, sphinx-exercise's fenced
``exercise-start`` / ``solution-start`` directives and the book's ``how-we-know-start``. In
plain Jupyter those show as raw syntax.

After an HTML build, one handler rewrites those copies (never the chapters themselves), each
markdown cell in these steps, in this order:

1. a fenced directive that another extension registered with ``add_download_text`` (one whose
   output only the book's page can show, such as the cost explorer) becomes that extension's
   text;
2. an exercise becomes a bold "Exercise N" line with its text, a solution a bold
   "Solution to Exercise N" line with its cells, a "How we know" dropdown (``how_we_know``) a
   bold line with its title and its cells, a ``{dropdown}`` a bold line with its title and its
   text; the closing directives and MyST targets go;
3. a glue role becomes the value glued in that notebook's stored outputs, formatted as myst-nb
   formats it (the format spec applied to the number when the glued text is a number);
   ``{numref}`` becomes the number the book shows ("Fig. 2"), ``{ref}`` the target's title and
   ``{doc}`` the page's title (an explicit link text wins in all three); any other role keeps
   only its text;
4. runs of blank lines left by the steps become one (none at either end), and a markdown cell
   left empty is dropped.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
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

    def directive(self, match: re.Match[str]) -> str:
        if match["edge"] == "end":
            return ""
        if match["kind"] == "how-we-know":  # the title the book's dropdown shows
            return f"**{SUMMARY}{match['arg'].strip()}**\n"
        if match["kind"] == "exercise":
            label = re.search(r":label:\s*(\S+)", match["options"])
            number = self.number("exercise", self.docname, label[1]) if label else None
            return f"**Exercise {number}**\n" if number else "**Exercise**\n"
        number = self.number("exercise", self.docname, match["arg"].strip())
        return f"**Solution to Exercise {number}**\n" if number else "**Solution**\n"

    def markdown(self, text: str) -> str:
        """A markdown cell's source, rewritten in the steps the module's docstring lists."""
        text = self.fenced.sub(lambda block: self.texts[block["name"]], text)
        text = GATED.sub(self.directive, text)
        text = DROPDOWN.sub(lambda box: f"**{box['title'].strip()}**\n\n{box['body']}", text)
        text = TARGET_LINE.sub("", text)
        text = ROLE.sub(self.role, text)
        return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


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
        nb.cells = [c for c in nb.cells if c.cell_type != "markdown" or c.source.strip()]
        nbformat.validate(nb)
        nbformat.write(nb, path)


def setup(app: Sphinx) -> dict[str, Any]:
    setattr(app, TEXTS, {})
    app.connect("build-finished", rewrite_downloads)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
