"""`./dev` itself: with nothing changed it needs no network, it completes a venv that an
interrupted setup left half-made, and `./dev lab` stops on a book that does not build (with
stand-ins for the tools; tests/book/test_lab.py starts JupyterLab itself)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "dev"
VENV = Path(sys.prefix)
NO_NETWORK = "http://127.0.0.1:9"
"""A proxy that is not there: every request through it fails at once."""


def _uv() -> str:
    """The uv that `./dev` runs (it exports its path as UV, as uv does for its own children)."""
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "no uv: run the tests through ./dev test, which finds or installs it"
    return uv


def _offline_env(venv: Path) -> dict[str, str]:
    """The environment of a machine with no network, with ``venv`` as the project's venv; uv
    installs into it without compiling bytecode (6,952 files, 5 s, for a venv that is thrown
    away)."""
    proxies = {name: NO_NETWORK for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")}
    proxies |= {name.lower(): value for name, value in proxies.items()}
    return (
        os.environ
        | proxies
        | {
            "NO_PROXY": "",
            "UV_PROJECT_ENVIRONMENT": str(venv),
            "UV_COMPILE_BYTECODE": "0",
        }
    )


def _dev(venv: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """`./dev ARGS` for ``venv`` on a machine with no network."""
    return subprocess.run(
        [str(DEV), *args], env=_offline_env(venv), capture_output=True, text=True, timeout=timeout
    )


def _in_sync(venv: Path) -> subprocess.CompletedProcess:
    """uv's own check that ``venv`` holds what uv.lock says, changing nothing."""
    return subprocess.run(
        [_uv(), "sync", "--check", "--extra", "plot"],
        cwd=ROOT,
        env=_offline_env(venv),
        capture_output=True,
        text=True,
    )


def test_setup_needs_no_network_when_nothing_changed() -> None:
    check = _in_sync(VENV)
    assert check.returncode == 0, f"{VENV} is out of sync (./dev test syncs it):\n{check.stderr}"
    result = _dev(VENV, "setup")
    assert result.returncode == 0, result.stderr
    changes = [line for line in result.stderr.splitlines() if line.startswith((" +", " -", " ~"))]
    assert not changes, f"setup changed the venv: {changes}"


def test_a_venv_left_half_made_is_completed_offline(tmp_path: Path) -> None:
    """A first setup interrupted after it made the venv (no pip, a stray file, only some of the
    locked packages) is completed by the next one, from uv's cache alone."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (venv / "left-by-the-interrupted-run").touch()
    some = [_uv(), "sync", "--quiet", "--offline", "--no-install-project", "--only-group", "unit"]
    subprocess.run(some, cwd=ROOT, env=_offline_env(venv), check=True)
    python = venv / "bin" / "python"
    assert _in_sync(venv).returncode != 0, "the half-made venv already counts as set up"
    result = _dev(venv, "setup", timeout=300)
    assert result.returncode == 0, result.stderr
    assert _in_sync(venv).returncode == 0, "setup left the venv out of sync with uv.lock"
    # gptembed imported (the checkout, editable); the tools found where they were installed (not
    # imported: the venv has no bytecode, and compiling them would be most of this test's time)
    check = (
        "import gptembed, importlib.util as u; print(gptembed.__file__); "
        "print(all(u.find_spec(m) for m in ('matplotlib', 'nbval', 'sphinx', 'pytest')))"
    )
    where = subprocess.run([python, "-c", check], capture_output=True, text=True, check=True)
    assert where.stdout.split() == [str(ROOT / "gptembed" / "__init__.py"), "True"]


def _lab(tmp_path: Path, build_exit: int) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`./dev lab` from a copy of the script, with a chapter changed since the last build left a
    copy of it; stand-ins for uv (on PATH), the venv's `jupyter-book` (which exits
    ``build_exit``, having built the chapter's copy if 0) and `jupyter` record what ran."""
    shutil.copy(DEV, tmp_path / "dev")
    built = tmp_path / "_build" / "html" / "_sources" / "book" / "01_x.ipynb"
    built.parent.mkdir(parents=True)
    built.write_text("the copy of the last build")
    chapter = tmp_path / "book" / "01_x.ipynb"
    chapter.parent.mkdir()
    chapter.write_text("the chapter, changed since")
    os.utime(built, (1, 1))
    stand_ins = {
        "bin/uv": 'echo "uv 0.13.9"',
        "venv/bin/python": "true",
        "venv/bin/jupyter-book": f'echo "jupyter-book $*" >> "$LOG"\n'
        f'[ {build_exit} != 0 ] || echo "the new copy" > _build/html/_sources/book/01_x.ipynb\n'
        f"exit {build_exit}",
        "venv/bin/jupyter": 'echo "jupyter $1" >> "$LOG"',
    }
    for name, body in stand_ins.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!/usr/bin/env bash\n{body}\n")
        path.chmod(0o755)
    log = tmp_path / "log"
    env = os.environ | {
        "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        "UV_PROJECT_ENVIRONMENT": str(tmp_path / "venv"),
        "LOG": str(log),
    }
    env.pop("GPTEMBED_LAB_DIR", None)
    result = subprocess.run(
        [str(tmp_path / "dev"), "lab"], env=env, capture_output=True, text=True, timeout=60
    )
    return result, log.read_text().splitlines()


def test_lab_stops_with_the_builds_exit_when_the_book_does_not_build(tmp_path: Path) -> None:
    result, ran = _lab(tmp_path, build_exit=3)
    assert result.returncode == 3
    assert "dev: the book did not build (exit 3), so lab/ would get stale copies" in result.stderr
    assert ran == ["jupyter-book build --all . -W -n --keep-going"]  # no JupyterLab
    assert not (tmp_path / "lab").exists()


def test_lab_opens_the_new_copies_after_a_build(tmp_path: Path) -> None:
    result, ran = _lab(tmp_path, build_exit=0)
    assert result.returncode == 0, result.stderr
    assert ran == ["jupyter-book build --all . -W -n --keep-going", "jupyter lab"]
    assert (tmp_path / "lab" / "01_x.ipynb").read_text() == "the new copy\n"
