"""Shared test setup: one hypothesis profile, a skip that fails where skips are not allowed, and
one chapter's kernel starting at a time."""

from __future__ import annotations

import fcntl
import os
import tempfile
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
