"""A chapter opened outside a clone installs gptembed with its first cell, and then runs.

Slow (a new venv, a wheel, pip): `./dev install-check` runs it, and CI runs that; `./dev test`
leaves it out. The check is real: a fresh venv without gptembed, the first cell of a chapter run
in a kernel of that venv, pointed (GPTEMBED_PIP_SPEC) at a wheel built from this checkout instead
of the repository URL, then the chapter's imports.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))[-1]
"""Any chapter: they all open with the same install cell (tests/test_notebooks.py)."""

pytestmark = pytest.mark.install


def _code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _run(cwd: Path, *args: object) -> subprocess.CompletedProcess:
    """Run a command in ``cwd``, outside the checkout (where `import gptembed` finds the source)."""
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd)
    assert result.returncode == 0, (
        f"{args} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


def test_a_fresh_environment_gets_gptembed_from_the_first_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    source = tmp_path / "src"  # a copy, so the build leaves nothing in the checkout
    shutil.copytree(ROOT / "gptembed", source / "gptembed")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    wheels = tmp_path / "dist"
    _run(
        tmp_path,
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--quiet",
        "-w",
        wheels,
        source,
    )
    (wheel,) = wheels.glob("gptembed-*.whl")
    venv = tmp_path / "venv"
    _run(tmp_path, sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    _run(
        tmp_path,
        python,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "ipykernel",
    )
    missing = _run(
        tmp_path, python, "-c", "import importlib.util as u; print(u.find_spec('gptembed'))"
    )
    assert missing.stdout.strip() == "None", "the fresh venv must start without gptembed"
    kernels = tmp_path / "kernels"
    _run(tmp_path, python, "-m", "ipykernel", "install", "--prefix", kernels, "--name", "fresh")

    install_cell, imports = _code_cells(CHAPTER)[:2]
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(install_cell),
            nbformat.v4.new_code_cell(imports),
            nbformat.v4.new_code_cell("import gptembed\nprint(gptembed.__file__)"),
        ]
    )
    monkeypatch.setenv("JUPYTER_PATH", str(kernels / "share" / "jupyter"))
    monkeypatch.setenv("GPTEMBED_PIP_SPEC", f"gptembed[plot] @ {wheel.as_uri()}")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    where_to_run = {"metadata": {"path": str(tmp_path)}}  # the kernel's working directory
    nbclient.NotebookClient(nb, kernel_name="fresh", timeout=600, resources=where_to_run).execute()
    where = "".join(o.get("text", "") for o in nb.cells[2].outputs)
    assert str(venv) in where, f"gptembed came from {where!r}, not the fresh venv"
