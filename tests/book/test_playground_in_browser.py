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

import numpy as np
import pytest

from _ext.gpt_playground import MAX_POSITIONS, playground_data
from gptembed import corpus
from gptembed.gpt import GPT, at_length, forward, logits, token_losses
from gptembed.gpt_runs import stored_run, stored_scheme_run
from gptembed.positions import SCHEMES, position_ids_from_mask
from tests.book_site import BUILD, built_page, require_build, source_of, toc_docnames
from tests.browsing import Visit, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

PAGES = [name for name in toc_docnames() if "{gpt-playground}" in source_of(name).read_text()]
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
    "seed": 0,
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
    return {losses: r.charLosses, top: r.top, row: r.row, map: btoa(text), t: r.t};
})"""
"""For each setting, what the page computes and shows (the map as base64 of its float64s)."""


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
    {"model": "text", "passage": "6", "start": 300, "grow": "fresh", "seed": 2},
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


def test_playground_files_load_only_where_the_playground_is() -> None:
    """The playground's data, script and style are on its page and on no other."""
    require_build()
    for docname in toc_docnames():
        html = built_page(docname).read_text(encoding="utf8")
        files = set(re.findall(r"_static/(gpt_playground[\w.]*)", html))
        wanted = {"gpt_playground_data.js", "gpt_playground.js", "gpt_playground.css"}
        assert files == (wanted if docname in PAGES else set()), docname
