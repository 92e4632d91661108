"""The browser tests' fixtures: the local server, and pytest-playwright's launch and context
arguments.

pytest-playwright's `browser` (one per session, per xdist worker), `context` and `page` (one per
test) are made with the arguments set here: Debian's Chromium, or with `--browser-channel` a
channel of Playwright's own. A failed test that used its `page` leaves a screenshot in
`test-results/` (`./dev test` passes `--screenshot only-on-failure`) and, in CI, its trace
(`.ci/run` adds `--tracing retain-on-failure`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.book_site import BUILD, require_build, serving

CHROMIUM = Path(os.environ.get("GPTEMBED_CHROMIUM", "/usr/bin/chromium"))
"""Debian's Chromium; GPTEMBED_CHROMIUM points elsewhere (e.g. a missing path, to see the skip)."""
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """The base URL of `_build/html`, served from 127.0.0.1 on a free port for the session."""
    require_build()
    with serving(BUILD) as url:
        yield url


@pytest.fixture(scope="session")
def browser_type_launch_args(
    browser_type_launch_args: dict[str, Any], pytestconfig: pytest.Config
) -> dict[str, Any]:
    """Debian's Chromium (skips, or fails in CI, without it), unless `--browser-channel` asks
    for one of Playwright's own (`python -m playwright install chromium` downloads it)."""
    launch = {**browser_type_launch_args, "args": CHROMIUM_ARGS}
    if pytestconfig.getoption("--browser-channel"):
        return launch
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(
            f"no Chromium at {CHROMIUM}: install Debian's with `apt-get install chromium` "
            "(or pass --browser-channel chromium to use Playwright's own)"
        )
    return {**launch, "executable_path": str(CHROMIUM)}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    """A 1280 x 900 window in the light theme."""
    return {
        **browser_context_args,
        "viewport": {"width": 1280, "height": 900},
        "color_scheme": "light",
    }
