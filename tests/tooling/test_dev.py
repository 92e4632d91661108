"""`./dev` itself: with nothing changed it needs no network, it completes a venv that an
interrupted setup left half-made, `./dev lab` serves the chapters in JupyterLab, and nbval re-runs
a chapter where pytest-xdist is not installed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
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
    imports = "import gptembed, matplotlib, nbval, sphinx, pytest; print(gptembed.__file__)"
    where = subprocess.run([python, "-c", imports], capture_output=True, text=True, check=True)
    assert where.stdout.strip() == str(ROOT / "gptembed" / "__init__.py")


def test_nbval_reruns_a_chapter_without_pytest_xdist() -> None:
    """Re-running a chapter with nbval needs no pytest-xdist (conftest.py once defined one of
    its hooks, and pytest then stopped with an INTERNALERROR)."""
    chapter = min((ROOT / "book").glob("*.ipynb"), key=lambda path: path.stat().st_size)
    pytest = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q"]
    result = subprocess.run(
        [*pytest, "--nbval", "--nbval-current-env", str(chapter.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, token: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 directly
    with opener.open(request, timeout=5) as response:
        return response.status, response.read()


def test_dev_lab_serves_the_chapters(tmp_path: Path) -> None:
    """`./dev lab` starts JupyterLab (headless here) with every chapter in its file browser."""
    port, token = _free_port(), "gptembed-test"
    env = _offline_env(VENV) | {
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
    }
    options = ["--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0"]
    server = subprocess.Popen(
        [str(DEV), "lab", *options, f"--IdentityProvider.token={token}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, f"./dev lab exited: {server.stderr.read()}"
            try:
                status, body = _get(f"{base}/api/status", token)
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "JupyterLab did not answer within 60 s"
                time.sleep(0.5)
        assert status == 200 and "started" in json.loads(body)
        _, listing = _get(f"{base}/api/contents/", token)
        served = {item["name"] for item in json.loads(listing)["content"]}
        chapters = {path.name for path in (ROOT / "book").glob("*.ipynb")}
        assert chapters <= served, f"not in JupyterLab's file browser: {chapters - served}"
        status, page = _get(f"{base}/lab", token)
        assert status == 200 and b"JupyterLab" in page
    finally:
        _stop(server)


def _stop(server: subprocess.Popen) -> None:
    """Stop the server's process group: SIGTERM (Jupyter shuts down cleanly), then SIGKILL."""
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
