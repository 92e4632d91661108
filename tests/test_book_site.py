"""`require_build`: how the tests that read the built book trust, or wait for, its last build."""

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
    monkeypatch.setattr(book_site, "BUILD_STATUS", path)
    monkeypatch.setattr(book_site, "BUILD_UNDER_WAY", False)
    return path


def test_a_finished_build_is_tested(status: Path) -> None:
    status.write_text("ok\n")
    book_site.require_build()


def test_waits_while_dev_test_builds_then_goes_on(
    status: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(book_site, "BUILD_UNDER_WAY", True)
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
    with pytest.raises(pytest.fail.Exception, match="last build of the book failed"):
        book_site.require_build()


def test_a_build_cut_short_fails_the_test_at_once(status: Path) -> None:
    """An interrupted `./dev book` leaves `building` and a half-rebuilt site: not one to test."""
    status.write_text("building\n")
    with pytest.raises(pytest.fail.Exception, match="did not finish"):
        book_site.require_build()


def test_a_build_that_never_ends_fails_the_test(
    status: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(book_site, "BUILD_UNDER_WAY", True)
    monkeypatch.setattr(book_site, "BUILD_WAIT", 0.2)
    status.write_text("building\n")
    with pytest.raises(pytest.fail.Exception, match=r"still building after 0\.2 s"):
        book_site.require_build()
