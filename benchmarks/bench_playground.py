"""How long chapter 8's playground takes to update for 256 characters, in Chromium, against the
package's numpy forward pass for the same text in this process.

Run by hand after ``./dev book`` (not part of pytest): ``python benchmarks/bench_playground.py``.
It opens the built chapter from ``file://`` in Debian's Chromium headless shell (as the browser
tests do; ``GPTEMBED_CHROMIUM`` names another) and times, with ``performance.now()`` in the page,
the median of 11 repeats after 2 warm-up calls of:

1. ``compute``: the page's forward pass, losses and every head's weights
   (``window.gptembedPlayground.compute``, every row computed: no earlier pass to reuse) for 256
   characters of held-out text, at four settings: chapter 7's text model from row 0 (past its
   128 rows, fresh rows), the same with the text started at row 64, chapter 10's rotary model
   with a window of 32 keys and 2 sinks, and its ALiBi model;
2. a reader's keystroke in the text (the text model, 256 characters): the setting read from the
   controls, computed, drawn (strip, prediction, curve, the query's weights and the map), the
   mutation observers run (the page's and the theme's, Font Awesome's among them) and the page
   laid out. Two kinds: typing at the end (a character typed, then deleted: the earlier rows are
   the last pass's, reused as a KV cache reuses them) and an edit at the start (the first
   character changed: every row computed anew);
3. the baseline, in this process on one thread: ``gptembed.gpt.forward`` and ``token_losses`` of
   the same model, text and setting in float64 (median CPU time, ``time.process_time``, of 11
   repeats after 2 warm-ups).

The issue's target is an update well under 100 ms on the project's 2-core machine.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gptembed import corpus  # noqa: E402
from gptembed.gpt import at_length, forward, token_losses  # noqa: E402
from gptembed.gpt_runs import stored_run, stored_scheme_run  # noqa: E402
from tests.book.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.book_site import built_page, require_build  # noqa: E402

CHARS = 256
REPEATS, WARMUP = 11, 2
TEXT = corpus.decode(corpus.held_out_stream()[1000 : 1000 + CHARS])
SETTINGS: list[tuple[str, dict[str, Any]]] = [
    ("text model, rows 0-254 (fresh rows past 127)", {"model": "text"}),
    ("text model from row 64", {"model": "text", "start": 64}),
    ("rotary, window 32, 2 sinks", {"model": "rotary", "window": 32, "sinks": 2}),
    ("alibi", {"model": "alibi"}),
]
KEYSTROKES = [
    ("typing at the end (earlier rows reused)", TEXT[:-1]),
    ("an edit at the start (every row anew)", "X" + TEXT[1:]),
]
"""Each keystroke alternates the text with ``TEXT`` itself."""

TIME_COMPUTE_JS = """([setting, repeats, warmup]) => {
    const times = [];
    for (let i = 0; i < repeats + warmup; i++) {
        const start = performance.now();
        const result = window.gptembedPlayground.compute(setting);
        if (result.error) throw new Error(result.error);
        times.push(performance.now() - start);
    }
    return times.slice(warmup);
}"""

TIME_KEYSTROKE_JS = """async ([text, edited, repeats, warmup]) => {
    const box = document.querySelector('#gp-text');
    const times = [];
    for (let i = 0; i < repeats + warmup; i++) {
        const start = performance.now();
        box.value = i % 2 ? text : edited;
        box.dispatchEvent(new Event('input'));
        await null;  // the mutation observers the update set off run first
        document.body.offsetHeight;  // layout, as the browser must before it paints
        times.push(performance.now() - start);
    }
    if (document.querySelector('#gp-message').textContent) {
        throw new Error(document.querySelector('#gp-message').textContent);
    }
    return times.slice(warmup);
}"""


def numpy_ms(setting: dict[str, Any]) -> float:
    """Median CPU milliseconds of the package's forward pass and losses for ``setting``."""
    key = setting["model"]
    run = stored_run(seed=0, dtype=np.float64) if key == "text" else None
    model = run.model if run else stored_scheme_run(key, seed=0, dtype=np.float64).model
    ids = corpus.encode(TEXT)
    inputs, targets = ids[None, :-1], ids[None, 1:]
    start = setting.get("start", 0)
    rows = start + inputs.shape[1]
    if rows > model.max_seq_len:
        model = at_length(model, rows, "fresh" if model.scheme == "learned" else None, seed=0)
    window = {"window": setting.get("window"), "sinks": setting.get("sinks", 0)}
    times = []
    for _ in range(REPEATS + WARMUP):
        begin = time.process_time()
        forward(model, inputs, start, **window)
        token_losses(model, inputs, targets, start, **window)
        times.append(time.process_time() - begin)
    return 1000 * statistics.median(times[WARMUP:])


def main() -> None:
    from playwright.sync_api import sync_playwright

    require_build()
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}, numpy {np.__version__}"
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(built_page("book/08_absolute_positions").as_uri() + "?passage=")
        print(f"Chromium {browser.version}; {CHARS} characters of held-out text\n")
        print("| setting | page: compute (ms) | numpy forward + losses (ms) | page / numpy |")
        print("| --- | --- | --- | --- |")
        for label, setting in SETTINGS:
            shown = {**setting, "passage": "", "text": TEXT}
            page_ms = statistics.median(page.evaluate(TIME_COMPUTE_JS, [shown, REPEATS, WARMUP]))
            base = numpy_ms(setting)
            print(f"| {label} | {page_ms:.1f} | {base:.1f} | {page_ms / base:.2f} |")
        print(
            f"\nA keystroke in the text (text model, {CHARS} characters: read the controls, "
            "compute, draw, observers, lay out)\n"
        )
        print("| keystroke | median (ms) | fastest to slowest (ms) |")
        print("| --- | --- | --- |")
        for label, edited in KEYSTROKES:
            times = page.evaluate(TIME_KEYSTROKE_JS, [TEXT, edited, REPEATS, WARMUP])
            print(
                f"| {label} | {statistics.median(times):.1f} | "
                f"{min(times):.1f} to {max(times):.1f} |"
            )
        browser.close()


if __name__ == "__main__":
    main()
