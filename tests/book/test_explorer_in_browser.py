"""Chapter 4's cost explorer in Chromium, opened from `file://`: the numbers it shows are the
package's.

The page computes every value itself (`_ext/cost_explorer.js` mirrors the package's formulas in
exact integers), so these tests hold it to the package: they set its controls as a reader would
(the slider, the typed length, the pickers and the options; in one test every control by
keyboard alone) and compare every shown value, exact and as text, with `explorer_values` of the
package's `context_costs`, and the turning points with `turning_points`, at seven chosen settings
and at twenty random typed lengths. They check that the chart is drawn and moves with the
controls, that the page's address holds the setting (a link restores it, and so do Back and
Forward, in the page and after leaving it), that the fused kernel at a million tokens no longer
fits a 16 GB accelerator, that the turning points are announced, and that axe finds no
violation after the settings change, in either theme. One tab holds the page for the module's
tests, which go on from the settings the test before left (a visit costs more than a test). The
browser comes from tests/book/conftest.py; axe and the theme switch from tests/browsing.py.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qs

import pytest

from gptembed import MODELS, format_bytes, model_label
from gptembed.explorer import (
    context_costs,
    explorer_data,
    explorer_values,
    format_share,
    turning_points,
)
from tests.book_site import BUILD, SCREENSHOTS, built_page, require_build, source_of, toc_docnames
from tests.browsing import Visit, axe_violations, open_page, switch_to_dark

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

PAGES = [name for name in toc_docnames() if "```{cost-explorer}" in source_of(name).read_text()]
MODES = {
    "eager": "eager attention",
    "fused": "fused (flash-style) kernel",
    "decode": "one decoding step with a KV cache",
}
DTYPES = {4: "fp32", 2: "fp16"}
DATA = explorer_data()
"""What the page is given: its choices of batch size and window, what each mode's scores hold."""
HELD = {mode["key"]: mode["held"] for mode in DATA["modes"]}


class Setting(NamedTuple):
    model: str
    tokens: int
    bytes_per_element: int = 4
    batch: int = 1
    mode: str = "eager"
    kv_heads: int | None = None  # None: every query head its own keys and values
    window: int | None = None
    banded: bool = False

    def __str__(self) -> str:
        options = f"-kv{self.kv_heads}" if self.kv_heads else ""
        options += f"-w{self.window}" if self.window else ""
        options += "-banded" if self.banded else ""
        return (
            f"{self.model}-{self.tokens}-{self.bytes_per_element}B-b{self.batch}-{self.mode}"
            f"{options}"
        )

    def costs_kwargs(self) -> dict[str, Any]:
        return {
            "batch_size": self.batch,
            "bytes_per_element": self.bytes_per_element,
            "mode": self.mode,
            "kv_heads": self.kv_heads,
            "window": self.window,
            "banded": self.banded,
        }


START = Setting("gpt2-small", 1_024)  # where the explorer opens without a setting named
LINKED = Setting("gpt2-xl", 100_000, 2, 16, "decode", kv_heads=5)
LINK = "?model=gpt2-xl&n=100000&dtype=fp16&batch=16&mode=decode&kv=5"
"""The setting the module's tab opens at, named in the page's address as a shared link names it."""
SETTINGS = [
    LINKED,  # as the link opened the page, nothing touched
    START,
    Setting("gpt2-small", 1, 4, 1, "eager"),  # the shortest context
    Setting("gpt3-175b", 2**20, 2, 64, "eager"),  # every control at its far end
    Setting("gpt3-13b", 4_096, 4, 2, "decode", kv_heads=8, window=1_024),
    Setting("gpt3-xl", 2_048, 4, 32, "fused", banded=True),
    Setting("gpt3-small", 262_144, 2, 4, "eager", kv_heads=1, window=16_384, banded=True),
]
"""Chosen settings: the ends of the controls and each option; the random lengths of
test_twenty_typed_lengths_are_the_packages draw four settings more."""


def expected(setting: Setting) -> dict[str, tuple[Any, str]]:
    """Every value the explorer should show for ``setting``, ``{slot: (exact, text)}``: the
    package's `explorer_values` (tests/test_explorer.py checks it against the formulas)."""
    costs = context_costs(MODELS[setting.model], setting.tokens, **setting.costs_kwargs())
    return explorer_values(costs)


def expected_turns(setting: Setting) -> dict[str, str]:
    """The turning points the explorer should list, ``{turn: tokens}`` ('' for none)."""
    points = turning_points(
        MODELS[setting.model],
        setting.batch,
        kv_heads=setting.kv_heads,
        window=setting.window,
        banded=setting.banded,
    )
    found = {"position": points.position, "scores": points.scores, "kv": points.kv_cache}
    return {key: "" if n is None else str(n) for key, n in found.items()}


SHOWN_JS = """root => [
    Object.fromEntries([...root.querySelectorAll('data')]
        .map(d => [d.id.replace(/^ce-/, ''), [d.value, d.textContent]])),
    Object.fromEntries([...root.querySelectorAll('#ce-turns li')]
        .map(li => [li.dataset.turn, li.dataset.tokens])),
    root.querySelector('#ce-chart .ce-marker').dataset.tokens]"""
"""In one call: the shown values, the turning points and the chart's marked length."""


def read(page: Page) -> tuple[dict[str, tuple[Any, str]], dict[str, str], str]:
    """What the explorer shows: ``({slot: (exact, text)}, {turn: tokens}, marked length)``, each
    exact value read back from its ``value`` attribute as the type the package computes (int,
    float, list of names)."""
    values, points, marker = page.locator("[data-cost-explorer]").evaluate(SHOWN_JS)
    return _typed(values), points, marker


def shown(page: Page) -> dict[str, tuple[Any, str]]:
    """What the explorer shows: ``{slot: (exact, text)}`` (see :func:`read`)."""
    return read(page)[0]


def turns(page: Page) -> dict[str, str]:
    return read(page)[1]


def _typed(values: dict[str, list[str]]) -> dict[str, tuple[Any, str]]:
    read = {}
    for key, (value, text) in values.items():
        if key == "holds":
            read[key] = (value.split("|") if value else [], text)
        elif "share" in key:
            read[key] = (float(value), text)
        else:
            read[key] = (int(value), text)
    return read


def controls(page: Page) -> Setting:
    """The setting the controls show, read from the controls themselves."""
    read = page.evaluate(
        """() => {
        const f = document.querySelector('[data-cost-explorer] form');
        const v = (name) => f.elements.namedItem(name).value;
        return [v('model'), v('n'), v('dtype'), v('batch'),
            f.querySelector('input[name=mode]:checked').value, v('kv'), v('window'),
            f.elements.namedItem('banded').checked];
    }"""
    )
    model, tokens, dtype, batch, mode, kv, window, banded = read
    heads = MODELS[model].n_heads
    return Setting(
        model,
        int(tokens),
        {"fp32": 4, "fp16": 2}[dtype],
        int(batch),
        mode,
        None if int(kv) == heads else int(kv),
        int(window) if window else None,
        banded,
    )


def set_length(page: Page, tokens: int, *, slide: bool) -> None:
    """Type the length, or (a power of two) move the slider by keyboard as a reader would:
    End or Home, then one step at a time."""
    if not slide:
        page.locator("#ce-tokens").fill(str(tokens))
        return
    slider = page.locator("#ce-length")
    slider.focus()
    power = tokens.bit_length() - 1
    if power >= 10:
        slider.press("End")
        for _ in range(20 - power):
            slider.press("ArrowLeft")
    else:
        slider.press("Home")
        for _ in range(power):
            slider.press("ArrowRight")


def choose(page: Page, setting: Setting, *, slide: bool = False) -> None:
    """Set the explorer's controls to ``setting``, each that shows something else (the length
    always: slid to, or typed), as a reader would."""
    now = controls(page)
    if now.model != setting.model:
        page.select_option("#ce-model", setting.model)
        now = controls(page)  # the key and value heads the new model kept
    set_length(page, setting.tokens, slide=slide)
    if now.bytes_per_element != setting.bytes_per_element:
        page.select_option("#ce-dtype", DTYPES[setting.bytes_per_element])
    if now.batch != setting.batch:
        page.select_option("#ce-batch", str(setting.batch))
    if now.mode != setting.mode:
        page.get_by_label(MODES[setting.mode], exact=True).check()
    if now.kv_heads != setting.kv_heads:
        page.select_option("#ce-kv", str(setting.kv_heads or MODELS[setting.model].n_heads))
    if now.window != setting.window:
        page.select_option("#ce-window", str(setting.window or ""))
    if now.banded != setting.banded:
        page.locator("#ce-banded").set_checked(setting.banded)


def assert_shows(page: Page, setting: Setting) -> None:
    """The explorer shows ``setting``: every value, the turning points, the chart's mark, the
    length's text and the summary, each as the package computes it."""
    wanted = (expected(setting), expected_turns(setting), str(setting.tokens))
    assert read(page) == wanted, setting
    label = "1 token" if setting.tokens == 1 else f"{setting.tokens:,} tokens"
    assert page.locator("#ce-length").get_attribute("aria-valuetext") == label
    assert page.locator("#ce-length-shown").text_content() == label
    summary = page.locator("#ce-summary").text_content() or ""
    assert summary.startswith(f"{model_label(setting.model)}, {label}, ")
    assert f"the step keeps {expected(setting)['total'][1]} " in summary


@pytest.fixture(scope="module")
def explorer(
    browser: Browser, browser_context_args: dict[str, Any]
) -> Iterator[tuple[Page, Visit]]:
    """Chapter 4 opened as a file, without a server, by a link that names a setting, in a tab
    of its own, light theme, with its console watched: one for the module's tests."""
    require_build()
    assert PAGES, "no page of the book holds a {cost-explorer}"
    context = browser.new_context(**browser_context_args)
    page, visit = open_page(context, built_page(PAGES[0]).as_uri() + LINK)
    try:
        yield page, visit
    finally:
        context.close()


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_explorer_shows_the_package_numbers(explorer: tuple[Page, Visit], setting: Setting) -> None:
    """At each setting every shown value, exact and as text, is the package's; half the lengths
    are slid to, half typed. The first is the setting the page's link named, untouched: the
    controls and the numbers both show it."""
    page, visit = explorer
    if setting == LINKED:
        assert controls(page) == LINKED
    else:
        choose(page, setting, slide=SETTINGS.index(setting) % 2 == 0)
    assert_shows(page, setting)
    held = HELD[setting.mode]  # what the two rows of scores count
    assert page.locator(".ce-held").all_text_contents() == [held, held]
    assert visit.errors == []
    assert all(url.startswith(("file:", "data:")) for url in visit.requests), visit.requests


def test_twenty_typed_lengths_are_the_packages(explorer: tuple[Page, Visit]) -> None:
    """Twenty lengths drawn at random (log-uniform from 1 to 2**20, seeded), typed into the
    length field, with the other controls drawn anew every fifth: the table, the turning points
    and the chart's marker are the package's at each. A length it does not take (0) is marked
    invalid and changes nothing until Enter, which sets the nearest one it takes."""
    page, visit = explorer
    draw = random.Random(28)
    setting = START
    for i in range(20):
        tokens = max(1, min(2**20, round(2 ** draw.uniform(0, 20))))
        if i % 5 == 0:
            model = draw.choice(list(MODELS))
            heads = MODELS[model].n_heads
            kv = draw.choice([g for g in range(1, heads + 1) if heads % g == 0])
            setting = Setting(
                model,
                tokens,
                draw.choice([4, 2]),
                draw.choice(DATA["batch_sizes"]),
                draw.choice(list(MODES)),
                None if kv == heads else kv,
                draw.choice([None, *DATA["windows"]]),
                draw.random() < 0.3,
            )
            choose(page, setting)
        else:
            setting = setting._replace(tokens=tokens)
            set_length(page, tokens, slide=False)
        assert read(page) == (expected(setting), expected_turns(setting), str(tokens)), setting
    # a length the explorer does not take: marked, the numbers kept, then the nearest one
    box = page.locator("#ce-tokens")
    box.fill("0")
    assert box.get_attribute("aria-invalid") == "true"
    assert "Type a whole number from 1 to 1,048,576" in (
        page.locator("#ce-tokens-help").text_content() or ""
    )
    assert shown(page) == expected(setting)
    box.press("Enter")
    assert box.input_value() == "1" and box.get_attribute("aria-invalid") == "false"
    assert shown(page) == expected(setting._replace(tokens=1))
    assert page.locator("#ce-length-shown").text_content() == "1 token"
    assert visit.errors == []


FORMATS_JS = """([shares, sizes]) => {
    const e = window.gptembedCostExplorer, data = window.GPTEMBED_COST_DATA;
    return [shares.map((s) => [e.formatShare(s), e.percentOnePlace(s)]),
            sizes.map((n) => e.formatBytes(data, BigInt(n)))];
}"""


def test_the_page_formats_numbers_as_the_package_does(explorer: tuple[Page, Visit]) -> None:
    """The script's formats against the package's on values where rounding is close: halves
    that are exact in binary (ties go to even), values just either side of a digit's change,
    and random ones; byte counts at each unit's edges."""
    page, _ = explorer
    draw = random.Random(5)
    shares = [0.125, 0.1225, 0.0125, 0.999, 0.9995, 0.99995, 1.0, 0.5, 1e-9, 0.00125, 2**-20]
    shares += [k / 2**14 for k in range(1, 200)]  # exact binary fractions, many of them ties
    shares += [10 ** draw.uniform(-9, 0) for _ in range(300)]
    sizes = [0, 1, 999, 1000, 1023, 1024, 1025, 10 * 1024 - 1, 2**53 + 1, 2**60, 2**70]
    sizes += [round(2 ** draw.uniform(0, 62)) for _ in range(300)]
    sizes += [k * 2**20 // 1000 for k in range(1, 100)]  # halves at three digits
    page_shares, page_sizes = page.evaluate(FORMATS_JS, [shares, [str(n) for n in sizes]])
    assert page_shares == [[format_share(s), f"{s:.1%}"] for s in shares]
    assert page_sizes == [format_bytes(n) for n in sizes]


def test_fused_mode_at_a_million_tokens_no_longer_fits_a_v100(explorer: tuple[Page, Visit]) -> None:
    """The issue's case: GPT-2 small, fp32, fused, 1,048,576 tokens. The row statistics alone
    are 576 MiB; the step, with its activations, is 787 GiB, which no accelerator holds, and
    the explorer states the rule it judges by, in a closed box a click opens."""
    page, _ = explorer
    setting = Setting("gpt2-small", 2**20, 4, 1, "fused")
    choose(page, setting)
    values = shown(page)
    assert values == expected(setting)
    assert values["kept"][1] == "576 MiB"
    assert values["activations-all"][1] == "576 GiB"
    assert "V100" not in values["holds"][1] and values["holds"] == ([], "none")
    rule = page.locator("#ce-rule").text_content() or ""
    assert rule.startswith("An accelerator holds a setting if its memory holds everything")
    assert "arXiv:2205.05198" in rule and "arXiv:1910.02054" in rule
    about = page.locator("details.cost-explorer__about")  # the rule and sources, closed
    assert about.get_attribute("open") is None and not page.locator("#ce-rule").is_visible()
    about.locator("summary").click()
    assert page.locator("#ce-rule").is_visible() and page.locator("#ce-sources").is_visible()
    about.locator("summary").click()
    assert not page.locator("#ce-sources").is_visible()


def test_turning_points_are_announced(explorer: tuple[Page, Visit]) -> None:
    """GPT-2 small, one sequence: before 930 tokens nothing is past; past 930 the scores, past
    7,001 the KV cache, past 161,008 the position table, each said in the live region."""
    page, _ = explorer
    live = page.locator("#ce-passed")
    assert live.get_attribute("aria-live") == "polite"
    choose(page, Setting("gpt2-small", 900))
    assert turns(page) == {"position": "161008", "scores": "930", "kv": "7001"}
    assert live.text_content() == "No turning point passed at this length."
    passed = page.locator("#ce-turns li[data-passed=true]")
    assert passed.count() == 0
    for tokens, count in ((930, 1), (7_001, 2), (161_008, 3)):
        set_length(page, tokens - 1, slide=False)
        assert passed.count() == count - 1
        set_length(page, tokens, slide=False)
        assert passed.count() == count
    text = live.text_content() or ""
    assert "eager attention's scores take more memory than the weights" in text
    assert "the KV cache takes more memory than the weights" in text
    assert "the position table has more parameters than the rest of the model" in text


PATHS_JS = """() => Object.fromEntries([...document.querySelectorAll('#ce-chart [data-line]')]
    .map((p) => [p.dataset.line, p.getAttribute('d')]))"""


def test_the_chart_is_drawn_and_moves_with_the_controls(explorer: tuple[Page, Visit]) -> None:
    """An inline SVG, labelled by a caption that says what it shows: its six lines, the marked
    length, and the caption change when the length, the model or the mode change."""
    page, visit = explorer
    choose(page, Setting("gpt2-small", 4_096))
    chart = page.locator("#ce-chart")
    assert chart.get_attribute("role") == "img"
    assert chart.get_attribute("aria-labelledby") == "ce-chart-caption"
    before = page.evaluate(PATHS_JS)
    assert sorted(before) == ["activations", "kv", "position", "scores", "total", "weights"]
    assert all(len(d.split("L")) > 50 for d in before.values())
    marker = page.locator("#ce-chart .ce-marker")
    x_before = float(marker.get_attribute("x1") or 0)
    caption = page.locator("#ce-chart-caption")
    text = caption.text_content() or ""
    assert "At 4,096 tokens (the vertical line)" in text
    assert f"the step keeps {expected(Setting('gpt2-small', 4_096))['total'][1]} in all" in text
    set_length(page, 100_000, slide=False)
    assert float(marker.get_attribute("x1") or 0) > x_before
    assert "At 100,000 tokens" in (caption.text_content() or "")
    page.select_option("#ce-model", "gpt2-xl")
    after = page.evaluate(PATHS_JS)
    assert all(after[key] != before[key] for key in before), "a line did not move"
    page.get_by_label(MODES["decode"], exact=True).check()
    assert page.evaluate(PATHS_JS)["total"] != after["total"]
    assert "GPT-2 XL, fp32, batch 1, one decoding step" in (caption.text_content() or "")
    assert visit.errors == []


def test_explorer_by_keyboard_alone(explorer: tuple[Page, Visit]) -> None:
    """Tab moves through the controls in order, and arrow keys change each of them."""
    page, visit = explorer
    choose(page, START)
    page.locator("#ce-model").focus()
    page.keyboard.press("ArrowDown")  # the next model: GPT-2 medium
    keys = ["Tab", "Tab", "ArrowRight"]  # past the typed length, the slider: 2,048
    keys += ["Tab", "ArrowDown", "Tab", "ArrowDown", "Tab", "ArrowRight"]  # fp16; 2; fused
    keys += ["Tab", "ArrowDown", "Tab", "ArrowDown", "Tab", "Space"]  # 8 heads; 1,024; banded
    for key in keys:
        page.keyboard.press(key)
    focused = page.evaluate("document.activeElement.closest('[data-cost-explorer]') !== null")
    assert focused, "the focus left the explorer"
    setting = Setting("gpt2-medium", 2_048, 2, 2, "fused", kv_heads=8, window=1_024, banded=True)
    assert shown(page) == expected(setting)
    assert visit.errors == []


SHOTS = [
    Setting("gpt2-small", 2**20, 4, 1, "fused"),
    Setting("gpt2-small", 1_024),
    Setting("gpt3-175b", 32_768, 2, 8, "decode", kv_heads=8, window=4_096),
]
"""The settings whose screenshots each theme's test saves: the first (about 0.55 s each), or
with ``BOOK_SCREENSHOTS=full`` all three (a million tokens fused, GPT-2 small as trained, and
decoding with GPT-3 175B and both savings), to look over in both themes."""


def _screenshots(page: Page, theme: str) -> None:
    """The explorer at :data:`SHOTS`, in `_build/screenshots/` (JPEG, as the page screenshots)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    every = os.environ.get("BOOK_SCREENSHOTS") == "full"
    for setting in SHOTS if every else SHOTS[:1]:
        choose(page, setting)
        path = SCREENSHOTS / f"explorer-{setting}-{theme}.jpg"
        page.locator("[data-cost-explorer]").screenshot(path=path, quality=85)
        assert path.stat().st_size > 10_000, f"{path} is nearly empty"


EXPLORER = "[data-cost-explorer]"
"""The explorer's element: what its controls change."""


def test_axe_finds_no_violation_after_changes_light(explorer: tuple[Page, Visit]) -> None:
    """With the settings changed (the decoding step, GPT-3 175B at a million tokens, every
    option), axe-core finds no violation in the explorer (test_browser scans the whole page as it
    opens, in both themes; the controls change only what the explorer holds); then screenshots
    go to `_build/screenshots/` for a person to look at."""
    page, visit = explorer
    _screenshots(page, "light")
    choose(page, Setting("gpt3-175b", 2**20, 2, 64, "decode", kv_heads=8, window=4_096))
    violations = axe_violations(page, within=EXPLORER)
    assert not violations, f"axe after changes: {violations}"
    assert visit.errors == []


def test_axe_finds_no_violation_after_changes_dark(explorer: tuple[Page, Visit]) -> None:
    """The same in the dark theme: the theme button clicked as a reader would, then the
    settings changed again, axe run, and a screenshot taken in the dark."""
    page, visit = explorer
    page.evaluate("window.scrollTo({top: 0, behavior: 'instant'})")  # as a page opens
    switch_to_dark(page)
    setting = Setting("gpt2-xl", 2**20, 4, 16, "fused", banded=True)
    choose(page, setting)
    assert shown(page) == expected(setting)
    violations = axe_violations(page, within=EXPLORER)
    assert not violations, f"axe (dark) after changes: {violations}"
    _screenshots(page, "dark")
    assert visit.errors == []


def _query(page: Page) -> dict[str, list[str]]:
    """The page's query string, read in the page (the address the page itself has now)."""
    return parse_qs(page.evaluate("location.search").lstrip("?"))


def test_the_address_holds_the_setting_through_links_back_and_forward(
    explorer: tuple[Page, Visit],
) -> None:
    """A changed setting goes into the address (a link that named one opened the module's tab:
    the first test); Back within the page brings the earlier setting back; and Back after
    leaving the page shows numbers that match the controls the browser restored (the restored
    form fires no event). The module's last visit: it leaves the page as Back reloaded it."""
    page, visit = explorer
    # a change goes into the address, and the page's own link names the same setting
    first = Setting("gpt3-2.7b", 12_345, 4, 2, "fused", window=4_096)
    choose(page, first)
    assert _query(page) == {
        "model": ["gpt3-2.7b"],
        "n": ["12345"],
        "dtype": ["fp32"],
        "batch": ["2"],
        "mode": ["fused"],
        "window": ["4096"],
    }
    link = page.locator("#ce-link")
    assert (link.get_attribute("href") or "").endswith(
        "?model=gpt3-2.7b&n=12345&dtype=fp32&batch=2&mode=fused&window=4096#the-cost-explorer"
    )
    # following it adds an entry to the page's history; a later change, then Back
    link.click()
    assert page.evaluate("location.hash") == "#the-cost-explorer"
    second = Setting("gpt2-medium", 300, 2, 8, "eager", banded=True)
    choose(page, second)
    assert _query(page)["banded"] == ["1"]
    page.go_back()
    page.wait_for_function("document.querySelector('#ce-tokens').value === '12345'")
    assert controls(page) == first
    assert_shows(page, first)
    page.go_forward()
    page.wait_for_function("document.querySelector('#ce-tokens').value === '300'")
    assert_shows(page, second)
    # leave the page, come back: the browser restores the form and the address
    page.goto((BUILD / "genindex.html").as_uri())
    page.go_back(wait_until="load")
    assert controls(page) == second
    assert_shows(page, second)
    assert _query(page)["model"] == ["gpt2-medium"]
    assert visit.errors == []


DATA_LINE = re.compile(r"^window\.GPTEMBED_COST_DATA = (?P<json>\{.*\});$", re.MULTILINE)


def test_built_data_is_what_the_package_computes() -> None:
    """The data the page reads is `explorer_data()` as the package computes it now."""
    require_build()
    text = (BUILD / "_static" / "cost_explorer_data.js").read_text(encoding="utf8")
    match = DATA_LINE.search(text)
    assert match, "cost_explorer_data.js does not set window.GPTEMBED_COST_DATA"
    assert json.loads(match["json"]) == explorer_data()
