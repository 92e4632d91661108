"""Shared test setup: one hypothesis profile, a skip that fails where skips are not allowed, the
groups that pytest-xdist hands out whole, and one chapter's kernel starting at a time."""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
from collections import Counter
from collections.abc import Generator
from pathlib import Path

import pytest
from hypothesis import settings

# No deadline: a shared 2-core machine makes single examples slow now and then, which says
# nothing about the code. 60 examples a property (the default is 100) keep the suite quick.
settings.register_profile("gptembed", deadline=None, max_examples=60)
settings.load_profile("gptembed")

NO_SKIP = os.environ.get("GPTEMBED_NO_SKIP") == "1"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Generator:
    """With GPTEMBED_NO_SKIP=1 (set by .ci/run) a skipped test fails, naming why it skipped."""
    outcome = yield
    report = outcome.get_result()
    if NO_SKIP and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped, but GPTEMBED_NO_SKIP=1 requires it to run: {reason}"


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """With GPTEMBED_NO_SKIP=1, a whole module skipped at import (importorskip) fails too."""
    if NO_SKIP and report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped, but GPTEMBED_NO_SKIP=1 requires it to run: {reason}"


BROWSER_PAGE = re.compile(
    r"^tests/book/test_browser\.py::\w+\[chromium-(?P<page>.+?)(?:-(?:light|dark))?\]$"
)
"""A browser test of one page: its parameter id is the browser (pytest-playwright's), the page's
docname, perhaps a theme."""


def _queue_place(item: pytest.Item, tests_in: Counter[str]) -> tuple[int, int]:
    """Where a test's group waits in pytest-xdist's queue: the costly groups first (the chapters,
    later ones first: they train and score more; then the browser's, then the tooling's, which
    start processes), the package's many short files last, the longest of them (by their number
    of tests, ``tests_in``) first, so that the workers finish within a few seconds of each
    other."""
    path = item.nodeid.split("::")[0]
    folder, _, name = path.rpartition("/")
    if name.endswith(".ipynb"):
        number = name.split("_")[0]
        return 0, -int(number) if number.isdigit() else 0
    tier = {"tests/book": 1, "tests/tooling": 2}.get(folder, 3)
    return tier, -tests_in[path] if tier == 3 else 0


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Where pytest-xdist runs (`./dev test`: `--dist loadgroup`), keep each file's tests on one
    worker, so a notebook's cells run in order on one kernel, except the browser tests: those of
    one page (which share one visit) form a group of their own, so the pages spread over the
    workers. The groups are queued costly first (`_queue_place`; `./dev test` passes
    `--no-loadscope-reorder`, or pytest-xdist would queue them by their number of tests)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    tests_in: Counter[str] = Counter()
    for item in items:
        page = BROWSER_PAGE.match(item.nodeid)
        file = item.nodeid.split("::")[0]
        tests_in[file] += 1
        group = f"{file}::{page['page']}" if page else file
        item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: _queue_place(item, tests_in))  # stable: cells keep their order


KERNEL_START_LOCK = Path(tempfile.gettempdir()) / "gptembed-kernel-start.lock"
"""A file the pytest-xdist workers lock while one of them starts a chapter's kernel."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator:
    """Start a chapter's kernel (nbval does, in its first cell's setup) while no other worker
    starts one. jupyter_client picks a kernel's five ports by binding each and letting it go, and
    only within one process does it keep two kernels off the same port: two kernels started at
    once by two workers can pick the same one, and the second dies at its start ("Kernel died
    before replying to kernel_info", jupyter_client issue 487). That message ended chapter 10 once
    in about sixteen clean-clone runs, its three workers each starting a chapter in the same
    second (nbval discards a kernel's stderr, so the cause is inferred, not seen). The lock
    (released when its file closes, a crashed worker included) keeps the starts apart; ports
    taken by other programs in between are not covered."""
    starting = item.path.suffix == ".ipynb" and getattr(item.parent, "kernel", None) is None
    if not starting:
        yield
        return
    with KERNEL_START_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
