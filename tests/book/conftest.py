"""The browser tests' fixtures: the local server, and pytest-playwright's launch and context
arguments.

pytest-playwright's `browser` (one per session, per xdist worker), `context` and `page` (one per
test) are made with the arguments set here: Debian's Chromium headless shell, or with
`--browser-channel` a channel of Playwright's own. A failed test that used its `page` leaves a
screenshot in `test-results/` (`./dev test` passes `--screenshot only-on-failure`); add
`--tracing retain-on-failure` for its Playwright trace.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.book_site import BUILD, require_build, serving

CHROMIUM = Path(os.environ.get("GPTEMBED_CHROMIUM", "/usr/bin/chromium-headless-shell"))
"""Debian's Chromium headless shell: Chromium's engine without the desktop browser around it, as
Playwright runs headless tests by default; the browser tests took 58 to 63 s of CPU with it and 73
s with Debian's full `chromium` (the same version, 156). GPTEMBED_CHROMIUM points elsewhere (a
full browser, or a missing path to see the skip)."""
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
    """Debian's Chromium headless shell (skips, or fails in CI, without it), unless
    `--browser-channel` asks for one of Playwright's own (`python -m playwright install chromium`
    downloads it)."""
    launch = {**browser_type_launch_args, "args": CHROMIUM_ARGS}
    if pytestconfig.getoption("--browser-channel"):
        return launch
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(
            f"no Chromium at {CHROMIUM}: install Debian's with "
            "`apt-get install chromium-headless-shell` "
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
