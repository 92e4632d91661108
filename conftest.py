"""Shared test setup: one hypothesis profile, and where skips are not allowed, a skip fails."""

from __future__ import annotations

import os
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
