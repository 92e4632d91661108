"""A small site that uses each of the book's extensions, as the book's build configures them
(tests/ext/test_sphinx_extensions.py builds it). Its chapter is stored executed: nothing runs."""

from __future__ import annotations

from sphinx.application import Sphinx

project = "The book's extensions"
extensions = [
    "myst_nb",
    "sphinx_exercise",
    "sphinx_design",
    "_ext.inline_scripts_once",
    "_ext.readable_downloads",
    "_ext.cost_explorer",
    "_ext.how_we_know",
]
exclude_patterns = ["_build"]
numfig = True
nb_execution_mode = "off"
html_sourcelink_suffix = ""  # as jupyter-book sets it: the download is _sources/chapter.ipynb

INLINE_SCRIPT = "const EXTENSIONS_SITE = true;"
"""An inline script, added once the builder exists, as sphinx-thebe adds its own."""


def setup(app: Sphinx) -> None:
    app.connect("builder-inited", lambda app: app.add_js_file(None, body=INLINE_SCRIPT))
