"""Collapsed "How we know" dropdowns that span notebook cells: prose, code and outputs.

A chapter's main line states a result; the methodology behind it (the seeds, the controls, the
conventions) goes in a dropdown that a reader opens when they want it. A dropdown has to hold
code cells, and a directive cannot span cells, so it is gated, as sphinx-exercise's
``exercise-start`` / ``exercise-end`` are: a markdown cell opens it with

    ```{how-we-know-start} Five seeds and three sizes
    ```

and a later markdown cell in the same section closes it with an empty ``{how-we-know-end}``.
Everything between them becomes one ``<details class="how-we-know">`` element, closed when the
page opens, whose summary reads "How we know: Five seeds and three sizes". A dropdown holds no
heading (a heading starts a new section, which the dropdown cannot straddle) and no other
dropdown; either, or a start without an end, is a build warning (an error in the strict build).
"""

from __future__ import annotations

from html import escape
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.writers.html5 import HTML5Translator

logger = logging.getLogger(__name__)

SUMMARY = "How we know: "
"""What every dropdown's summary starts with, before the title the start directive gives."""


class how_we_know(nodes.General, nodes.Element):
    """The dropdown: its children are the cells' nodes; ``title`` is the summary's title."""


class _start(nodes.General, nodes.Element):
    """Where a dropdown starts (replaced by :class:`how_we_know` when the document is read)."""


class _end(nodes.General, nodes.Element):
    """Where a dropdown ends."""


class HowWeKnowStart(SphinxDirective):
    """``{how-we-know-start} Title``: open a dropdown."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self) -> list[nodes.Node]:
        marker = _start(title=self.arguments[0].strip())
        self.set_source_info(marker)
        return [marker]


class HowWeKnowEnd(SphinxDirective):
    """``{how-we-know-end}``: close the dropdown opened before it."""

    def run(self) -> list[nodes.Node]:
        marker = _end()
        self.set_source_info(marker)
        return [marker]


class GatherDropdowns(SphinxTransform):
    """Move the nodes between each start and its end into one :class:`how_we_know`."""

    default_priority = 500

    def apply(self, **kwargs: Any) -> None:
        for start in list(self.document.findall(_start)):
            parent = start.parent
            first = parent.index(start)
            for last in range(first + 1, len(parent)):
                if isinstance(parent[last], (_end, _start, nodes.section)):
                    break
            else:
                last = len(parent)
            if last == len(parent) or not isinstance(parent[last], _end):
                found = "the end of its section" if last == len(parent) else parent[last].tagname
                logger.warning(
                    f"how-we-know-start {start['title']!r} reaches {found} before a "
                    "how-we-know-end: a dropdown closes in its own section (no heading inside) "
                    "and holds no other dropdown",
                    location=start,
                )
                parent.remove(start)
                continue
            dropdown = how_we_know(title=start["title"])
            dropdown.source, dropdown.line = start.source, start.line
            dropdown.extend(parent[first + 1 : last])
            parent[first : last + 1] = [dropdown]
        for end in list(self.document.findall(_end)):
            logger.warning("how-we-know-end without a how-we-know-start before it", location=end)
            end.parent.remove(end)


def visit_html(self: HTML5Translator, node: how_we_know) -> None:
    self.body.append(
        '<details class="how-we-know">\n'
        f"<summary>{escape(SUMMARY + node['title'])}</summary>\n"
        '<div class="how-we-know-body">\n'
    )


def depart_html(self: HTML5Translator, node: how_we_know) -> None:
    self.body.append("</div>\n</details>\n")


def _children_only(self: Any, node: nodes.Element) -> None:
    """Other writers (text, LaTeX, ...) show the dropdown's content in place."""


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(
        how_we_know,
        html=(visit_html, depart_html),
        latex=(_children_only, _children_only),
        text=(_children_only, _children_only),
        man=(_children_only, _children_only),
        texinfo=(_children_only, _children_only),
    )
    app.add_directive("how-we-know-start", HowWeKnowStart)
    app.add_directive("how-we-know-end", HowWeKnowEnd)
    app.add_transform(GatherDropdowns)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
