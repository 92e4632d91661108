"""`require_build`: how the tests that read the built book wait for `./dev test`'s build."""

from __future__ import annotations

import threading
from pathlib import Path

import book_site
import pytest

pytestmark = pytest.mark.toolchain


@pytest.fixture
def status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A build status file, and a built book (an index.html) for `require_build` to find."""
    build = tmp_path / "html"
    build.mkdir()
    (build / "index.html").write_text("<html></html>")
    path = tmp_path / "book-status"
    monkeypatch.setattr(book_site, "BUILD", build)
    monkeypatch.setattr(book_site, "BUILD_STATUS", str(path))
    return path


def test_waits_while_building_then_goes_on(status: Path) -> None:
    status.write_text("building\n")
    timer = threading.Timer(0.3, status.write_text, args=("ok\n",))
    timer.start()
    try:
        book_site.require_build()
    finally:
        timer.cancel()
    assert status.read_text() == "ok\n", "require_build returned before the build ended"


def test_a_failed_build_fails_the_test(status: Path) -> None:
    status.write_text("failed\n")
    with pytest.raises(pytest.fail.Exception, match="build failed"):
        book_site.require_build()


def test_a_build_that_never_ends_fails_the_test(
    status: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status.write_text("building\n")
    monkeypatch.setattr(book_site, "BUILD_WAIT", 0.2)
    with pytest.raises(pytest.fail.Exception, match=r"still building after 0\.2 s"):
        book_site.require_build()
