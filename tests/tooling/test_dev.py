"""`./dev` itself: with nothing changed it needs no network, and it completes a venv that an
interrupted setup left half-made (`./dev lab` has its own test: tests/book/test_lab.py)."""

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
