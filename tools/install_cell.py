"""The install cell every chapter opens with, made in one place.

A reader who opens a chapter outside a clone (Colab, Binder, a downloaded `.ipynb`) has no
gptembed. The chapter's first code cell installs it: the wheel that the book's build publishes
with the site (`_ext/publish_wheel.py` writes it to `_build/html/wheels/`), so a chapter gets the
version of the package it was executed with. Its URL comes from the book's one repository URL,
`repository.url` in `_config.yml`: the CI workflow publishes the build on GitHub Pages, which
serves the repository `https://github.com/OWNER/NAME` at `https://OWNER.github.io/NAME/`.

    python tools/install_cell.py                   # check every chapter (exit status 1 if not)
    python tools/install_cell.py --write           # rewrite the cell in every chapter
    python tools/install_cell.py --write book/NN_x.ipynb ...   # or in these chapters

The cell opens collapsed: tagged `hide-input` for the book, `source_hidden` for Jupyter.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import yaml

if __package__:  # imported, as tools.install_cell
    from tools._notebook_file import write_notebook
else:  # run as a script, `python tools/install_cell.py`: imports look in tools/ first
    from _notebook_file import write_notebook  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
WHEEL_DIR = "wheels"
"""Where in the built site the wheel goes: `_build/html/wheels/`."""
GITHUB_REPO = re.compile(r"^https://github\.com/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)/?$")
METADATA: dict[str, Any] = {"tags": ["hide-input"], "jupyter": {"source_hidden": True}}
"""The cell's metadata: collapsed in the book (hide-input) and in JupyterLab (source_hidden)."""
FIRST_LINE = "# Outside a clone of the book (Colab, Binder, a download)? Install gptembed,"
"""How the cell starts: the rewrite finds an old copy of the cell by it (or by `%pip install`)."""


def repository_url(root: Path = ROOT) -> str:
    """`repository.url` of `_config.yml`: the one URL the buttons and this cell are made from."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf8"))
    return str(config["repository"]["url"])


def site_url(root: Path = ROOT) -> str:
    """Where GitHub Pages publishes the book of that repository, ending in a slash.

    Raises:
        ValueError: the repository URL is not `https://github.com/OWNER/NAME`.
    """
    url = repository_url(root)
    match = GITHUB_REPO.match(url)
    if match is None:
        raise ValueError(
            f"repository.url in _config.yml must be https://github.com/OWNER/NAME, got {url!r}"
        )
    return f"https://{match['owner'].lower()}.github.io/{match['name']}/"


def wheel_name(root: Path = ROOT) -> str:
    """The file name of the package's wheel, from `pyproject.toml`'s name and version."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf8"))["project"]
    name = re.sub(r"[-_.]+", "_", project["name"]).lower()
    return f"{name}-{project['version']}-py3-none-any.whl"


def cell_source(root: Path = ROOT) -> str:
    """The install cell's code."""
    lines = [
        FIRST_LINE,
        "# the version these chapters ran with, from the site that publishes the book.",
        "import importlib.util",
        "",
        'if importlib.util.find_spec("gptembed") is None:',
        f'    site = "{site_url(root)}"',
        f'    wheel = "{wheel_name(root)}"',
        f'    %pip install --quiet "gptembed[plot] @ {{site}}{WHEEL_DIR}/{{wheel}}"',
    ]
    return "\n".join(lines)


def _is_install_cell(cell: Any) -> bool:
    source = "".join(cell["source"])
    return cell["cell_type"] == "code" and ("%pip install" in source or FIRST_LINE in source)


def _first_code_cell(nb: Any) -> Any:
    return next(cell for cell in nb["cells"] if cell["cell_type"] == "code")


def problems(path: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with the install cell of the chapter at ``path`` (nothing: ``[]``)."""
    import nbformat

    cell = _first_code_cell(nbformat.read(path, as_version=4))
    found = []
    if cell.source != cell_source(root):
        found.append("its first code cell is not the install cell of tools/install_cell.py")
    for key, value in METADATA.items():
        if cell.metadata.get(key) != value:
            found.append(f"its install cell's metadata {key!r} is not {value!r}")
    return found


def write(path: Path, root: Path = ROOT) -> None:
    """Make the first code cell of the chapter at ``path`` the install cell (source, metadata).

    An old install cell is rewritten in place (keeping its id and execution count); a chapter
    without one gets it before its first code cell. Other cells are untouched, and the chapter is
    written whole or not at all (``tools/_notebook_file.py``).

    Raises:
        ValueError: the chapter has no code cell.
    """
    import nbformat

    nb = nbformat.read(path, as_version=4)
    codes = [cell for cell in nb.cells if cell.cell_type == "code"]
    if not codes:
        raise ValueError(f"{path} has no code cell")
    cell = codes[0]
    if not _is_install_cell(cell):
        cell = nbformat.v4.new_code_cell()
        nb.cells.insert(nb.cells.index(codes[0]), cell)
    cell.source = cell_source(root)
    cell.metadata.update(METADATA)
    write_notebook(nb, path)


def main(argv: list[str]) -> int:
    rewrite = "--write" in argv
    paths = [Path(a) for a in argv if a != "--write"] or sorted(ROOT.glob("book/[0-9]*.ipynb"))
    if rewrite:
        for path in paths:
            write(path)
        return 0
    status = 0
    for path in paths:
        for problem in problems(path):
            print(f"{path}: {problem} (run python tools/install_cell.py --write)")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
