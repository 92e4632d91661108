"""Shared test setup: one hypothesis profile, and where skips are not allowed, a skip fails."""

from __future__ import annotations

import os
import re
from collections.abc import Generator

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


BROWSER_PAGE = re.compile(r"^tests/test_browser\.py::\w+\[(?P<page>.+?)(?:-(?:light|dark))?\]$")
"""A browser test of one page: its parameter id is the page's docname, perhaps with a theme."""


def _cost_rank(item: pytest.Item) -> int:
    """0 for the slowest kinds of test that need no built book, up to 3 for quick unit tests."""
    if item.get_closest_marker("toolchain"):
        return 0
    if item.path.suffix == ".ipynb":
        return 1
    if item.get_closest_marker("browser"):
        return 2
    return 3


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the slow kinds of test first: the toolchain's (./dev, ruff), then the chapters, then
    page visits in the browser, then the unit tests (the sort keeps each file's order).

    Two workers hand out whole files (and browser pages) in this order, so the many quick unit
    tests come last and fill the gaps; a slow file handed out last would leave one core idle
    until it ends. The browser's turn comes after the first two kinds, by which time `./dev
    test`'s build, which runs meanwhile, has finished.
    """
    items.sort(key=_cost_rank)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """With `--dist loadfile` (./dev test), each file's tests stay on one worker, as usual (a
    notebook's cells run in order on one kernel), except the browser tests: those of one page
    form a group of their own (they share one visit), so the pages spread over both workers.
    The groups are handed out in collection order (the hook above), not xdist's default of the
    largest group first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False

    class FilesAndPages(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            page = BROWSER_PAGE.match(nodeid)
            return f"{scope}::{page['page']}" if page else scope

    return FilesAndPages(config, log)
