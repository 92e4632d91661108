"""`.ci/run` installs a browser only for the check that drives one, as root or through sudo:
the lower-bounds check runs on a machine with no browser and no root.

Each test runs the real script from a copy of the repository's `.ci/` beside a stand-in `./dev`
that records its arguments; `id`, `sudo` and `apt-get` are stand-ins on PATH that record theirs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

STAND_INS = {
    "dev": 'echo "dev $*" >> "$LOG"',
    "bin/id": 'echo "${FAKE_UID:?}"',
    "bin/sudo": 'echo "sudo $*" >> "$LOG"',
    "bin/apt-get": 'echo "apt-get $*" >> "$LOG"',
}


def _ci_run(tmp_path: Path, *checks: str, uid: int) -> list[str]:
    """Run `.ci/run CHECKS` as user ``uid`` with no browser installed; the commands it ran."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    for name, body in STAND_INS.items():
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"#!/usr/bin/env bash\n{body}\n")
        path.chmod(0o755)
    log = tmp_path / "log"
    env = os.environ | {
        "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        "LOG": str(log),
        "FAKE_UID": str(uid),
        "GPTEMBED_CHROMIUM": str(tmp_path / "no-browser"),
    }
    result = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run"), *checks],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return log.read_text().splitlines() if log.exists() else []


def test_lower_bounds_needs_no_browser_and_no_root(tmp_path: Path) -> None:
    assert _ci_run(tmp_path, "lower-bounds", "install-check", uid=1000) == [
        "dev lower-bounds",
        "dev install-check",
    ]


@pytest.mark.parametrize(("uid", "as_root"), [(0, []), (1000, ["sudo"])])
def test_the_test_check_installs_the_browser_first(
    tmp_path: Path, uid: int, as_root: list[str]
) -> None:
    apt = [*as_root, "apt-get"]
    assert _ci_run(tmp_path, "book", "test", uid=uid) == [
        "dev book",
        " ".join([*apt, "update"]),
        " ".join([*apt, "install", "-y", "chromium-headless-shell"]),
        "dev test",
    ]
