"""The install cell every chapter opens with (`tools/install_cell.py`), and that it installs.

The fast tests check the cell's text and the tool that writes it. The slow one (`./dev
install-check`, which CI runs; `./dev test` leaves it out) does what a reader does: a fresh venv
without gptembed, the chapter's first cell run in a kernel of that venv, the chapter's imports.
The cell installs the wheel the book's build publishes (`_ext/publish_wheel.py`), from the site;
the test builds that wheel with the build's own code into a folder it serves on 127.0.0.1, and
points the cell's site URL there.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.book_site import serving

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))[-1]
"""Any chapter: they all open with the same install cell (tests/book/test_notebooks.py)."""


pytestmark = pytest.mark.toolchain  # the tool reads YAML and notebooks: not the unit extras


@pytest.fixture
def install_cell() -> ModuleType:
    """`tools/install_cell.py` (imported only when a test runs: it needs the tools)."""
    from tools import install_cell

    return install_cell


def _copy_config(tmp_path: Path, url: str) -> Path:
    """A folder holding a `_config.yml` whose repository is ``url``, and the real pyproject."""
    (tmp_path / "_config.yml").write_text(f"repository:\n  url: {url}\n", encoding="utf8")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_cell_is_made_from_the_one_repository_url(
    tmp_path: Path, install_cell: ModuleType
) -> None:
    """The wheel's URL comes from `repository.url`, as GitHub Pages publishes that repository."""
    root = _copy_config(tmp_path, "https://github.com/Some-Owner/some.book/")
    assert install_cell.site_url(root) == "https://some-owner.github.io/some.book/"
    cell = install_cell.cell_source(root)
    assert 'site = "https://some-owner.github.io/some.book/"' in cell
    assert install_cell.wheel_name(root) == "gptembed-0.1.0-py3-none-any.whl"
    assert '%pip install --quiet "gptembed[plot] @ {site}wheels/{wheel}"' in cell
    assert install_cell.site_url() in install_cell.cell_source()  # the book's own
    assert "github.com/gptembed/gptembed" in (ROOT / "_config.yml").read_text(encoding="utf8")


@pytest.mark.parametrize("url", ["https://gitlab.com/a/b", "http://github.com/a/b", "a/b"])
def test_a_repository_url_off_github_is_refused(
    tmp_path: Path, url: str, install_cell: ModuleType
) -> None:
    with pytest.raises(ValueError, match=r"must be https://github.com/OWNER/NAME, got"):
        install_cell.site_url(_copy_config(tmp_path, url))


def test_write_rewrites_an_old_install_cell_and_nothing_else(
    tmp_path: Path, install_cell: ModuleType
) -> None:
    import nbformat

    old = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# A chapter"),
            nbformat.v4.new_code_cell(
                "# Outside a clone? Install gptembed.\n%pip install gptembed", execution_count=1
            ),
            nbformat.v4.new_code_cell("import gptembed", execution_count=2),
        ]
    )
    path = tmp_path / "09_new.ipynb"
    nbformat.write(old, path)
    assert install_cell.problems(path)
    install_cell.write(path)
    assert install_cell.problems(path) == []
    new = nbformat.read(path, as_version=4)
    assert len(new.cells) == 3
    assert new.cells[1].id == old.cells[1].id and new.cells[1].execution_count == 1
    assert new.cells[1].metadata["tags"] == ["hide-input"]
    assert [c.source for c in (new.cells[0], new.cells[2])] == ["# A chapter", "import gptembed"]
    install_cell.write(path)  # again: no change
    assert nbformat.read(path, as_version=4) == new


def test_write_adds_the_cell_to_a_chapter_without_one(
    tmp_path: Path, install_cell: ModuleType
) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import numpy")])
    path = tmp_path / "09_new.ipynb"
    nbformat.write(nb, path)
    install_cell.write(path)
    cells = nbformat.read(path, as_version=4).cells
    assert [c.source for c in cells] == [install_cell.cell_source(), "import numpy"]
    assert install_cell.main([str(path)]) == 0
    nbformat.write(nb, path)
    assert install_cell.main([str(path)]) == 1


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


@pytest.fixture
def site(tmp_path: Path, install_cell: ModuleType) -> Iterator[str]:
    """The published site's wheel, built as the book's build builds it, served on 127.0.0.1."""
    from _ext import publish_wheel

    folder = tmp_path / "site"
    wheel = publish_wheel.build_wheel(folder / install_cell.WHEEL_DIR)
    assert wheel.name == install_cell.wheel_name()
    with serving(folder) as url:
        yield url


@pytest.mark.install
def test_a_fresh_environment_gets_gptembed_from_the_first_cell(
    tmp_path: Path, site: str, install_cell: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
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

    install, imports = _code_cells(CHAPTER)[:2]
    published = install_cell.site_url()
    assert install.count(published) == 1, f"the cell should name {published} once:\n{install}"
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(install.replace(published, site)),
            nbformat.v4.new_code_cell(imports),
            nbformat.v4.new_code_cell("import gptembed\nprint(gptembed.__file__)"),
        ]
    )
    monkeypatch.setenv("JUPYTER_PATH", str(kernels / "share" / "jupyter"))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    where_to_run = {"metadata": {"path": str(tmp_path)}}  # the kernel's working directory
    nbclient.NotebookClient(nb, kernel_name="fresh", timeout=600, resources=where_to_run).execute()
    where = "".join(o.get("text", "") for o in nb.cells[2].outputs)
    assert str(venv) in where, f"gptembed came from {where!r}, not the fresh venv"
