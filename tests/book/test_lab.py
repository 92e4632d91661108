"""`./dev lab`: JupyterLab, started as README says, serves every chapter, each the file the book's
download button serves, and a chapter opened in it reads as the book does: the numbers and figure
references that the book's prose fills in are in its rendered markdown, no raw `{glue:text}` or
`{numref}` role is left, and what the page closes (solutions, the cells it hides) is closed.

The server runs with no network (a proxy that is not there) and the browser asks no other host.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import nbformat
import pytest

from _ext.readable_downloads import glued_values
from tests.book_site import BUILD, LOCAL_HOST, ROOT, SCREENSHOTS, require_build

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.toolchain, pytest.mark.browser]

DEV = ROOT / "dev"
TOKEN = "gptembed-test"
CHAPTER = "01_token_plus_position.ipynb"
"""The chapter opened in the browser: its prose cites glued values and a numbered figure."""
ROLE = re.compile(r"\{(?:glue(?::\w+)?|numref|ref|doc)\}`")
NO_NETWORK = "http://127.0.0.1:9"
"""A proxy that is not there: every request through it fails at once."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOCAL_HOST, 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 directly
    with opener.open(request, timeout=5) as response:
        return response.status, response.read()


def _stop(server: subprocess.Popen) -> None:
    """Stop the server's process group: SIGTERM (Jupyter shuts down cleanly), then SIGKILL."""
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``./dev lab`` on a free port, its folder of chapters in a temporary directory: the base
    URL and that folder. Every cell renders as the notebook opens (JupyterLab's windowing off),
    so the whole chapter's prose is in the page."""
    require_build()  # ./dev lab copies the built chapters (and builds them if it must)
    tmp = tmp_path_factory.mktemp("lab")
    settings = tmp / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    proxies = {name: NO_NETWORK for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")}
    env = (
        os.environ
        | proxies
        | {name.lower(): NO_NETWORK for name in proxies}
        | {
            "NO_PROXY": "",
            "GPTEMBED_LAB_DIR": str(tmp / "chapters"),
            "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
            "JUPYTER_CONFIG_DIR": str(tmp / "config"),
            "JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"),
        }
    )
    port = _free_port()
    options = [f"--ip={LOCAL_HOST}", f"--port={port}", "--ServerApp.port_retries=0"]
    server = subprocess.Popen(
        [str(DEV), "lab", "--no-browser", *options, f"--IdentityProvider.token={TOKEN}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    base = f"http://{LOCAL_HOST}:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, f"./dev lab exited: {server.stderr.read()}"
            try:
                status, body = _get(f"{base}/api/status")
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "JupyterLab did not answer within 60 s"
                time.sleep(0.5)
        assert status == 200 and "started" in json.loads(body)
        yield base, tmp / "chapters"
    finally:
        _stop(server)


def test_dev_lab_serves_the_chapters(lab: tuple[str, Path]) -> None:
    """Every chapter is in JupyterLab's file browser, each as the book's download gives it: no
    raw role in any markdown cell."""
    base, folder = lab
    _, listing = _get(f"{base}/api/contents/")
    served = {item["name"] for item in json.loads(listing)["content"]}
    chapters = {path.name for path in (ROOT / "book").glob("*.ipynb")}
    assert chapters <= served, f"not in JupyterLab's file browser: {chapters - served}"
    for name in sorted(chapters):
        markdown = "".join(
            cell.source
            for cell in nbformat.read(folder / name, 4).cells
            if cell.cell_type == "markdown"
        )
        assert not ROLE.search(markdown), f"{name}: {ROLE.search(markdown)}"
    status, page = _get(f"{base}/lab")
    assert status == 200 and b"JupyterLab" in page


def test_dev_lab_copies_the_download(lab: tuple[str, Path]) -> None:
    """The chapters in the lab folder are the files the book's download button serves, byte for
    byte (`_ext/readable_downloads.py` rewrote both; `tests/book/test_built_book.py` reads them)."""
    _, folder = lab
    built = sorted((BUILD / "_sources" / "book").glob("*.ipynb"))
    assert built
    for download in built:
        assert (folder / download.name).read_bytes() == download.read_bytes(), download.name


class Opened(NamedTuple):
    """Chapter 1 as JupyterLab shows it, read once for the tests below."""

    prose: str
    """The text of every rendered markdown cell."""
    summaries: list[tuple[str, bool]]
    """Each `<details>` of the rendered markdown: its summary, and whether it is open."""
    hidden_inputs: int
    """Code cells whose source JupyterLab shows collapsed (a placeholder in its place)."""
    hidden_outputs: int
    """Code cells whose outputs JupyterLab shows collapsed."""
    elsewhere: list[str]
    """Requests to any host but JupyterLab's."""


@pytest.fixture(scope="module")
def opened(browser: Browser, lab: tuple[str, Path]) -> Opened:
    """Chapter 1 opened in JupyterLab, its markdown rendered. A screenshot goes to
    `_build/screenshots/` for a person to look at."""
    base, folder = lab
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    try:
        page = context.new_page()
        page.goto(f"{base}/lab/tree/{CHAPTER}?token={TOKEN}")
        rendered = page.locator(".jp-Notebook .jp-MarkdownCell .jp-RenderedMarkdown")
        rendered.first.wait_for(timeout=60_000)
        # A markdown cell gets its (empty) rendered node first and its text when the markdown
        # parser, loaded on first use, has run: wait for every cell of the chapter and its text.
        page.wait_for_function(
            "(count) => { const cells = "
            "[...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell')]; "
            "return cells.length === count && cells.every((c) => "
            "c.querySelector('.jp-RenderedMarkdown')?.textContent.trim()); }",
            arg=sum(
                cell.cell_type == "markdown" for cell in nbformat.read(folder / CHAPTER, 4)["cells"]
            ),
            timeout=30_000,
        )
        prose = "\n".join(rendered.all_text_contents())
        summaries = page.eval_on_selector_all(
            ".jp-RenderedMarkdown details",
            "(all) => all.map((d) => [d.querySelector('summary')?.textContent ?? '', d.open])",
        )
        cells = ".jp-Notebook .jp-CodeCell"
        hidden_inputs = page.locator(f"{cells}:has(.jp-InputPlaceholder)").count()
        hidden_outputs = page.locator(f"{cells}:has(.jp-OutputPlaceholder)").count()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)  # for a person to look at
        page.screenshot(path=SCREENSHOTS / "lab-01_token_plus_position.jpg", quality=85)
    finally:
        context.close()
    elsewhere = [url for url in requests if not url.startswith((base, "data:", "blob:"))]
    return Opened(
        prose,
        [(text, bool(is_open)) for text, is_open in summaries],
        hidden_inputs,
        hidden_outputs,
        elsewhere,
    )


def test_a_chapter_in_jupyterlab_reads_as_the_book(opened: Opened) -> None:
    """Chapter 1 opened in JupyterLab: the values its prose cites are in the rendered markdown
    (the layer's standard deviation, the toy's sizes), the figure reference reads "Fig. N", and
    no raw role shows; the page asks no host but this one."""
    source = nbformat.read(ROOT / "book" / CHAPTER, 4)
    cited = {
        name: value.strip("'\"")
        for name, value in glued_values(source).items()
        if name in {"init_std", "toy_vocab", "toy_dim", "toy_len"}
    }
    assert len(cited) == 4, cited
    for name, value in cited.items():
        assert value in opened.prose, f"glued {name} ({value}) is not in the rendered prose"
    assert re.search(r"introduction drew these three arrays \(Fig\. \d+\)", opened.prose), (
        "the reference to the intro's figure is not filled in with its number"
    )
    assert not ROLE.search(opened.prose), ROLE.search(opened.prose)
    assert not opened.elsewhere, f"JupyterLab asked other hosts: {opened.elsewhere[:5]}"


def test_a_chapter_in_jupyterlab_hides_what_the_page_hides(
    opened: Opened, lab: tuple[str, Path]
) -> None:
    """Chapter 1 opened in JupyterLab shows what its page shows open, and closes the rest: each
    exercise under its title, each solution in a closed `<details>` under the page's summary,
    and collapsed (JupyterLab honours the copy's metadata) the source of each plumbing or
    solution cell and the outputs of each removed or solution cell."""
    _, folder = lab
    chapter = nbformat.read(folder / CHAPTER, 4)
    code = [cell for cell in chapter.cells if cell.cell_type == "code"]
    sources = sum(cell.metadata.get("jupyter", {}).get("source_hidden", False) for cell in code)
    outputs = sum(cell.metadata.get("collapsed", False) for cell in code)
    assert 0 < outputs <= sources < len(code), (outputs, sources, len(code))
    assert (opened.hidden_inputs, opened.hidden_outputs) == (sources, outputs)
    exercises = sorted(set(re.findall(r"Exercise 1\.\d \([^)]+\)", opened.prose)))
    assert len(exercises) == 3, exercises
    firsts = [text for text, _ in opened.summaries if not text.endswith(", continued")]
    assert firsts == [f"Solution to {exercise}" for exercise in exercises], opened.summaries
    assert not [text for text, is_open in opened.summaries if is_open], "a <details> is open"
