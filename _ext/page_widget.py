"""A page widget: a directive that places one block of HTML in a page, and the data, script and
style that block runs on, loaded on the pages that hold it and on no other. Chapter 4's cost
explorer and chapter 8's playground are the two (``_ext/cost_explorer.py``,
``_ext/gpt_playground.py``).

Every widget sits in the same box: its outermost element has the class :data:`WIDGET_CLASS`,
whose rule is ``page_widget.css``, loaded with the widget's own files.

The data goes into ``_static/<data file>`` as a script that sets one global, loaded with a plain
``<script src>`` like the widget's own script: that works from ``file://`` too, where a ``fetch``
of a JSON file would not.

A role of the directive's name links any page to a setting of the widget, given as the query the
widget reads from its page's address: ``{gpt-playground}`a passage started at row 64 <start=64>```
becomes a link to the widget's section with ``?start=64``, wherever the widget's page is. In a
chapter's downloaded copy, which has no widget to open, the role becomes its text
(``readable_downloads``), so the text should say what the setting is.
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
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole
from sphinx.util.nodes import split_explicit_title

from _ext.readable_downloads import add_download_text

logger = logging.getLogger(__name__)

HERE = Path(__file__).parent
WIDGET_CLASS = "page-widget"
"""The class of every widget's outermost element: the box it sits in (:data:`STYLE`'s rule)."""
STYLE = "page_widget.css"
"""The stylesheet every widget's page loads, before the widget's own."""

PLACES = "page_widget_places"
"""The build environment's attribute that says where each widget is: by directive, the pages that
hold it, each with the id of the section it is in."""


class widget_link(nodes.Inline, nodes.TextElement):
    """A link to a setting of the widget ``directive`` (the address's ``query``), made a reference
    once every page has been read and the widget's page is known."""


def _places(env: BuildEnvironment, directive: str) -> dict[str, str]:
    """The pages that hold ``directive``'s widget, each with its section's id (kept in ``env``)."""
    places: dict[str, dict[str, str]] = env.__dict__.setdefault(PLACES, {})
    return places.setdefault(directive, {})


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

    class Link(SphinxRole):
        def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
            explicit, title, query = split_explicit_title(self.text)
            if not explicit:
                message = self.inliner.reporter.error(
                    f"{{{widget.directive}}} needs a text and a setting, as `text <start=64>`: "
                    f"got {self.text!r}",
                    line=self.lineno,
                )
                return [self.inliner.problematic(self.rawtext, self.rawtext, message)], [message]
            node = widget_link(self.rawtext, directive=widget.directive, query=query.lstrip("?"))
            children, messages = self.inliner.parse(title, self.lineno, self.inliner, node)
            node.extend(children)
            return [node], messages

    def record_place(app: Sphinx, doctree: nodes.document) -> None:
        for node in doctree.findall(widget.node):
            section = node.parent
            while section is not None and not isinstance(section, nodes.section):
                section = section.parent
            section_id = section["ids"][0] if section is not None else ""
            _places(app.env, widget.directive)[app.env.docname] = section_id

    def forget_place(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        _places(env, widget.directive).pop(docname, None)

    def merge_places(
        app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment
    ) -> None:
        _places(env, widget.directive).update(_places(other, widget.directive))

    def resolve_links(app: Sphinx, doctree: nodes.document, docname: str) -> None:
        pages = _places(app.env, widget.directive)
        for node in list(doctree.findall(widget_link)):
            if node["directive"] != widget.directive:
                continue
            if len(pages) != 1:
                logger.warning(
                    f"a link to a setting of {{{widget.directive}}}, which {len(pages)} pages "
                    "hold: it needs exactly one",
                    location=node,
                )
                node.replace_self(nodes.inline("", "", *node.children))
                continue
            ((page, section),) = pages.items()
            uri = f"{app.builder.get_relative_uri(docname, page)}?{node['query']}"
            if section:
                uri += f"#{section}"
            node.replace_self(nodes.reference("", "", *node.children, internal=True, refuri=uri))

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
        app.add_css_file(STYLE)
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
        shutil.copyfile(HERE / STYLE, static / STYLE)

    app.add_node(
        widget.node,
        html=(visit_html, None),
        latex=(skip, None),
        text=(skip, None),
        man=(skip, None),
        texinfo=(skip, None),
    )
    app.add_directive(widget.directive, Directive)
    app.add_role(widget.directive, Link())
    app.connect("doctree-read", record_place)
    app.connect("env-purge-doc", forget_place)
    app.connect("env-merge-info", merge_places)
    app.connect("doctree-resolved", resolve_links)
    app.connect("html-page-context", add_page_files)
    app.connect("build-finished", write_files)
    add_download_text(app, widget.directive, widget.in_download)
