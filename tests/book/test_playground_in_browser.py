"""Chapter 8's playground, the small GPT live in the page, in Chromium from `file://`: the values
it shows are the package's.

The page runs the model itself (`_ext/gpt_playground.js` mirrors `gptembed.gpt`'s forward pass
in float32), so these tests hold it to the package: at 30 random settings (texts, models, start
rows, paddings, position ids, growth methods and seeds, windows and sinks, heads and queries),
computed in one `page.evaluate` call, every loss, top prediction and attention weight the page
shows equals what `gptembed.gpt.token_losses` and `forward` give in float64, to 1e-5. They also
check that each control changes what it should, that the address holds the setting (restored on
load and after Back and Forward), that bad text and bad address values get a clear message and
no page error or injected element, that axe finds no violation in either theme after changes,
and that no request leaves the page. One tab holds the page for the module's tests.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import numpy as np
import pytest

from _ext.gpt_playground import MAX_POSITIONS, playground_data
from gptembed import corpus
from gptembed.gpt import GPT, at_length, forward, logits, token_losses
from gptembed.gpt_runs import stored_run, stored_scheme_run
from gptembed.positions import SCHEMES, position_ids_from_mask
from tests.book_site import BUILD, built_page, require_build, source_of, toc_docnames
from tests.browsing import Visit, axe_violations, open_page, switch_to_dark

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

PAGES = [name for name in toc_docnames() if "```{gpt-playground}" in source_of(name).read_text()]
DATA = playground_data()
TOLERANCE = 1e-5
DEFAULTS: dict[str, Any] = {
    "model": "text",
    "passage": "1",
    "text": "",
    "start": 0,
    "pad": 0,
    "ids": "count",
    "grow": "fresh",
    "seed": 1,
    "window": None,
    "sinks": 0,
    "head": "1.1",
    "query": None,
}
"""The setting the playground opens at (the script's DEFAULTS)."""


@functools.cache
def stored_model(key: str) -> GPT:
    """The model the page's ``key`` names, in float64 as the chapters read it."""
    if key == "text":
        return stored_run(seed=0, dtype=np.float64).model
    return stored_scheme_run(key, seed=0, dtype=np.float64).model


def text_of(setting: dict[str, Any]) -> str:
    if setting["passage"]:
        return str(DATA["passages"][int(setting["passage"]) - 1])
    return str(setting["text"])


def expected(setting: dict[str, Any]) -> dict[str, Any]:
    """What the package computes for ``setting``: each text character's loss (None for the
    first), the query's top five next characters, the chosen head's weights (query row, map)."""
    s = {**DEFAULTS, **setting}
    model = stored_model(s["model"])
    text, pad = text_of(s), s["pad"]
    ids = corpus.encode(corpus.END_OF_TEXT * pad + text)
    inputs, targets = ids[None, :-1], ids[None, 1:]
    kwargs: dict[str, Any] = {"window": s["window"], "sinks": s["sinks"]}
    if s["ids"] == "mask" and pad:
        mask = np.array([[0] * pad + [1] * (inputs.shape[1] - pad)])
        positions = position_ids_from_mask(mask)
        kwargs["position_ids"] = positions
    else:
        positions = s["start"] + np.arange(inputs.shape[1])
        kwargs["start_pos"] = s["start"]
    rows = int(positions.max()) + 1
    if rows > model.max_seq_len:
        method = s["grow"] if model.scheme == "learned" else None
        model = at_length(model, rows, method, seed=s["seed"])
    start = kwargs.pop("start_pos", 0)
    losses = token_losses(model, inputs, targets, start, **kwargs)[0]
    z = logits(model, inputs, start, **kwargs)[0]
    probs = np.exp(z - z.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    layer, head = (int(n) for n in s["head"].split("."))
    weights = forward(model, inputs, start, **kwargs).blocks[layer - 1].probs[0, head - 1]
    query = len(text) - 1 if s["query"] is None else s["query"]
    slot = pad + query - 1
    top = np.argsort(-probs[slot], kind="stable")[:5]
    return {
        "losses": [None, *losses[pad:].tolist()],
        "top": [(corpus.decode([i]), float(probs[slot, i])) for i in top],
        "row": weights[slot, : slot + 1],
        "map": weights,
    }


SHOWN_JS = """settings => settings.map(s => {
    const r = window.gptembedPlayground.shown(s);
    if (r.error) return {error: r.error};
    const bytes = new Uint8Array(r.map.buffer, r.map.byteOffset, r.map.byteLength);
    let text = '';
    for (let i = 0; i < bytes.length; i += 8192) {
        text += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    }
    return {
        losses: r.charLosses, top: r.top, row: r.row, map: btoa(text), t: r.t, reused: r.reused,
    };
})"""
"""For each setting, in order, what the page computes and shows (the map as base64 of its
float64s), and how many rows it took from the pass before."""


def computed(page: Page, settings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the page's script computes for each setting, in one call."""
    found = page.evaluate(SHOWN_JS, settings)
    for result in found:
        if "map" in result:
            t = result["t"]
            flat = np.frombuffer(base64.b64decode(result["map"]), dtype="<f8")
            result["map"] = flat.reshape(t, t).astype(np.float64)
    return found


def assert_same(found: dict[str, Any], wanted: dict[str, Any], label: str) -> None:
    assert "error" not in found, f"{label}: {found.get('error')}"
    assert found["losses"][0] is None and wanted["losses"][0] is None
    np.testing.assert_allclose(
        found["losses"][1:], wanted["losses"][1:], rtol=0, atol=TOLERANCE, err_msg=label
    )
    assert [ch for ch, _ in found["top"]] == [ch for ch, _ in wanted["top"]], label
    np.testing.assert_allclose(
        [p for _, p in found["top"]],
        [p for _, p in wanted["top"]],
        rtol=0,
        atol=TOLERANCE,
        err_msg=label,
    )
    np.testing.assert_allclose(found["row"], wanted["row"], rtol=0, atol=TOLERANCE, err_msg=label)
    np.testing.assert_allclose(found["map"], wanted["map"], rtol=0, atol=TOLERANCE, err_msg=label)


CHOSEN: list[dict[str, Any]] = [
    {"model": "rotary", "passage": "2", "window": 16, "sinks": 2, "head": "2.3"},
    {"model": "alibi", "passage": "3", "window": 20, "sinks": 3, "head": "1.4", "query": 150},
    {"model": "none", "passage": "4", "window": 8, "sinks": 1},
    {"model": "text", "passage": "5", "start": 100, "grow": "tile", "query": 60},
    {"model": "text", "passage": "5", "start": 100, "grow": "interpolate", "head": "2.1"},
    {"model": "text", "passage": "6", "start": 250, "grow": "fresh", "seed": 2},
    {"model": "sinusoidal", "passage": "1", "head": "2.4"},
    {"model": "learned", "passage": "1", "pad": 10, "ids": "mask"},
    {"model": "text", "passage": "2", "pad": 10, "ids": "count", "query": 5},
]
"""Settings that each reach one path of the mirror: sinks under each relative scheme, each way
of growing the learned table, the sinusoidal table past its rows, the two kinds of padding."""


def random_setting(rng: random.Random) -> dict[str, Any]:
    """A setting the package accepts: a random model, text (a held-out passage, a slice of the
    corpus or random characters), and position controls that combine."""
    key = rng.choice(["text", *SCHEMES])
    trained = int(DATA["models"][key]["seq_len"])
    stream = corpus.text()
    kind = rng.random()
    length = rng.randint(2, 200)
    if kind < 0.2:
        setting: dict[str, Any] = {"passage": str(rng.randint(1, len(DATA["passages"])))}
        length = len(DATA["passages"][int(setting["passage"]) - 1])
    elif kind < 0.7:
        at = rng.randrange(len(stream) - length)
        setting = {"passage": "", "text": stream[at : at + length]}
    else:
        setting = {"passage": "", "text": "".join(rng.choices(DATA["alphabet"], k=length))}
    setting["model"] = key
    control = rng.choice(["plain", "start", "pad", "window"])
    if control == "start":
        setting["start"] = rng.randint(0, MAX_POSITIONS - length)
    elif control == "pad":
        setting["pad"] = rng.randint(0, min(40, MAX_POSITIONS - length))
        setting["ids"] = rng.choice(["count", "mask"])
    elif control == "window":
        setting["window"] = rng.randint(1, trained)
        if key not in ("learned", "sinusoidal", "text"):
            setting["sinks"] = rng.randint(0, 4)
    setting["grow"] = rng.choice(DATA["growth"])
    setting["seed"] = rng.choice(DATA["growth_seeds"])
    setting["head"] = f"{rng.randint(1, 2)}.{rng.randint(1, 4)}"
    setting["query"] = rng.randint(1, length - 1)
    return setting


@pytest.fixture(scope="module")
def playground(
    browser: Browser, browser_context_args: dict[str, Any]
) -> Iterator[tuple[Page, Visit]]:
    """The playground's page opened as a file, in a tab of its own, light theme, with its
    console and requests watched: one for the module's tests."""
    require_build()
    assert PAGES == ["book/08_absolute_positions"], PAGES
    context = browser.new_context(**browser_context_args)
    page, visit = open_page(context, built_page(PAGES[0]).as_uri())
    try:
        yield page, visit
    finally:
        context.close()


def test_thirty_random_settings_are_the_packages(playground: tuple[Page, Visit]) -> None:
    """At 30 random settings and the chosen ones (:data:`CHOSEN`) every loss, top prediction
    and attention weight the page computes for display equals the package's (float64) to 1e-5."""
    page, visit = playground
    rng = random.Random(40)
    settings = CHOSEN + [random_setting(rng) for _ in range(30)]
    for setting, found in zip(settings, computed(page, settings), strict=True):
        assert_same(found, expected(setting), json.dumps(setting)[:300])
    assert visit.errors == []


def _reuse_steps() -> list[tuple[dict[str, Any], int]]:
    """Settings in order, each with the rows its pass takes from the one before: typing at the
    end, deleting, an edit in the middle, the last character changed (only a target changes),
    a table that moves when it grows (interpolated) or does not (fresh rows), windows with sinks
    under rotary and ALiBi, a window changed, padding put in front."""
    text = corpus.text()[5000:5150]
    edited = text[:40] + ("Q" if text[40] != "Q" else "R") + text[41:100]
    own = {"passage": ""}
    moved = {**own, "start": 100, "grow": "interpolate"}
    kept = {**own, "start": 100, "grow": "fresh"}
    rotary = {**own, "model": "rotary", "window": 8, "sinks": 2}
    alibi = {**own, "model": "alibi", "window": 8, "sinks": 3}
    padded = {**own, "model": "learned", "ids": "mask"}
    return [
        ({**own, "model": "none", "text": text}, -1),  # whatever the page computed before
        ({**own, "text": text[:120]}, 0),  # another model
        ({**own, "text": text}, 119),  # 30 characters typed at the end
        ({**own, "text": text[:149] + "Z"}, 149),  # the inputs as before: only a target
        ({**own, "text": text[:100]}, 99),  # deleted back to 100
        ({**own, "text": edited}, 40),  # the 41st character changed
        ({**moved, "text": text[:60]}, 0),
        ({**moved, "text": text[:66]}, 0),  # past row 127 the grown table's rows all move
        ({**kept, "text": text[:60]}, 0),
        ({**kept, "text": text[:66]}, 59),  # fresh rows leave the rows before them
        ({**rotary, "text": text[:100]}, 0),
        ({**rotary, "text": text[:120]}, 99),
        ({**rotary, "window": 9, "text": text[:120]}, 0),
        ({**alibi, "text": text[:100]}, 0),
        ({**alibi, "text": text[:120]}, 99),
        ({**padded, "pad": 5, "text": text[:50]}, 0),
        ({**padded, "pad": 6, "text": text[:50]}, 5),  # the five padding slots in front alike
    ]


def test_a_pass_reuses_the_rows_the_last_computed_alike(playground: tuple[Page, Visit]) -> None:
    """The page takes from its last pass the rows the new setting computes alike (a causal
    model's row depends only on the rows up to it, as a KV cache has it): typing at the end
    computes the new rows only. At each of these settings, in order, the page reused the rows
    wanted, and every value it shows equals the package's."""
    page, visit = playground
    steps = _reuse_steps()
    settings = [setting for setting, _ in steps]
    for (setting, reused), found in zip(steps, computed(page, settings), strict=True):
        label = json.dumps(setting)[:200]
        assert_same(found, expected(setting), label)
        if reused >= 0:
            assert found["reused"] == reused, label
    assert visit.errors == []


DATA_LINE = re.compile(r"^window\.GPTEMBED_PLAYGROUND_DATA = (?P<json>\{.*\});$", re.MULTILINE)


def test_built_data_is_what_the_build_exports() -> None:
    """The data the page reads is `playground_data()` as the package's stored runs give it now,
    and its weights are the stored models' own."""
    require_build()
    text = (BUILD / "_static" / "gpt_playground_data.js").read_text(encoding="utf8")
    match = DATA_LINE.search(text)
    assert match, "gpt_playground_data.js does not set window.GPTEMBED_PLAYGROUND_DATA"
    assert json.loads(match["json"]) == DATA
    text_model = DATA["models"]["text"]
    packed = np.frombuffer(base64.b64decode(text_model["weights"]), dtype="<f4")
    wanted = np.concatenate([a.reshape(-1) for a in stored_model("text").parameters().values()])
    np.testing.assert_array_equal(packed, wanted)


SHOWN_DOM_JS = """root => ({
    losses: [...root.querySelectorAll('#gp-strip .gp-char')]
        .map(s => s.dataset.loss === undefined ? null : Number(s.dataset.loss)),
    top: [...root.querySelectorAll('#gp-top data')].map(d => [d.dataset.char, Number(d.value)]),
    row: [...root.querySelectorAll('#gp-row rect')].map(r => Number(r.dataset.weight)),
    loss: Number(root.querySelector('#gp-loss').value),
    summary: root.querySelector('#gp-summary').textContent,
    message: root.querySelector('#gp-message').textContent,
    pads: root.querySelectorAll('#gp-row .gp-bar--pad').length,
    heads: root.querySelectorAll('#gp-head option').length,
})"""
"""What the page shows, read from its elements in one call."""


def on_page(page: Page) -> dict[str, Any]:
    return page.locator("[data-gpt-playground]").evaluate(SHOWN_DOM_JS)


def assert_page_shows(page: Page, setting: dict[str, Any]) -> dict[str, Any]:
    """The page's elements show the package's values for ``setting``; returns what they show."""
    found = on_page(page)
    assert found["message"] == "", found["message"]
    wanted = expected(setting)
    label = json.dumps(setting)[:200]
    assert found["losses"][0] is None
    np.testing.assert_allclose(
        found["losses"][1:], wanted["losses"][1:], atol=TOLERANCE, err_msg=label
    )
    assert [ch for ch, _ in found["top"]] == [ch for ch, _ in wanted["top"]], label
    np.testing.assert_allclose(
        [p for _, p in found["top"]], [p for _, p in wanted["top"]], atol=TOLERANCE, err_msg=label
    )
    np.testing.assert_allclose(found["row"], wanted["row"], atol=TOLERANCE, err_msg=label)
    query = (
        len(text_of({**DEFAULTS, **setting})) - 1
        if setting.get("query") is None
        else setting["query"]
    )
    assert abs(found["loss"] - wanted["losses"][query]) <= TOLERANCE
    return found


def set_control(page: Page, name: str, value: str) -> None:
    """Set control ``name`` as a reader does: a picker chosen, a number typed and committed."""
    control = page.locator(f"#gp-{name}")
    if control.evaluate("e => e.tagName") == "SELECT":
        control.select_option(value)
    else:
        control.fill(value)
        control.dispatch_event("change")


def test_each_control_changes_what_it_should(playground: tuple[Page, Visit]) -> None:
    """Each control, set as a reader sets it, changes what it should, and after each change the
    page's elements show the package's values: the model (and its heads), the passage, typed
    text, the start row, padding and its position ids, the growth method, the window and sinks,
    the head and the query (one of them by keyboard alone)."""
    page, visit = playground
    setting: dict[str, Any] = {}
    before = assert_page_shows(page, setting)
    assert before["heads"] == 8 and "Chapter 7's text model" in before["summary"]
    steps: list[tuple[str, str, dict[str, Any]]] = [
        ("passage", "3", {"passage": "3"}),
        ("start", "64", {"start": 64}),
        ("seed", "2", {"seed": 2}),  # the fresh rows of another seed
        ("grow", "tile", {"grow": "tile"}),
        ("grow", "interpolate", {"grow": "interpolate"}),
        ("start", "0", {"start": 0}),
        ("pad", "12", {"pad": 12}),
        ("ids", "mask", {"ids": "mask"}),
        ("pad", "0", {"pad": 0}),
        ("head", "2.3", {"head": "2.3"}),
        ("query", "40", {"query": 40}),
        ("model", "rotary", {"model": "rotary"}),
        ("window", "10", {"window": 10}),
        ("sinks", "2", {"sinks": 2}),
    ]
    previous = before
    for name, value, change in steps:
        set_control(page, name, value)
        setting.update(change)
        now = assert_page_shows(page, setting)
        assert now != previous, f"{name}={value} changed nothing shown"
        previous = now
    assert previous["heads"] == 8 and "Chapter 10's rotary model" in previous["summary"]
    # a window keeps the last 10 keys and the 2 sinks: the query sees 12 keys at most
    assert sum(w > 0 for w in previous["row"]) <= 12
    # typed text, by keyboard alone: the passage picker set to the reader's own text
    page.locator("#gp-passage").focus()
    page.keyboard.press("Home")  # "your own text" is the first choice
    page.locator("#gp-text").focus()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("def f(x):\n    return x + 1\n")
    page.locator("#gp-query").focus()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("20")
    page.keyboard.press("Tab")
    setting.update(passage="", text="def f(x):\n    return x + 1\n", query=20)
    typed = assert_page_shows(page, setting)
    assert len(typed["losses"]) == len(setting["text"])
    assert visit.errors == []


LINKED = {"model": "alibi", "passage": "4", "window": 24, "sinks": 2, "head": "2.2", "query": 90}
LINK = "?model=alibi&passage=4&window=24&sinks=2&head=2.2&query=90"


def query_of(page: Page) -> dict[str, list[str]]:
    return parse_qs(page.evaluate("location.search").lstrip("?"), keep_blank_values=True)


def test_the_address_holds_the_setting(playground: tuple[Page, Visit]) -> None:
    """A link opens its setting (the controls and the values show it); a change goes into the
    address; Back and Forward restore each setting, and the page's own link names it."""
    page, visit = playground
    page.goto(built_page(PAGES[0]).as_uri() + LINK)
    assert page.locator("#gp-model").input_value() == "alibi"
    assert page.locator("#gp-window").input_value() == "24"
    assert_page_shows(page, LINKED)
    set_control(page, "start", "0")  # the default: nothing else changes
    set_control(page, "model", "none")
    changed = {**LINKED, "model": "none"}
    assert query_of(page)["model"] == ["none"]
    assert (page.locator("#gp-link").get_attribute("href") or "").startswith(
        "?model=none&passage=4&window=24&sinks=2&head=2.2&query=90"
    )
    assert_page_shows(page, changed)
    page.go_back()
    page.wait_for_function("document.querySelector('#gp-model').value === 'alibi'")
    assert_page_shows(page, LINKED)
    page.go_forward()
    page.wait_for_function("document.querySelector('#gp-model').value === 'none'")
    assert_page_shows(page, changed)
    assert visit.errors == []


INJECTED_JS = """root => root.querySelectorAll('img, script, iframe, [onerror], [onload]').length"""


BAD_ADDRESSES = [
    ("?model=gpt4", ["model must be one of", '"gpt4"']),
    ("?start=-3&window=abc", ['start must be a whole number from 0 to 511, got "-3"', '"abc"']),
    ("?head=9.9", ['There is no head "9.9"']),
    ("?passage=&text=caf%C3%A9%20%F0%9F%98%80", ['"é"', '"😀"']),
    ("?passage=&text=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E%C3%A9", ['"é"']),
    ("?model=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E", ["<img src=x onerror=alert(1)>"]),
    ("?start=500&query=3", ["reaches position"]),
    ("?window=8&start=5", ["A window counts positions"]),
    ("?sinks=2", ["sink tokens need a window"]),
    ("?window=8&sinks=2", ["Sink tokens need a relative scheme"]),
]
"""Bad addresses, and what the message must name of each (bad text among them)."""
REVISIT_JS = """address => {
    history.pushState(null, '', address);
    window.dispatchEvent(new PopStateEvent('popstate'));
}"""
"""Go to another address of the page as Back and Forward do (a load costs a second)."""


def test_bad_values_get_a_clear_message(playground: tuple[Page, Visit]) -> None:
    """Bad text and bad address values get a message that names them, as text: no page error,
    no element injected. The first address is loaded, the others reached as Back reaches one."""
    page, visit = playground
    root = page.locator("[data-gpt-playground]")
    for number, (address, named) in enumerate(BAD_ADDRESSES):
        if number == 0:
            page.goto(built_page(PAGES[0]).as_uri() + address)
        else:
            page.evaluate(REVISIT_JS, address)
        message = page.locator("#gp-message").text_content() or ""
        for text in named:
            assert text in message, (address, message)
        assert root.evaluate(INJECTED_JS) == 0, address
    assert visit.errors == []


def test_typed_text_outside_the_vocabulary_is_named(playground: tuple[Page, Visit]) -> None:
    """Typed characters the model does not know are named, and the message goes when they go."""
    page, visit = playground
    page.goto(built_page(PAGES[0]).as_uri() + "?passage=")
    page.locator("#gp-text").fill("naïve ☃ text")
    message = page.locator("#gp-message").text_content() or ""
    assert '"ï", "☃"' in message, message
    page.locator("#gp-text").fill("naive text")
    assert page.locator("#gp-message").text_content() == ""
    assert_page_shows(page, {"passage": "", "text": "naive text"})
    assert visit.errors == []


def test_no_axe_violation_in_either_theme_and_no_request_leaves(
    playground: tuple[Page, Visit],
) -> None:
    """After changes (a padded, windowed rotary setting), axe finds no violation in the
    playground in the light theme and then in the dark one; every request the visits made was
    for a file of the book."""
    page, visit = playground
    page.goto(built_page(PAGES[0]).as_uri() + "?model=rotary&pad=5&head=2.1")
    set_control(page, "query", "30")
    assert axe_violations(page, within="[data-gpt-playground]") == []
    switch_to_dark(page)
    set_control(page, "window", "12")
    assert axe_violations(page, within="[data-gpt-playground]") == []
    leaving = [url for url in visit.requests if not url.startswith("file://")]
    assert leaving == []
    assert visit.errors == []


PLAYGROUND_LINK = re.compile(
    r'href="(?:08_absolute_positions\.html)?(\?[^"#]*)#the-small-gpt-live"'
)


def test_chapters_link_to_settings_the_playground_runs(playground: tuple[Page, Visit]) -> None:
    """At least three chapters link to a setting of the playground, and each linked setting
    opens with no message and shows the package's values."""
    page, visit = playground
    links = {
        docname: PLAYGROUND_LINK.findall(built_page(docname).read_text(encoding="utf8"))
        for docname in toc_docnames()
    }
    linking = [docname for docname, found in links.items() if found]
    assert len(linking) >= 3, links
    page.goto(built_page(PAGES[0]).as_uri())
    for docname in linking:
        for query in links[docname]:
            address = query.replace("&amp;", "&")
            page.evaluate(REVISIT_JS, address)
            params = parse_qs(address.lstrip("?"))
            setting = {name: values[0] for name, values in params.items()}
            for name in ("start", "pad", "window", "sinks", "seed"):
                if name in setting:
                    setting[name] = int(setting[name])
            assert_page_shows(page, setting)
    assert visit.errors == []
