"""Publish a wheel of gptembed with the book: the one each chapter's first cell installs.

An HTML build writes ``wheels/<name>-<version>-py3-none-any.whl`` into its output folder, built
from this checkout (`tools/install_cell.py` makes the cell that installs it, from the same name
and version). pip builds the wheel from a copy of the package's files while Sphinx builds the
pages, and the build fails if pip fails or the wheel is not the one the cell names.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from tools.install_cell import WHEEL_DIR, wheel_name

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_FILES = ("gptembed", "pyproject.toml", "README.md")
"""What building the wheel reads (the README is the package's long description)."""


def start_wheel(workdir: Path, root: Path = ROOT) -> subprocess.Popen[str]:
    """Start pip building the wheel of the package at ``root`` into ``workdir/dist``.

    pip builds from a copy in ``workdir/src``, so nothing is written into the checkout, and
    offline: ``--no-build-isolation`` uses the setuptools of the running Python's environment.
    """
    source = workdir / "src"
    source.mkdir(parents=True)
    for name in PACKAGE_FILES:
        path = root / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(path, source / name)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    command += ["--disable-pip-version-check", "--quiet", "-w", str(workdir / "dist"), str(source)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish_wheel(job: subprocess.Popen[str], workdir: Path, dest: Path, root: Path = ROOT) -> Path:
    """Wait for ``job`` and move its wheel into ``dest`` (emptied of older wheels first).

    Raises:
        ExtensionError: pip failed, or built a wheel of another name than the install cell's.
    """
    output, _ = job.communicate()
    if job.returncode != 0:
        raise ExtensionError(f"pip could not build the wheel of gptembed:\n{output}")
    built = sorted((workdir / "dist").glob("*.whl"))
    wanted = wheel_name(root)
    if [path.name for path in built] != [wanted]:
        names = [path.name for path in built]
        raise ExtensionError(f"pip built {names}, but the install cell names {wanted}")
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.whl"):
        old.unlink()
    return Path(shutil.move(str(built[0]), str(dest / wanted)))


def build_wheel(dest: Path, root: Path = ROOT) -> Path:
    """Build the wheel of the package at ``root`` into ``dest``; its path."""
    with tempfile.TemporaryDirectory(prefix="gptembed-wheel-") as workdir:
        return finish_wheel(start_wheel(Path(workdir), root), Path(workdir), dest, root)


def _start(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    workdir = tempfile.TemporaryDirectory(prefix="gptembed-wheel-")
    app.gptembed_wheel = (start_wheel(Path(workdir.name)), workdir)  # type: ignore[attr-defined]


def _finish(app: Sphinx, exception: Exception | None) -> None:
    started = getattr(app, "gptembed_wheel", None)
    if started is None:
        return
    job, workdir = started
    try:
        if exception is None:
            finish_wheel(job, Path(workdir.name), Path(app.outdir) / WHEEL_DIR)
        else:
            job.kill()
            job.communicate()
    finally:
        workdir.cleanup()


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _start)
    app.connect("build-finished", _finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
