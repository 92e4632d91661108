"""What the browser tests share: a tab whose events are recorded, the theme switch, and axe.

pytest-playwright launches the browser and makes contexts and pages (tests/book/conftest.py
sets its launch and context arguments); these helpers are what it does not give: one visit's
record of errors and requests, waiting until a page has settled, a reader's switch to the dark
theme, and axe-core injected once per page.
"""

from __future__ import annotations

import functools
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


CONTRAST_SAMPLES_JS = """(within) => {
    const marked = '[data-axe-code], [data-axe-sample], [data-axe-same]';
    for (const old of document.querySelectorAll(marked)) {
        delete old.dataset.axeCode;
        delete old.dataset.axeSample;
        delete old.dataset.axeSame;
    }
    const roots = within ? [...document.querySelectorAll(within)] : [document.body];
    const every = (selector) => [...new Set(roots.flatMap(
        (root) => [root, ...root.querySelectorAll(selector)].filter((e) => e.matches(selector))))];
    // a text's length without the spaces and punctuation that axe removes before it judges a
    // text (one of them alone is no text to axe)
    const skipped = /[\\s!-\\/:-@[-`{-~£¢¥§€±\\u2000-\\u206F\\u2E00-\\u2E7F]/g;
    const own = (e) => [...e.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE)
        .map((n) => n.textContent).join('').replace(skipped, '').length;
    const look = (e, ...around) => {
        const s = getComputedStyle(e);
        return [s.color, s.fontSize, s.fontWeight, s.opacity, s.backgroundColor, s.textShadow,
            ...around.map((a) => getComputedStyle(a).backgroundColor)].join(' ');
    };
    const keepLongest = (best, key, e, length) => {
        if (!best.has(key) || length > best.get(key).length) best.set(key, {e, length});
    };
    const best = new Map();
    for (const pre of every('pre:has(span)')) {
        pre.dataset.axeCode = '';
        for (const e of [pre, ...pre.querySelectorAll('span')]) {
            const length = own(e);
            if (!length || !e.checkVisibility()) continue;
            keepLongest(best, look(e, e.parentElement, pre), e, length);
        }
    }
    for (const {e} of best.values()) e.dataset.axeSample = '';
    // Every other text a reader sees, but links and form fields (always judged): one per look,
    // the look taken over every ancestor up to the first that paints an opaque background, with
    // their opacities and background images.
    const prose = new Map();
    for (const e of every('*')) {
        if (e.closest('[data-axe-code], a[href], input, select, textarea')) continue;
        const length = own(e);
        if (!length || !e.checkVisibility({visibilityProperty: true})) continue;
        const box = e.getBoundingClientRect();
        if (box.width <= 1 || box.height <= 1) continue;  // not shown: axe skips it too
        e.dataset.axeSame = '';
        const around = [];
        for (let a = e.parentElement; a; a = a.parentElement) {
            around.push(a);
            if (getComputedStyle(a).opacity !== '1') continue;
            if (/^rgb\\(/.test(getComputedStyle(a).backgroundColor)) break;  // opaque
        }
        keepLongest(prose, look(e, ...around) + ' ' + around.map((a) => {
            const s = getComputedStyle(a);
            return s.opacity + ' ' + s.backgroundImage;
        }).join(' '), e, length);
    }
    for (const {e} of prose.values()) {
        delete e.dataset.axeSame;
        e.dataset.axeSample = '';
    }
}"""
"""Mark, in the part of the page a scan judges (``within``, a CSS selector, or the whole body),
each highlighted `pre` (`data-axe-code`), and in them, for each look a text can have (its colour,
size, weight, opacity and shadow, and the backgrounds of itself, its parent and the `pre`), the
visible element with the longest own text (`data-axe-sample`). Likewise for every other text a
reader sees, but links and form fields: for each look (the same, with the backgrounds, opacities
and background images of every ancestor up to the first opaque background) one sample, and the
others `data-axe-same`."""

AXE_JS = """async ([coloursOnly, within]) => {
    const keep = (r) => r.violations;
    // A highlighted token is a span with a class and nothing else: no role, name or id that a
    // rule reads. While axe runs, such spans (but those `stays` keeps) become their text, and
    // the code is put back as it was after.
    const flatten = (stays) => {
        const saved = [...document.querySelectorAll('[data-axe-code]')]
            .map((pre) => [pre, pre.innerHTML]);
        for (const span of document.querySelectorAll('[data-axe-code] span')) {
            if (!span.isConnected || stays(span)
                || [...span.attributes].some((a) => a.name !== 'class')) continue;
            span.replaceWith(span.textContent);
        }
        return () => { for (const [pre, html] of saved) pre.innerHTML = html; };
    };
    const colours = {'color-contrast': {enabled: false}, 'link-in-text-block': {enabled: false}};
    let restore = flatten(() => false);
    let everyOtherRule;
    try {
        everyOtherRule = coloursOnly
            ? {violations: []}
            : await axe.run(within ? {include: [[within]]} : document,
                {resultTypes: ['violations'], rules: colours});
    } finally {
        restore();
    }
    const sampled = (e) => e.matches('[data-axe-sample]') || !!e.querySelector('[data-axe-sample]');
    restore = flatten(sampled);
    const lean = document.createElement('style');
    lean.textContent = `[data-axe-code] span:not([data-axe-sample]):not(:has([data-axe-sample]))
        { visibility: hidden; }
        [data-axe-sample] { visibility: visible; }`;
    document.head.append(lean);
    try {
        const inside = (selector) => (within ? `${within} ${selector}` : selector);
        const byColour = await axe.run(
            {include: [[inside('[data-axe-sample]')], [inside('a[href]')],
                       [inside('input, select, textarea')]],
             exclude: [['[data-axe-code]'], ['[data-axe-same]']]},
            {resultTypes: ['violations'], runOnly: ['color-contrast', 'link-in-text-block']});
        return [...keep(everyOtherRule), ...keep(byColour)];
    } finally {
        lean.remove();
        restore();
    }
}"""
"""axe's violations: every rule but the two that judge colours over the whole page; those two
(colour contrast, and links told apart from the text around them) in one run over the samples of
each look (CONTRAST_SAMPLES_JS), every link and every form field. axe works out
the page's layout once a run, and that was most of what link-in-text-block cost in the first run:
together with colour contrast it costs about 0.5 s less on a long chapter, in each theme. With
``coloursOnly`` only the second run: what a theme changes is colours, and every other rule reads
the same page in both (the book has no element shown in one theme only; a test checks that).
With ``within`` (a CSS selector) both runs judge that element and what it holds, the rest of the
page being judged by a scan of its own.

While axe runs, the highlighted code's tokens (spans that hold only a class: no rule reads
them) are their bare text, but for the colour rules' samples and their ancestors: axe's cost
grows with the elements on the page, and a chapter's code is most of them. On chapter 9 that took
the first run from 0.6 to 0.23 s and the colour run from 1.25 to 0.75 s. A sample keeps its
span, its classes and its ancestors, so its colour and what lies behind it are as before; any
other token left (one with more than a class) is hidden (`visibility`, which moves nothing), and
axe leaves it out of the map of the page it builds to find what lies behind each text. The code
is put back as it was after each scan."""


def axe_violations(
    page: Page, visit: Visit | None = None, *, colours_only: bool = False, within: str = ""
) -> list[dict[str, Any]]:
    """axe-core's violations on the page (its bundled copy of axe: nothing is fetched); with
    ``colours_only`` only those of the rules that judge colours (for a second theme's scan);
    with ``within`` (a CSS selector) only in that element (a part of the page that changed
    since the page's own scan).

    Colour contrast, the costly rule, is measured on one element per look: axe's verdict depends
    only on the text's colour, size, weight, opacity and shadow and on what lies behind it, so two
    texts that share those share the verdict. A chapter's code has about 5,000 tokens in fewer
    than 10 looks; measuring each token took 70% of axe's time. The same holds for the prose: on
    chapter 9 about 460 texts in about 40 looks, and scanning only the samples, links and form
    fields (rather than the whole page, the rest excluded) takes the colour scans of a run from
    20 s of the browser's CPU to 16.7 s (two runs, interleaved). What lies behind a text is taken
    to be its ancestors, up to the first with an opaque background: an element drawn behind or
    over a text that is not its ancestor (none is, in the book's article) would be judged only
    where it lies behind its look's sample.

    axe is put into the page once, for both themes' scans. What axe itself requests is not the
    page's: while it preloads the stylesheets it resolves theme.css's `@import "../basic.css"`
    against the site root and asks for /basic.css (a 404). So the visit stops recording while
    axe runs.
    """
    if visit is not None:
        visit.recording = False
    try:
        if not page.evaluate("typeof window.axe === 'object'"):
            page.evaluate(_axe_source())
        page.evaluate(CONTRAST_SAMPLES_JS, within)
        violations = page.evaluate(AXE_JS, [colours_only, within])
    finally:
        if visit is not None:
            visit.recording = True
    return [
        {
            "id": violation["id"],
            "impact": violation["impact"],
            "help": violation["help"],
            "nodes": [node["target"] for node in violation["nodes"]],
            # each node as axe saw it: a selector may name another element once the code is back
            "html": [node["html"] for node in violation["nodes"]],
        }
        for violation in violations
    ]


@functools.cache
def _axe_source() -> str:
    """axe.min.js as axe-playwright-python bundles it, read once for the session."""
    from axe_playwright_python.base import AXE_SCRIPT

    return AXE_SCRIPT
