"""The built book in a real browser: Playwright drives Debian's Chromium over a local server.

Nothing is built here: the tests serve `_build/html` (run `./dev book` first) from
127.0.0.1 on a free port and visit every page `_toc.yml` lists. Screenshots of every page,
light and dark, land in `_build/screenshots/` for a person to look at.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import pytest
from book_site import BUILD, SCREENSHOTS, anchors_of, require_build, toc_docnames

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
        ConsoleMessage,
        Error,
        Page,
        Request,
        Response,
    )

pytestmark = pytest.mark.browser

PAGES = toc_docnames()
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
LOCAL_HOST = "127.0.0.1"
VIEWPORT = {"width": 1280, "height": 900}
SETTLE_JS = """async () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
        await MathJax.startup.promise;
    }
    await document.fonts.ready;
    await Promise.all([...document.images].map((img) => img.decode().catch(() => null)));
}"""
"""Wait until MathJax has typeset, fonts are loaded and every image is decoded."""


class _QuietHandler(SimpleHTTPRequestHandler):
    """Serves files, lets the browser cache them for the session, and logs nothing."""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    """A threaded server whose listen backlog takes a browser's burst of parallel connections.

    With the default backlog of 5, Chromium's burst of connections for one page overflows it,
    and each dropped connection is retried only after a second.
    """

    request_queue_size = 128
    daemon_threads = True


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """The base URL of `_build/html`, served from 127.0.0.1 on a free port for the session."""
    require_build()
    handler = functools.partial(_QuietHandler, directory=str(BUILD))
    server = _Server((LOCAL_HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOCAL_HOST}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the whole session (skips, or fails in CI, without one)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(
            f"no Chromium at {CHROMIUM}: install Debian's with `apt-get install chromium` "
            "(these tests never download a browser)"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason='Playwright missing: pip install -e ".[test]"'
    )
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def context(browser: Browser) -> Iterator[BrowserContext]:
    """One context for the visits: shared, so the browser caches the theme's assets."""
    shared = browser.new_context(viewport=VIEWPORT, color_scheme="light")
    # Every page opens as on a reader's first visit: no theme choice left by an earlier page.
    shared.add_init_script("try { localStorage.clear(); } catch (e) {}")
    yield shared
    shared.close()


@dataclass
class Visit:
    """What one visit showed, in the light theme and then the dark one."""

    url: str
    status: int | None = None
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    failed_responses: list[str] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    math: dict[str, int] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)
    sidebar: list[str] = field(default_factory=list)
    dark_background: list[int] = field(default_factory=list)
    dark_corners: list[dict[str, Any]] = field(default_factory=list)
    sidebar_click: str = ""
    recording: bool = True


def _watch(page: Page, visit: Visit) -> None:
    """Record console errors, uncaught exceptions, every request and every failed response."""

    def console(message: ConsoleMessage) -> None:
        if visit.recording and message.type == "error":
            visit.errors.append(f"console.error: {message.text}")

    def page_error(error: Error) -> None:
        if visit.recording:
            visit.errors.append(f"uncaught: {error}")

    def request(request: Request) -> None:
        if visit.recording:
            visit.requests.append(request.url)

    def response(response: Response) -> None:
        if visit.recording and response.status >= 400:
            visit.failed_responses.append(f"{response.status} {response.url}")

    page.on("console", console)
    page.on("pageerror", page_error)
    page.on("request", request)
    page.on("response", response)


def _screenshot_path(docname: str, theme: str) -> Path:
    """Where a page's screenshot goes: JPEG, which encodes a long page in about half PNG's time."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{docname.replace('/', '__')}-{theme}.jpg"


def _open(context: BrowserContext, url: str) -> tuple[Page, Visit]:
    """Open ``url`` in a new tab; wait for its math, fonts, images and every request to finish."""
    page = context.new_page()
    visit = Visit(url)
    _watch(page, visit)
    pending: set[Request] = set()
    page.on("request", lambda request: pending.add(request))
    page.on("requestfinished", lambda request: pending.discard(request))
    page.on("requestfailed", lambda request: pending.discard(request))
    response = page.goto(url, wait_until="load")
    visit.status = response.status if response else None
    page.evaluate(SETTLE_JS)
    for _ in range(50):
        if not pending:
            break
        page.wait_for_timeout(100)
    assert not pending, f"requests still open after 5 s: {[r.url for r in pending]}"
    return page, visit


IMAGES_JS = """imgs => imgs.map(img => ({src: img.currentSrc || img.src,
    alt: (img.getAttribute('alt') || '').trim(),
    width: img.naturalWidth, complete: img.complete}))"""
MATH_JS = """() => {
    const math = [...document.querySelectorAll('.math')];
    return {math: math.length,
            unrendered: math.filter(e => !e.querySelector('mjx-container')).length,
            rendered: document.querySelectorAll('mjx-container').length,
            errors: document.querySelectorAll('mjx-merror').length};
}"""
CORNER_ALPHA_JS = """imgs => imgs.map(img => {
    const w = img.naturalWidth, h = img.naturalHeight;
    const canvas = document.createElement('canvas');
    canvas.width = w; canvas.height = h;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const corners = [[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]];
    return {src: img.currentSrc || img.src,
            alpha: corners.map(([x, y]) => ctx.getImageData(x, y, 1, 1).data[3])};
})"""
"""The alpha of each corner pixel of every content image, as the browser decoded it."""
BACKGROUND_JS = "getComputedStyle(document.body).backgroundColor.match(/\\d+/g).slice(0, 3)"


def _switch_to_dark(page: Page) -> None:
    """Click the theme button, as a reader would, until the page shows its dark theme."""
    button = page.locator(".theme-switch-button:visible").first
    for _ in range(3):
        if page.evaluate("document.documentElement.dataset.theme") == "dark":
            return
        button.click()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"


def _next_page(docname: str) -> str:
    """The page after ``docname`` in the table of contents; after the last, the first."""
    return PAGES[(PAGES.index(docname) + 1) % len(PAGES)]


def _click_sidebar_entry(page: Page, target: str) -> str:
    """Click the sidebar's link to ``target``; say where the click led and with what status."""
    links = page.locator(".bd-sidebar-primary nav a[href]")
    hrefs = [_page_url(href) for href in links.evaluate_all("as => as.map(a => a.href)")]
    if target not in hrefs:
        return f"no sidebar entry for {target}"
    if target == _page_url(page.url):
        return f"200 {target}"  # a one-page book: the walk is already complete
    with page.expect_navigation(wait_until="commit") as navigation:
        links.nth(hrefs.index(target)).click()
    status = navigation.value.status if navigation.value else None
    return f"{status} {_page_url(page.url)}"


@pytest.fixture(scope="session")
def load(context: BrowserContext, site: str) -> Iterator[Callable[[str], Visit]]:
    """``load(docname)``: one visit per page and session, light then dark, both screenshotted."""
    visits: dict[str, Visit] = {}

    def _load(docname: str) -> Visit:
        if docname in visits:
            return visits[docname]
        page, visit = _open(context, f"{site}{docname}.html")
        try:
            visit.images = page.eval_on_selector_all("img", IMAGES_JS)
            visit.math = page.evaluate(MATH_JS)
            visit.links = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
            visit.sidebar = page.eval_on_selector_all(
                ".bd-sidebar-primary a[href]", "as => as.map(a => a.href)"
            )
            page.screenshot(path=_screenshot_path(docname, "light"), full_page=True, quality=85)
            _switch_to_dark(page)
            page.evaluate(SETTLE_JS)
            visit.dark_background = [int(c) for c in page.evaluate(BACKGROUND_JS)]
            visit.dark_corners = page.eval_on_selector_all(".bd-article img", CORNER_ALPHA_JS)
            page.screenshot(path=_screenshot_path(docname, "dark"), full_page=True, quality=85)
            visit.recording = False  # what follows belongs to the next page
            visit.sidebar_click = _click_sidebar_entry(page, f"{site}{_next_page(docname)}.html")
        finally:
            page.close()
        visits[docname] = visit
        return visit

    yield _load


def _file_for(url: str, site: str) -> Path:
    """The built file a same-site URL serves (a folder serves its index.html)."""
    path = unquote(urlsplit(url).path)
    target = BUILD / path.removeprefix(urlsplit(site).path).lstrip("/")
    return target / "index.html" if path.endswith("/") else target


def _page_url(url: str) -> str:
    """``url`` without its query and fragment."""
    parts = urlsplit(url)
    return parts._replace(query="", fragment="").geturl()


@pytest.mark.parametrize("docname", PAGES)
def test_page_answers_200(load: Callable[[str], Visit], docname: str) -> None:
    """The page and everything it loads are served without an HTTP error."""
    visit = load(docname)
    assert visit.status == 200
    assert not visit.failed_responses


@pytest.mark.parametrize("docname", PAGES)
def test_no_console_errors(load: Callable[[str], Visit], docname: str) -> None:
    """The page logs no console error and throws no uncaught exception."""
    assert load(docname).errors == []


@pytest.mark.parametrize("docname", PAGES)
def test_requests_stay_on_this_machine(load: Callable[[str], Visit], docname: str) -> None:
    """Every request the page makes on its own goes to the local server, none to another host."""
    visit = load(docname)
    assert visit.requests, "no request was recorded"
    foreign = [
        url
        for url in visit.requests
        if urlsplit(url).hostname != LOCAL_HOST and not url.startswith("data:")
    ]
    assert not foreign, f"requests to other hosts: {foreign}"


@pytest.mark.parametrize("docname", PAGES)
def test_images_decoded_with_alt_text(load: Callable[[str], Visit], docname: str) -> None:
    """Every `<img>` has decoded (natural width > 0) and says what it shows in its alt text."""
    images = load(docname).images
    broken = [img["src"] for img in images if not (img["complete"] and img["width"] > 0)]
    no_alt = [img["src"] for img in images if not img["alt"]]
    assert not broken, f"images that did not decode: {broken}"
    assert not no_alt, f"images without alt text: {no_alt}"


@pytest.mark.parametrize("docname", PAGES)
def test_math_is_rendered(load: Callable[[str], Visit], docname: str) -> None:
    """Each math element was typeset by the local MathJax, without a TeX error."""
    math = load(docname).math
    assert math["unrendered"] == 0, f"{math['unrendered']} of {math['math']} math elements raw"
    assert math["rendered"] >= math["math"]
    assert math["errors"] == 0, f"{math['errors']} MathJax errors"


@pytest.mark.parametrize("docname", PAGES)
def test_internal_links_resolve(load: Callable[[str], Visit], docname: str, site: str) -> None:
    """Each same-site link names a built file, and its `#fragment` an element on that page."""
    broken = []
    for url in load(docname).links:
        if not url.startswith(site):
            continue
        target = _file_for(url, site)
        fragment = unquote(urlsplit(url).fragment)
        if not target.is_file():
            broken.append(f"{url}: no file {target.relative_to(BUILD)}")
        elif fragment and target.suffix == ".html" and fragment not in anchors_of(target):
            broken.append(f"{url}: no #{fragment} on {target.relative_to(BUILD)}")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("docname", PAGES)
def test_sidebar_lists_every_page(load: Callable[[str], Visit], docname: str, site: str) -> None:
    """From this page, the sidebar links every page of the table of contents."""
    linked = {_page_url(url) for url in load(docname).sidebar} | {f"{site}{docname}.html"}
    missing = [name for name in PAGES if f"{site}{name}.html" not in linked]
    assert not missing, f"sidebar of {docname} does not reach {missing}"


@pytest.mark.parametrize("docname", PAGES)
def test_sidebar_click_opens_the_next_page(
    load: Callable[[str], Visit], docname: str, site: str
) -> None:
    """Clicking the next page's sidebar entry opens it: a walk through the sidebar reaches all."""
    target = f"{site}{_next_page(docname)}.html"
    assert load(docname).sidebar_click == f"200 {target}"


@pytest.mark.parametrize("docname", PAGES)
def test_dark_theme_keeps_figures_legible(load: Callable[[str], Visit], docname: str) -> None:
    """After the theme button, the page is dark and every figure keeps an opaque background."""
    visit = load(docname)
    assert sum(visit.dark_background) / 3 < 80, f"body background {visit.dark_background}"
    see_through = [img for img in visit.dark_corners if min(img["alpha"]) < 255]
    assert not see_through, f"figures with transparent corners: {see_through}"


def test_opens_from_disk(browser: Browser) -> None:
    """Opened as a file, without any server, the first page renders its math with no error."""
    require_build()
    context = browser.new_context(viewport=VIEWPORT)
    page, visit = _open(context, (BUILD / f"{PAGES[0]}.html").as_uri())
    try:
        assert page.locator(".bd-article h1").count() > 0
        assert page.evaluate("typeof MathJax.version") == "string", "MathJax did not load"
        assert page.locator(".math:not(:has(mjx-container))").count() == 0, "math left raw"
        assert visit.errors == []
        assert all(urlsplit(url).scheme in {"file", "data"} for url in visit.requests)
    finally:
        context.close()


def test_request_recording_sees_other_hosts(context: BrowserContext) -> None:
    """The request check can fail: an image from another host is recorded (and never sent)."""
    page = context.new_page()
    visit = Visit("about:blank")
    _watch(page, visit)
    page.route("http://gptembed.invalid/**", lambda route: route.abort())
    try:
        page.set_content('<img alt="x" src="http://gptembed.invalid/x.png">')
        assert "http://gptembed.invalid/x.png" in visit.requests
    finally:
        page.close()
