"""The tools that rewrite a chapter in place (`./dev execute`'s `tools/store_outputs.py`,
`tools/install_cell.py --write`) write it whole or not at all (`tools/_notebook_file.py`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain  # the tools read notebooks: not the unit extras

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "01_token_plus_position.ipynb"

FULL_DISK = """
import resource, signal, sys
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
path = Path(sys.argv[1])
from tools import install_cell, store_outputs
install_cell.write(path) if sys.argv[2] == "install_cell" else store_outputs.main([str(path)])
"""
"""Rewrite the chapter at argv[1] with the tool argv[2], where no file may pass 4,096 bytes."""


@pytest.mark.parametrize("tool", ["store_outputs", "install_cell"])
def test_a_rewrite_that_fails_partway_leaves_the_chapter_as_it_was(
    tmp_path: Path, tool: str
) -> None:
    chapter = tmp_path / CHAPTER.name
    shutil.copy(CHAPTER, chapter)
    chapter.chmod(0o640)
    before = chapter.read_bytes()
    assert len(before) > 4096
    failed = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(chapter), tool],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert failed.returncode != 0 and "File too large" in failed.stderr, failed.stderr
    assert chapter.read_bytes() == before
    assert list(tmp_path.iterdir()) == [chapter]

    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK.replace("4096", "10**9"), str(chapter), tool],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert chapter.read_bytes() == before  # the book's chapters are stored in this form
    assert chapter.stat().st_mode & 0o777 == 0o640
    assert list(tmp_path.iterdir()) == [chapter]
