"""The browser tests' session fixtures, shared by every file that drives Chromium.

test_browser.py and test_explorer_in_browser.py use one local server and one Chromium per
session (per xdist worker). A fixture defined in a test module and imported into another is a second
fixture, with a second instance: a second sync Playwright, which cannot start in a process
that runs one already. Here, in the tests' conftest, each fixture has one instance.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from test_browser import _launch

from tests.book_site import BUILD, require_build, serving

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """The base URL of `_build/html`, served from 127.0.0.1 on a free port for the session."""
    require_build()
    with serving(BUILD) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the whole session."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright missing: ./dev setup installs it (the dev group)"
    )
    with sync_api.sync_playwright() as playwright:
        chromium = _launch(playwright)
        yield chromium
        chromium.close()
