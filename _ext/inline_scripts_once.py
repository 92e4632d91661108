"""Emit each inline ``<script>`` once per page.

Sphinx 7.4 keeps a script added with ``app.add_js_file(None, body=...)`` in two lists: the
builder's copy has filename ``None``, and the copy it re-adds from the registry before writing
has ``""``. The two compare unequal, so every inline script is written twice. For sphinx-thebe's
``const THEBE_JS_URL = ...`` the second copy is a SyntaxError in the browser ("Identifier
'THEBE_JS_URL' has already been declared") on every page. This extension drops the repeats.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def _script_key(script: Any) -> tuple[object, ...]:
    """What makes two scripts the same: file (``None`` and ``""`` alike), priority, attributes."""
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {})
    return (str(filename), getattr(script, "priority", 0), *sorted(attributes.items()))


def drop_repeated_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Keep the first of each script in the page's ``script_files``, in order."""
    seen: set[tuple[object, ...]] = set()
    unique = []
    for script in context.get("script_files", []):
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app: Sphinx) -> dict[str, Any]:
    """Run after the other extensions have added their page scripts."""
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
