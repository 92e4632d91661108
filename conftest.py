"""Shared test setup: where skips are not allowed, a skip is a failure."""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

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
