"""The built book in a real browser: Playwright drives Chromium over a local server.

Nothing is built here: the tests serve `_build/html` (run `./dev book` first) from
127.0.0.1 on a free port and visit every page `_toc.yml` lists, once each: every check of a
page reads what that visit recorded, and fails alone. axe-core checks every page in both
themes; screenshots of both (each theme's first
screen; the dark theme's whole page with `BOOK_SCREENSHOTS=full`) land in `_build/screenshots/`
for a person to look at.

pytest-playwright launches the browser (Debian's Chromium: tests/book/conftest.py) and gives
the single-page tests their `page`; the visits share one tab of their own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import pytest

from tests.book_site import (
    BUILD,
    LOCAL_HOST,
    SCREENSHOTS,
    anchors_of,
    require_build,
    source_of,
    title_of,
    toc_docnames,
)
from tests.browsing import Tab, Visit, axe_violations, open_page, switch_to_dark, watch

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

pytestmark = pytest.mark.browser

PAGES = toc_docnames()


@pytest.fixture(scope="session")
def visits_context(
    browser: Browser, browser_context_args: dict[str, Any]
) -> Iterator[BrowserContext]:
    """One context for the visits: shared, so the browser caches the theme's assets."""
    shared = browser.new_context(**browser_context_args)
    # Every page opens as on a reader's first visit: no theme choice left by an earlier page.
    shared.add_init_script("try { localStorage.clear(); } catch (e) {}")
    yield shared
    shared.close()


def _screenshot_path(docname: str, theme: str) -> Path:
    """Where a page's screenshot goes: JPEG, which encodes a long page in about half PNG's time."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{docname.replace('/', '__')}-{theme}.jpg"


IMAGES_JS = """imgs => imgs.map(img => ({src: img.currentSrc || img.src,
    alt: (img.getAttribute('alt') || '').trim(),
    width: img.naturalWidth, height: img.naturalHeight, complete: img.complete,
    shown: img.getBoundingClientRect().width, shownHeight: img.getBoundingClientRect().height,
    output: !!img.closest('.cell_output')}))"""
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


def _starting_page(docname: str) -> str:
    """Where a session's visits start, to click their way to ``docname``: the intro (the first
    in the table of contents, and one of the shortest pages), or for the intro itself the next
    page."""
    return PAGES[1] if docname == PAGES[0] else PAGES[0]


def _click_sidebar_entry(tab: Tab, target: str) -> str:
    """Click the sidebar's link to ``target`` and wait for the page it opens to load; say where
    the click led and with what status (which also becomes the current visit's status)."""
    page = tab.page
    links = page.locator(".bd-sidebar-primary nav a[href]")
    hrefs = [_page_url(href) for href in links.evaluate_all("as => as.map(a => a.href)")]
    if target not in hrefs:
        return f"no sidebar entry for {target}"
    with page.expect_navigation(wait_until="load") as navigation:
        links.nth(hrefs.index(target)).click()
    status = navigation.value.status if navigation.value else None
    if tab.visit is not None:
        tab.visit.status = status
    return f"{status} {_page_url(page.url)}"


CODE_WIDTH_JS = """() => {
    const pres = [...document.querySelectorAll('.bd-article .cell_input pre')];
    return {cells: pres.length,
            scrolling: pres.filter(pre => pre.scrollWidth > pre.clientWidth)
                .map(pre => ({scrollWidth: pre.scrollWidth, clientWidth: pre.clientWidth,
                              longest: pre.textContent.split('\\n')
                                  .reduce((a, b) => (b.length > a.length ? b : a), '')}))};
}"""
"""How many code cells the page shows, and each one whose `pre` scrolls sideways."""
MATH_WIDTH_JS = """() => [...document.querySelectorAll('.bd-article mjx-container[display="true"]')]
    .filter(m => m.scrollWidth > m.clientWidth + 1)
    .map(m => ({scrollWidth: m.scrollWidth, clientWidth: m.clientWidth,
                tex: (m.querySelector('mjx-assistive-mml') || m).textContent.slice(0, 80)}))"""
"""Each displayed equation wider than the text column (the theme lets it scroll sideways)."""
PHONE = {"width": 390, "height": 844}
"""A phone's viewport, in CSS pixels (an iPhone 12 to 14's)."""
SIDEWAYS_JS = """() => {
    const page = document.documentElement;
    const inScroller = (e) => {
        for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
            if (getComputedStyle(a).overflowX !== 'visible') return true;
        }
        return false;
    };
    return {scrollWidth: page.scrollWidth, clientWidth: page.clientWidth,
            wider: [...document.querySelectorAll('.bd-article *')]
                .filter((e) => e.getBoundingClientRect().right > page.clientWidth + 1
                    && !inScroller(e))
                .slice(0, 3)
                .map((e) => `${e.tagName.toLowerCase()}.${e.className}: `
                    + (e.textContent || '').trim().slice(0, 60))};
}"""
"""How wide the page is against the window, and the first elements of the article that stick
out past the window's edge outside any element that scrolls on its own (a code cell does)."""


def _at_a_phones_width(page: Page) -> dict[str, Any]:
    """SIDEWAYS_JS with the window at a phone's width, then back to the visit's size."""
    size = page.viewport_size
    page.set_viewport_size(PHONE)
    try:
        return page.evaluate(SIDEWAYS_JS)
    finally:
        if size is not None:
            page.set_viewport_size(size)


def _screenshot(page: Page, docname: str, theme: str) -> Path:
    """The first screen of each theme, as a reader opening the page sees it; with
    ``BOOK_SCREENSHOTS=full`` the dark theme's whole page, to look over every figure on a dark
    background (a long chapter's whole page costs about 2 s, so the suite takes it only when
    asked; the dark-corners check covers every figure either way)."""
    path = _screenshot_path(docname, theme)
    full = theme == "dark" and os.environ.get("BOOK_SCREENSHOTS") == "full"
    page.screenshot(path=path, full_page=full, quality=85)
    return path


def _visit(page: Page, visit: Visit, docname: str) -> None:
    """Every step of one page's visit: light checks, the switch to dark, dark checks."""
    visit.step("images", lambda: page.eval_on_selector_all("img", IMAGES_JS))
    visit.step("math", lambda: page.evaluate(MATH_JS))
    visit.step("links", lambda: page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)"))
    visit.step(
        "sidebar",
        lambda: page.eval_on_selector_all(
            ".bd-sidebar-primary a[href]", "as => as.map(a => a.href)"
        ),
    )
    visit.step("code width", lambda: page.evaluate(CODE_WIDTH_JS))
    visit.step("math width", lambda: page.evaluate(MATH_WIDTH_JS))
    visit.step("axe light", lambda: axe_violations(page))
    visit.step("screenshot light", lambda: _screenshot(page, docname, "light"))
    visit.step("dark theme", lambda: switch_to_dark(page))
    dark = "dark theme"
    visit.step(
        "dark background",
        lambda: [int(c) for c in page.evaluate(BACKGROUND_JS)],
        after=dark,
    )
    visit.step(
        "dark corners", lambda: page.eval_on_selector_all(".bd-article img", CORNER_ALPHA_JS), dark
    )
    visit.step("axe dark", lambda: axe_violations(page), after=dark)
    visit.step("screenshot dark", lambda: _screenshot(page, docname, "dark"), after=dark)
    visit.step("phone width", lambda: _at_a_phones_width(page))


@pytest.fixture(scope="session")
def load(visits_context: BrowserContext, site: str) -> Iterator[Callable[[str], Visit]]:
    """``load(docname)``: one visit per page and session, shared by that page's tests.

    The visits of a session (of an xdist worker) share one tab and go as a reader walks the book:
    each page is opened by a click on its entry in the sidebar of the page visited before it; the
    first by a click in the sidebar of the intro or chapter 1 (`_starting_page`). One tab (one
    renderer) for all the pages took 17 to 27% less CPU here than a new tab for each.
    """
    visits: dict[str, Visit] = {}
    tab = Tab.new(visits_context)  # at about:blank

    def _load(docname: str) -> Visit:
        if docname in visits:
            return visits[docname]
        url = f"{site}{docname}.html"
        if not tab.page.url.startswith(site):  # this session's first page
            tab.visit = None  # the page before it is only where the click starts
            tab.page.goto(f"{site}{_starting_page(docname)}.html", wait_until="load")
            tab.settle()  # so nothing it still loads is taken for this page's
        visit = tab.visit = Visit(url)
        visit.step("sidebar click", lambda: _click_sidebar_entry(tab, url))
        if _page_url(tab.page.url) != url:  # the click failed (its test says why): type it
            tab.goto(url)
        tab.settle()
        _visit(tab.page, visit, docname)
        visit.recording = False  # what follows belongs to the next page
        visits[docname] = visit
        return visit

    yield _load
    tab.page.close()


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
    """The page logs no console error and throws no uncaught exception, light or dark."""
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


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp")


def alt_says_nothing(alt: str, src: str) -> bool:
    """True for an alt text that does not say what the image shows: empty, or a file name.

    myst-nb falls back to the image's path when a figure cell's metadata has no
    `mystnb: image: alt` (for example `image:` put beside `mystnb:` instead of inside it).
    """
    text = alt.strip().lower()
    file_name = unquote(urlsplit(src).path).rsplit("/", 1)[-1].lower()
    stem = file_name.rsplit(".", 1)[0]
    return not text or text.endswith(IMAGE_SUFFIXES) or text in {file_name, stem, src.lower()}


@pytest.mark.parametrize(
    ("alt", "says_nothing"),
    [
        ("", True),
        ("../_images/2200ab.png", True),
        ("plot.PNG", True),
        ("2200ab", True),  # the file's stem
        ("Two loss curves that start together.", False),
        ("Binder logo", False),
    ],
)
def test_alt_text_that_is_a_file_name_says_nothing(alt: str, says_nothing: bool) -> None:
    assert alt_says_nothing(alt, "http://127.0.0.1:80/_images/2200ab.png") is says_nothing


@pytest.mark.parametrize("docname", PAGES)
def test_images_decoded_with_alt_text(load: Callable[[str], Visit], docname: str) -> None:
    """Every `<img>` has decoded (natural width > 0) and says what it shows in its alt text:
    not nothing, and not its file name (what myst-nb writes when a figure's cell has no alt)."""
    images = load(docname).result("images")
    broken = [img["src"] for img in images if not (img["complete"] and img["width"] > 0)]
    no_alt = [img["src"] for img in images if alt_says_nothing(img["alt"], img["src"])]
    assert not broken, f"images that did not decode: {broken}"
    assert not no_alt, f"images whose alt text is empty or a file name: {no_alt}"


@pytest.mark.parametrize("docname", PAGES)
def test_figures_are_drawn_at_twice_the_size_they_are_shown(
    load: Callable[[str], Visit], docname: str
) -> None:
    """Every image a chapter's code drew is a PNG of at least twice the pixels the page shows
    it at (sharp on a high-density screen), shown in its own proportions."""
    drawn = [img for img in load(docname).result("images") if img["output"]]
    soft = [
        f"{img['src'].rsplit('/', 1)[-1]}: {img['width']} px shown at {img['shown']:.0f}"
        for img in drawn
        if img["width"] < 2 * img["shown"] - 1
    ]
    squashed = [
        img["src"].rsplit("/", 1)[-1]
        for img in drawn
        if abs(img["shownHeight"] / img["shown"] - img["height"] / img["width"]) > 0.01
    ]
    assert not soft, f"figures drawn at less than twice their size on the page: {soft}"
    assert not squashed, f"figures shown out of proportion: {squashed}"


@pytest.mark.parametrize("docname", PAGES)
def test_math_is_rendered(load: Callable[[str], Visit], docname: str) -> None:
    """Each math element was typeset by the local MathJax, without a TeX error."""
    math = load(docname).result("math")
    assert math["unrendered"] == 0, f"{math['unrendered']} of {math['math']} math elements raw"
    assert math["rendered"] >= math["math"]
    assert math["errors"] == 0, f"{math['errors']} MathJax errors"


@pytest.mark.parametrize("docname", PAGES)
def test_internal_links_resolve(load: Callable[[str], Visit], docname: str, site: str) -> None:
    """Each same-site link names a built file, and its `#fragment` an element on that page."""
    broken = []
    for url in load(docname).result("links"):
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
    sidebar = load(docname).result("sidebar")
    linked = {_page_url(url) for url in sidebar} | {f"{site}{docname}.html"}
    missing = [name for name in PAGES if f"{site}{name}.html" not in linked]
    assert not missing, f"sidebar of {docname} does not reach {missing}"


@pytest.mark.parametrize("docname", PAGES)
def test_sidebar_click_opens_the_page(
    load: Callable[[str], Visit], docname: str, site: str
) -> None:
    """A click on the page's entry in another page's sidebar opens it (each visit starts so)."""
    assert load(docname).result("sidebar click") == f"200 {site}{docname}.html"


@pytest.mark.parametrize("docname", PAGES)
def test_dark_theme_is_dark(load: Callable[[str], Visit], docname: str) -> None:
    """After the theme button, the page's background is dark."""
    background = load(docname).result("dark background")
    assert sum(background) / 3 < 80, f"body background {background}"


@pytest.mark.parametrize("docname", PAGES)
def test_dark_theme_keeps_figures_legible(load: Callable[[str], Visit], docname: str) -> None:
    """In the dark theme every figure keeps an opaque background (no transparent corner)."""
    corners = load(docname).result("dark corners")
    see_through = [img for img in corners if min(img["alpha"]) < 255]
    assert not see_through, f"figures with transparent corners: {see_through}"


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("docname", PAGES)
def test_screenshot(load: Callable[[str], Visit], docname: str, theme: str) -> None:
    """A screenshot was saved in `_build/screenshots/` for a person to look at."""
    path = load(docname).result(f"screenshot {theme}")
    assert path.stat().st_size > 10_000, f"{path} is nearly empty"


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("docname", PAGES)
def test_axe_finds_no_violation(load: Callable[[str], Visit], docname: str, theme: str) -> None:
    """axe-core finds no accessibility violation of any impact on the page, in either theme."""
    violations = load(docname).result(f"axe {theme}")
    report = "\n".join(
        f"{v['impact']} {v['id']} ({v['help']}): {len(v['nodes'])} nodes, e.g. {v['nodes'][:3]}"
        for v in violations
    )
    assert not violations, f"axe ({theme}) on {docname}:\n{report}"


@pytest.mark.parametrize("docname", PAGES)
def test_code_cells_fit_the_column(load: Callable[[str], Visit], docname: str) -> None:
    """At a 1280-pixel window no code cell scrolls sideways (book/ruff.toml keeps lines to 80)."""
    width = load(docname).result("code width")
    if source_of(docname).suffix == ".ipynb":
        assert width["cells"] > 0, "no code cell found: has the theme's markup changed?"
    assert not width["scrolling"], f"code cells that scroll sideways: {width['scrolling']}"


@pytest.mark.parametrize("docname", PAGES)
def test_no_sideways_scroll_at_a_phones_width(load: Callable[[str], Visit], docname: str) -> None:
    """At 390 px (a phone) the page is no wider than the window: only code cells and tables
    scroll sideways, inside themselves."""
    width = load(docname).result("phone width")
    assert width["scrollWidth"] <= width["clientWidth"], (
        f"{width['scrollWidth']} px wide in a {width['clientWidth']} px window: {width['wider']}"
    )


@pytest.mark.parametrize("docname", PAGES)
def test_display_math_fits_the_column(load: Callable[[str], Visit], docname: str) -> None:
    """At a 1280-pixel window no displayed equation is wider than the text column."""
    wide = load(docname).result("math width")
    assert not wide, f"equations that scroll sideways: {wide}"


def test_search_finds_a_chapter(page: Page, site: str) -> None:
    """Typed into the book's search box, the last chapter's title lists it first, offline.

    (test_built_book checks that the search index holds every page's title; this is the reader's
    way to it: the search button, the dialog, Enter, and the results page built from that index.)
    """
    docname = PAGES[-1]
    page.goto(f"{site}{PAGES[0]}.html", wait_until="load")
    page.locator("button.search-button__button:visible").first.click()
    box = page.locator("input[name='q']:visible").first
    box.fill(title_of(docname))
    with page.expect_navigation(wait_until="load"):
        box.press("Enter")
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=10_000)
    hrefs = [_page_url(href) for href in results.evaluate_all("as => as.map(a => a.href)")]
    assert hrefs[0] == f"{site}{docname}.html", f"search for {docname} listed {hrefs[:5]}"


def test_axe_can_fail(page: Page) -> None:
    """The axe check can fail: an unlabelled image, faint text, a faint form field and a link
    told from its text by nothing but a slightly different colour are violations; a scan within
    one element finds that element's violations only."""
    page.set_content(
        '<html><body><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'
        '<p style="color:#ddd;background:#fff">faint</p>'
        '<p style="color:#222;background:#fff">Some text and <a href="#x" style="color:#333;'
        'text-decoration:none">a link</a> inside it.</p>'
        '<input aria-label="a field" value="faint field" style="color:#eee;background:#fff">'
        '<pre style="background:#fff"><span style="color:#eee">faint token</span></pre>'
        "</body></html>"
    )
    found = {violation["id"]: violation["html"] for violation in axe_violations(page)}
    assert {"image-alt", "color-contrast", "link-in-text-block"} <= found.keys(), found
    faint = " ".join(found["color-contrast"])
    assert all(text in faint for text in ("faint<", "faint field", "faint token")), faint
    inside = {violation["id"] for violation in axe_violations(page, within="pre")}
    assert inside == {"color-contrast"}, inside


def test_opens_from_disk(context: BrowserContext) -> None:
    """Opened as a file, without any server, the first page renders its math with no error."""
    require_build()
    page, visit = open_page(context, (BUILD / f"{PAGES[0]}.html").as_uri())
    assert page.locator(".bd-article h1").count() > 0
    assert page.evaluate("typeof MathJax.version") == "string", "MathJax did not load"
    assert page.locator(".math:not(:has(mjx-container))").count() == 0, "math left raw"
    assert visit.errors == []
    assert all(urlsplit(url).scheme in {"file", "data"} for url in visit.requests)


def test_request_recording_sees_other_hosts(page: Page) -> None:
    """The request check can fail: an image from another host is recorded (and never sent)."""
    visit = Visit("about:blank")
    watch(page, lambda: visit)
    page.route("http://gptembed.invalid/**", lambda route: route.abort())
    page.set_content('<img alt="x" src="http://gptembed.invalid/x.png">')
    assert "http://gptembed.invalid/x.png" in visit.requests
