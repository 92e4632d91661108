"""What the browser tests share: a tab whose events are recorded, the theme switch, and axe.

pytest-playwright launches the browser and makes contexts and pages (tests/book/conftest.py
sets its launch and context arguments); these helpers are what it does not give: one visit's
record of errors and requests, waiting until a page has settled, a reader's switch to the dark
theme, and axe-core's violations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, ConsoleMessage, Error, Page, Request, Response

SETTLE_JS = """async () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
        await MathJax.startup.promise;
    }
    await document.fonts.ready;
    await Promise.all([...document.images].map((img) => img.decode().catch(() => null)));
    const finite = document.getAnimations()
        .filter((a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity);
    let timer;
    await Promise.race([
        Promise.all(finite.map((a) => a.finished.catch(() => null))),
        new Promise((resolve) => { timer = setTimeout(resolve, 3000); }),
    ]);
    clearTimeout(timer);
}"""
"""Wait until MathJax has typeset, fonts are loaded, every image is decoded and every finite CSS
transition or animation has ended (axe measuring contrast mid-fade sees colours that no reader is
left with), or 3 s have gone by: an animation whose end never comes must not hang the run
(FADING_JS then names it)."""


@dataclass
class Visit:
    """What one visit to a page showed, step by step, in the light theme and then the dark one.

    Each step's result or failure is kept apart, and each has its own test: a failed screenshot
    fails the screenshot test alone, not every check of the page.
    """

    url: str
    status: int | None = None
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    failed_responses: list[str] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    recording: bool = True

    def step(self, name: str, action: Callable[[], Any], after: str | None = None) -> None:
        """Run ``action`` and keep its result under ``name``, or keep why it failed.

        ``after`` names a step this one needs (the dark checks need the switch to dark).
        """
        if after is not None and after not in self.results:
            self.failures[name] = f"not run, as {after!r} failed: {self.failures.get(after)}"
            return
        try:
            self.results[name] = action()
        except Exception as error:  # reported by the step's own test, not by the visit
            self.failures[name] = f"{type(error).__name__}: {error}"

    def result(self, name: str) -> Any:
        """The result of step ``name``; fails the calling test (only) if that step failed."""
        if name in self.failures:
            pytest.fail(f"{name}: {self.failures[name]}", pytrace=False)
        return self.results[name]


def watch(page: Page, current: Callable[[], Visit | None]) -> None:
    """Record console errors, uncaught exceptions, every request and every failed response, into
    the visit that ``current()`` names when each happens (none: not recorded)."""

    def recording() -> Visit | None:
        visit = current()
        return visit if visit is not None and visit.recording else None

    def console(message: ConsoleMessage) -> None:
        if (visit := recording()) and message.type == "error":
            visit.errors.append(f"console.error: {message.text}")

    def page_error(error: Error) -> None:
        if visit := recording():
            visit.errors.append(f"uncaught: {error}")

    def request(request: Request) -> None:
        if visit := recording():
            visit.requests.append(request.url)

    def response(response: Response) -> None:
        if (visit := recording()) and response.status >= 400:
            visit.failed_responses.append(f"{response.status} {response.url}")

    page.on("console", console)
    page.on("pageerror", page_error)
    page.on("request", request)
    page.on("response", response)


@dataclass
class Tab:
    """A browser tab, the visit its events are recorded into, and its requests still open."""

    page: Page
    visit: Visit | None = None
    pending: set[Request] = field(default_factory=set)

    @classmethod
    def new(cls, context: BrowserContext) -> Tab:
        tab = cls(context.new_page())
        watch(tab.page, lambda: tab.visit)
        tab.page.on("request", lambda request: tab.pending.add(request))
        tab.page.on("requestfinished", lambda request: tab.pending.discard(request))
        tab.page.on("requestfailed", lambda request: tab.pending.discard(request))
        return tab

    def goto(self, url: str) -> None:
        """Open ``url`` as a typed address; its status goes to the current visit."""
        response = self.page.goto(url, wait_until="load")
        if self.visit is not None:
            self.visit.status = response.status if response else None

    def settle(self) -> None:
        """Wait for the page's math, fonts, images, transitions and every request to finish."""
        self.page.evaluate(SETTLE_JS)
        for _ in range(50):
            if not self.pending:
                break
            self.page.wait_for_timeout(100)
        assert not self.pending, f"requests still open after 5 s: {[r.url for r in self.pending]}"


def open_page(context: BrowserContext, url: str) -> tuple[Page, Visit]:
    """Open ``url`` in a new tab of ``context``, recording its visit, and let it settle."""
    tab = Tab.new(context)
    tab.visit = Visit(url)
    tab.goto(url)
    tab.settle()
    return tab.page, tab.visit


FADING_JS = """() => document.getAnimations()
    .filter((a) => a.playState === 'running'
        && a.effect.getComputedTiming().endTime !== Infinity)
    .map((a) => (a.transitionProperty || a.animationName) + ' on '
        + (a.effect.target ? a.effect.target.className : '?'))"""
"""The finite transitions and animations still running (none, once the page has settled)."""


NO_TRANSITIONS_CSS = "*, *::before, *::after { transition: none !important; }"
"""The theme's colours change with CSS transitions, a fade on every element that has one, each
frame restyling them. The dark checks read the colours the switch ends at, so the visits turn the
page's transitions off before they switch: the switch took 4.4 s of CPU and 6.4 s of waiting over
the eleven pages with them, 2.1 s and 1.8 s without, and no check waits for a fade."""


def switch_to_dark(page: Page) -> str:
    """Click the theme button, as a reader would, until the page shows its dark theme, with the
    page's transitions off (:data:`NO_TRANSITIONS_CSS`): the colours change at once."""
    button = page.locator(".theme-switch-button:visible").first
    page.add_style_tag(content=NO_TRANSITIONS_CSS)
    for _ in range(3):
        if page.evaluate("document.documentElement.dataset.theme") == "dark":
            break
        button.click()
    theme = page.evaluate("document.documentElement.dataset.theme")
    assert theme == "dark", f"the theme button left the page {theme!r}"
    # The pointer and the focus leave the button, as a reader's would: its tooltip, shown only
    # while the button is hovered or focused, is no part of the page that the dark checks see.
    page.mouse.move(0, 0)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.locator(".tooltip").first.wait_for(state="detached", timeout=5_000)
    page.evaluate(SETTLE_JS)
    # Transitions are off, CSS animations are not: look until none runs, for 2 s at most (one
    # that never ends is named, not waited for).
    for _ in range(40):
        fading = page.evaluate(FADING_JS)
        if not fading:
            break
        page.wait_for_timeout(50)
    assert not fading, f"colours still changing after the switch: {fading}"
    return theme


def axe_violations(page: Page, *, within: str = "") -> list[dict[str, Any]]:
    """axe-core's violations on the page, every rule on every element (axe-playwright-python's
    bundled copy: nothing is fetched); with ``within`` (a CSS selector) only in that element and
    what it holds.

    axe runs with its defaults but one: ``preload`` off. By default axe fetches every stylesheet
    again, by XHR, to build a CSSOM for the one rule that reads it (css-orientation-lock, which
    then does not run). Those fetches are axe's, not the page's, and fail where the page is
    fine: from ``file://`` the browser refuses them (CORS), and over HTTP theme.css's
    ``@import "../basic.css"`` resolves against the site root (a 404). Their console errors
    reach the page's recorded visit at their own pace, sometimes after axe has returned: a
    clean-clone run failed on them once. With nothing fetched there is nothing to tell apart.
    """
    from axe_playwright_python.sync_playwright import Axe

    options = {"resultTypes": ["violations"], "preload": False}
    results = Axe().run(page, context=[[within]] if within else None, options=options)
    return [
        {
            "id": violation["id"],
            "impact": violation["impact"],
            "help": violation["help"],
            "nodes": [node["target"] for node in violation["nodes"]],
            "html": [node["html"] for node in violation["nodes"]],
        }
        for violation in results.response["violations"]
    ]
