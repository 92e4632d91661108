"""A page widget: a directive that places one block of HTML in a page, and the data, script and
style that block runs on, loaded on the pages that hold it and on no other. Chapter 4's cost
explorer and chapter 8's playground are the two (``_ext/cost_explorer.py``,
``_ext/gpt_playground.py``).

The data goes into ``_static/<data file>`` as a script that sets one global, loaded with a plain
``<script src>`` like the widget's own script: that works from ``file://`` too, where a ``fetch``
of a JSON file would not.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from _ext.readable_downloads import add_download_text


@dataclass(frozen=True)
class Widget:
    """What one widget is made of.

    Attributes:
        directive: its directive's name (``cost-explorer``).
        node: the docutils node the directive leaves in the page (defined at module level in the
            widget's extension, so that Sphinx can pickle the doctree).
        html: the widget's HTML, given its data.
        data: the data the page gets (JSON-serialisable), computed by the package.
        folder: where its script and style live.
        script, style, data_file: their file names in ``_static``.
        data_global: the ``window`` property the data file sets.
        data_source: what made the data, for the data file's first line.
        in_download: the sentence that replaces the directive in a chapter's downloaded copy.
    """

    directive: str
    node: type[nodes.Element]
    html: Callable[[Any], str]
    data: Callable[[], Any]
    folder: Path
    script: str
    style: str
    data_file: str
    data_global: str
    data_source: str
    in_download: str


def add_widget(app: Sphinx, widget: Widget) -> None:
    """Register ``widget``'s node and directive, its files on the pages that hold it, and the
    writing of its data, script and style into the build's ``_static``."""

    class Directive(SphinxDirective):
        has_content = False

        def run(self) -> list[nodes.Node]:
            return [widget.node()]

    def visit_html(translator: Any, node: nodes.Element) -> None:
        translator.body.append(widget.html(widget.data()))
        raise nodes.SkipNode

    def skip(translator: Any, node: nodes.Element) -> None:
        raise nodes.SkipNode

    def add_page_files(
        app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
    ) -> None:
        if doctree is None or not any(doctree.findall(widget.node)):
            return
        app.add_css_file(widget.style)
        app.add_js_file(widget.data_file)
        app.add_js_file(widget.script)

    def write_files(app: Sphinx, exception: Exception | None) -> None:
        if exception is not None or app.builder.format != "html":
            return
        static = Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        text = json.dumps(widget.data(), separators=(",", ":"))
        (static / widget.data_file).write_text(
            f"// {widget.data_source}, written by the book's build.\n"
            f"window.{widget.data_global} = {text};\n",
            encoding="utf8",
        )
        for name in (widget.script, widget.style):
            shutil.copyfile(widget.folder / name, static / name)

    app.add_node(
        widget.node,
        html=(visit_html, None),
        latex=(skip, None),
        text=(skip, None),
        man=(skip, None),
        texinfo=(skip, None),
    )
    app.add_directive(widget.directive, Directive)
    app.connect("html-page-context", add_page_files)
    app.connect("build-finished", write_files)
    add_download_text(app, widget.directive, widget.in_download)
