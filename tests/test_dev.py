"""`./dev` itself: setup needs no package index when nothing changed, a half-made venv is made
anew, and `./dev lab` serves the chapters in JupyterLab."""

from __future__ import annotations

import json
import os
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

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "dev"
VENV = Path(sys.prefix)
STAMP = VENV / ".gptembed-setup"


def _offline_env(tmp_path: Path, venv: Path) -> dict[str, str]:
    """The environment of a machine with no package index: pip can install nothing."""
    no_wheels = tmp_path / "no-wheels"
    no_wheels.mkdir(exist_ok=True)
    return os.environ | {
        "GPTEMBED_VENV": str(venv),
        "GPTEMBED_PYTHON": sys.executable,
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_EXTRA_INDEX_URL": "",
        "PIP_FIND_LINKS": str(no_wheels),
    }


def _setup_offline(
    tmp_path: Path, venv: Path, timeout: int, *options: str
) -> subprocess.CompletedProcess:
    """`./dev setup [options]` for ``venv`` on a machine with no package index."""
    return subprocess.run(
        [str(DEV), "setup", *options],
        env=_offline_env(tmp_path, venv),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _require_dev_venv(tmp_path: Path) -> None:
    """These tests reuse the venv running them, so it must be one that `./dev` made, and up to
    date: offline, setting up a stale venv would fail and leave it to be made anew."""
    assert STAMP.is_file(), (
        f"{VENV} has no {STAMP.name}: run the tests through ./dev test, which sets it up"
    )
    check = _setup_offline(tmp_path, VENV, 60, "--check")
    assert check.returncode == 0, f"{check.stderr}(./dev test sets it up)"


def test_setup_does_nothing_offline_when_nothing_changed(tmp_path: Path) -> None:
    """With a matching stamp, setup installs nothing and so needs no package index."""
    _require_dev_venv(tmp_path)
    before = STAMP.read_text()
    result = _setup_offline(tmp_path, VENV, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr
    assert STAMP.read_text() == before


def test_setup_check_reports_a_stale_venv_and_changes_nothing(tmp_path: Path) -> None:
    """`./dev setup --check` fails on a stamp that no longer matches, and leaves it as it was."""
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / STAMP.name).write_text("stale\n")
    result = _setup_offline(tmp_path, venv, 60, "--check")
    assert result.returncode == 1
    assert "is not set up for the current" in result.stderr
    assert (venv / STAMP.name).read_text() == "stale\n"
    assert sorted(path.name for path in venv.iterdir()) == [STAMP.name]


def test_a_half_made_venv_is_made_anew(tmp_path: Path) -> None:
    """A venv left by an interrupted first setup (no pip, no stamp) is not reused.

    Offline, the fresh venv gets pip but the install then fails: the test sees setup start over,
    and pip's own reason for failing reach the terminal.
    """
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    leftover = venv / "left-by-the-interrupted-run"
    leftover.touch()
    result = _setup_offline(tmp_path, venv, timeout=120)
    assert result.returncode != 0
    assert "was not set up completely" in result.stderr
    assert not leftover.exists(), "the half-made venv was reused"
    assert "No matching distribution found" in result.stderr, result.stderr
    assert "pip could not install" in result.stderr
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "--version"], check=False)
    assert pip.returncode == 0, "the venv was not made anew with pip"
    assert not (venv / ".gptembed-setup").exists(), "a failed setup wrote its stamp"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, token: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.read()


def test_dev_lab_serves_the_chapters(tmp_path: Path) -> None:
    """`./dev lab` starts JupyterLab (headless here) with every chapter in its file browser."""
    _require_dev_venv(tmp_path)
    port, token = _free_port(), "gptembed-test"
    env = _offline_env(tmp_path, VENV) | {
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
