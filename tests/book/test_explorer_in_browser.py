"""Chapter 4's cost explorer in Chromium: the numbers it shows are the package's.

The tests move the slider and the pickers as a reader would (the slider and, in one test, every
control by keyboard alone) and compare every shown value, exact and as text, with the package's
`context_costs` (which tests/test_explorer.py checks against the formulas). They also
check that the explorer works from `file://` without a server, that axe finds no violation
after the settings change, in either theme, and that the built data is what the package
computes now. The browser and the server are tests/book/conftest.py's fixtures; axe and the theme
switch come from tests/browsing.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

from gptembed import MODELS, format_bytes, model_label
from gptembed.explorer import ATTENTION_MODES, context_costs, explorer_grid, format_share
from tests.book_site import BUILD, SCREENSHOTS, built_page, require_build, source_of, toc_docnames
from tests.browsing import Visit, axe_violations, open_page, switch_to_dark

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

pytestmark = pytest.mark.browser

PAGES = [name for name in toc_docnames() if "{cost-explorer}" in source_of(name).read_text()]
DTYPES = {4: "fp32 (4 bytes)", 2: "fp16 or bf16 (2 bytes)"}
MODES = {
    "eager": "eager attention",
    "fused": "fused (flash-style) kernel",
    "decode": "one decoding step with a KV cache",
}
LENGTHS = [2**p for p in range(8, 21)]


class Setting(NamedTuple):
    model: str
    tokens: int
    bytes_per_element: int
    batch: int
    mode: str

    def __str__(self) -> str:
        return f"{self.model}-{self.tokens}-{self.bytes_per_element}B-b{self.batch}-{self.mode}"


SETTINGS = [
    Setting("gpt2-small", 1_024, 4, 1, "eager"),  # where the explorer opens
    Setting("gpt2-small", 256, 4, 1, "eager"),  # the shortest context
    Setting("gpt3-175b", 2**20, 2, 64, "eager"),  # every control at its far end
    Setting("gpt3-175b", 256, 4, 64, "decode"),
    Setting("gpt2-large", 2**20, 4, 1, "fused"),
    Setting("gpt2-medium", 16_384, 2, 8, "fused"),
    Setting("gpt3-13b", 4_096, 4, 2, "decode"),
    Setting("gpt2-xl", 65_536, 2, 1, "decode"),
    Setting("gpt3-xl", 2_048, 4, 32, "fused"),
    Setting("gpt3-small", 262_144, 2, 4, "eager"),
]


def expected(setting: Setting) -> dict[str, tuple[Any, str]]:
    """Every value the explorer should show for ``setting``, ``{slot: (exact, text)}``: the
    package's :func:`context_costs` (tests/test_explorer.py checks it against the formulas)."""
    costs = context_costs(
        MODELS[setting.model],
        setting.tokens,
        batch_size=setting.batch,
        bytes_per_element=setting.bytes_per_element,
        mode=setting.mode,
    )
    in_bytes = {
        "weights": costs.weight_bytes,
        "scores-layer": costs.scores_layer_bytes,
        "scores-all": costs.scores_all_bytes,
        "kv-cache": costs.kv_cache_bytes,
        "kept": costs.kept_bytes,
    }
    return {
        "position-params": (costs.position_params, f"{costs.position_params:,}"),
        "params": (costs.params, f"{costs.params:,}"),
        "position-share": (costs.position_share, format_share(costs.position_share)),
        **{slot: (value, format_bytes(value)) for slot, value in in_bytes.items()},
        "holds": (list(costs.holds), ", ".join(costs.holds) or "none"),
        "share": (costs.attention_share, f"{costs.attention_share:.1%}"),
        "share-kaplan": (costs.attention_share_kaplan, f"{costs.attention_share_kaplan:.1%}"),
    }


SHOWN_JS = """root => Object.fromEntries([...root.querySelectorAll('data')]
    .map(d => [d.id.replace(/^ce-/, ''), [d.value, d.textContent]]))"""


def shown(page: Page) -> dict[str, tuple[Any, str]]:
    """What the explorer shows: ``{slot: (exact, text)}``, the exact value read back from the
    ``value`` attribute as the type the package computes (int, float, list of names)."""
    values = page.locator("[data-cost-explorer]").evaluate(SHOWN_JS)
    read = {}
    for key, (value, text) in values.items():
        if key == "holds":
            read[key] = (value.split("|") if value else [], text)
        elif "share" in key:
            read[key] = (float(value), text)
        else:
            read[key] = (int(value), text)
    return read


def set_length(page: Page, tokens: int) -> None:
    """Move the slider by keyboard, as a reader would: Home, then one step right at a time."""
    slider = page.locator("#ce-length")
    slider.focus()
    slider.press("Home")
    for _ in range(LENGTHS.index(tokens)):
        slider.press("ArrowRight")


def choose(page: Page, setting: Setting) -> None:
    """Set every control of the explorer to ``setting``."""
    cfg = MODELS[setting.model]
    sizes = f"{cfg.n_layers} layers of {cfg.n_heads} heads, width {cfg.embed_dim:,}"
    page.select_option("#ce-model", label=f"{model_label(setting.model)} ({sizes})")
    set_length(page, setting.tokens)
    page.select_option("#ce-dtype", label=DTYPES[setting.bytes_per_element])
    page.select_option("#ce-batch", label=str(setting.batch))
    page.get_by_label(MODES[setting.mode], exact=True).check()


@pytest.fixture(scope="module")
def explorer(
    browser: Browser, browser_context_args: dict[str, Any], site: str
) -> Iterator[tuple[Page, Visit]]:
    """Chapter 4 open in a tab of its own, light theme, with its console watched: one for the
    module's tests, which go on from the settings the test before left."""
    assert PAGES, "no page of the book holds a {cost-explorer}"
    context = browser.new_context(**browser_context_args)
    page, visit = open_page(context, f"{site}{PAGES[0]}.html")
    try:
        yield page, visit
    finally:
        context.close()


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_explorer_shows_the_package_numbers(explorer: tuple[Page, Visit], setting: Setting) -> None:
    """At each setting every shown value, exact and as text, is the package's."""
    page, visit = explorer
    if setting != SETTINGS[0]:  # the first: as the page opens, nothing touched
        choose(page, setting)
    assert shown(page) == expected(setting)
    label = f"{setting.tokens:,} tokens"
    assert page.locator("#ce-length").get_attribute("aria-valuetext") == label
    assert page.locator("#ce-length-shown").text_content() == label
    summary = page.locator("#ce-summary").text_content() or ""
    assert summary.startswith(f"{model_label(setting.model)}, {label}, ")
    assert f"attention keeps {expected(setting)['kept'][1]}" in summary
    held = ATTENTION_MODES[setting.mode].held  # what the two rows of scores count
    assert page.locator(".ce-held").all_text_contents() == [held, held]
    assert visit.errors == []


def test_explorer_by_keyboard_alone(explorer: tuple[Page, Visit]) -> None:
    """Tab moves through the controls in order, and arrow keys change each of them."""
    page, visit = explorer
    choose(page, SETTINGS[0])
    page.locator("#ce-model").focus()
    page.keyboard.press("ArrowDown")  # the next model: GPT-2 medium
    for key in ["Tab", "ArrowRight", "Tab", "ArrowDown", "Tab", "ArrowDown", "Tab", "ArrowRight"]:
        page.keyboard.press(key)  # length 2,048; fp16; batch 2; the fused kernel
    focused = page.evaluate("document.activeElement.closest('[data-cost-explorer]') !== null")
    assert focused, "the focus left the explorer"
    assert shown(page) == expected(Setting("gpt2-medium", 2_048, 2, 2, "fused"))
    assert visit.errors == []


def test_explorer_screenshots(explorer: tuple[Page, Visit]) -> None:
    """Two settings, saved in `_build/screenshots/` for a person to look at."""
    page, _ = explorer
    for setting in (SETTINGS[0], SETTINGS[5]):
        choose(page, setting)
        path = SCREENSHOTS / f"explorer-{setting}.png"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("[data-cost-explorer]").screenshot(path=path)
        assert path.stat().st_size > 10_000, f"{path} is nearly empty"


def test_axe_finds_no_violation_after_changes_light(explorer: tuple[Page, Visit]) -> None:
    """With the settings changed (the decoding step, GPT-3 175B at a million tokens), axe-core
    finds no violation on the page (test_browser scans it as it opens, in both themes)."""
    page, visit = explorer
    choose(page, Setting("gpt3-175b", 2**20, 2, 64, "decode"))
    violations = axe_violations(page, visit)  # axe's own requests are not the page's
    assert not violations, f"axe after changes: {violations}"


def test_axe_finds_no_violation_after_changes_dark(explorer: tuple[Page, Visit]) -> None:
    """The same in the dark theme: the theme button clicked as a reader would (test_browser
    scans every page so as it opens), then the settings changed again."""
    page, visit = explorer
    switch_to_dark(page)
    choose(page, Setting("gpt2-xl", 2**20, 4, 16, "fused"))
    assert shown(page) == expected(Setting("gpt2-xl", 2**20, 4, 16, "fused"))
    violations = axe_violations(page, visit)
    assert not violations, f"axe (dark) after changes: {violations}"
    assert visit.errors == []


def test_explorer_works_from_disk(context: BrowserContext) -> None:
    """Opened as a file, without a server, the explorer loads its data and answers a change."""
    require_build()
    page, visit = open_page(context, built_page(PAGES[0]).as_uri())
    assert shown(page) == expected(SETTINGS[0])
    choose(page, SETTINGS[2])
    assert shown(page) == expected(SETTINGS[2])
    assert visit.errors == []
    assert all(url.startswith(("file:", "data:")) for url in visit.requests), visit.requests


DATA_LINE = re.compile(r"^window\.GPTEMBED_COST_GRID = (?P<json>\{.*\});$", re.MULTILINE)


def test_built_data_is_what_the_package_computes() -> None:
    """The data the page reads is `explorer_grid()` as the package computes it now."""
    require_build()
    text = (BUILD / "_static" / "cost_explorer_data.js").read_text(encoding="utf8")
    match = DATA_LINE.search(text)
    assert match, "cost_explorer_data.js does not set window.GPTEMBED_COST_GRID"
    assert json.loads(match["json"]) == explorer_grid()


def test_explorer_files_load_only_where_the_explorer_is() -> None:
    """The explorer's data, script and style are on its page and on no other."""
    require_build()
    for docname in toc_docnames():
        html = built_page(docname).read_text(encoding="utf8")
        files = set(re.findall(r"_static/(cost_explorer[\w.]*)", html))
        wanted = {"cost_explorer_data.js", "cost_explorer.js", "cost_explorer.css"}
        assert files == (wanted if docname in PAGES else set()), docname
