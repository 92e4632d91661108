"""Drop the theme's ``<link rel="preload" as="font" crossorigin>`` tags from the built pages.

pydata-sphinx-theme 0.15 (the one sphinx-book-theme offers on Python 3.10) preloads its
Font Awesome web fonts with ``crossorigin``. Opened from disk (``file://``, which README
promises works), Chromium blocks those loads as cross-origin and logs six console errors per
page; the icons themselves come from Font Awesome's script either way. A preload is only a
hint, so removing it changes nothing over HTTP. The newer theme on Python 3.11+ writes no such
tags, and there this does nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

FONT_PRELOAD = re.compile(r"""<link\b(?=[^>]*\brel=["']?preload)(?=[^>]*\bas=["']?font)[^>]*>\s*""")


def drop_font_preloads(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf8")
        cleaned = FONT_PRELOAD.sub("", text)
        if cleaned != text:
            page.write_text(cleaned, encoding="utf8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("build-finished", drop_font_preloads)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
