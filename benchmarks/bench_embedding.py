"""Time and memory of ``GPTStyleEmbedding`` at GPT-2 small sizes against its baselines.

Run by hand (not part of pytest): ``python benchmarks/bench_embedding.py``. Every time is the
median CPU time (``time.process_time``: page faults count, time spent descheduled by other
processes does not) of interleaved repeats after a warm-up, all measured in this one process, so
each ratio compares numbers taken on the same machine under the same load. Ratios are
``ours / theirs``: below 1 means the layer is faster.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from gptembed import GPTStyleEmbedding, peak_bytes

VOCAB, DIM, SEQ_LEN = 50_257, 768, 1_024  # GPT-2 small
BATCHES = (1, 8)
DTYPES = (np.float32, np.float64)
REPEATS = 15


def cpu_model() -> str:
    """The ``model name`` line of /proc/cpuinfo, or the platform's processor string."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def blas_info() -> str:
    """Name, version and configuration of the BLAS numpy was built against."""
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    config = " ".join(str(blas.get("openblas configuration", "")).split())
    return f"{blas.get('name')} {blas.get('version')} {config}".strip()


def print_machine() -> None:
    """The machine and software the numbers below were measured on."""
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    print(f"Python {platform.python_version()}, numpy {np.__version__}, BLAS: {blas_info()}")
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    print(f"OPENBLAS_CORETYPE={coretype}" if coretype else "OPENBLAS_CORETYPE unset", end=", ")
    print("load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


def median_seconds(fns: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Median CPU time of each function: two warm-up calls, then ``REPEATS`` interleaved rounds.

    Interleaving (every function once per round) spreads any background load over all of them.
    """
    for fn in fns.values():
        fn()
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(REPEATS):
        for name, fn in fns.items():
            start = time.process_time()
            fn()
            times[name].append(time.process_time() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def torch_forward(layer: GPTStyleEmbedding, ids: NDArray[np.intp]) -> Callable[[], object]:
    """``nn.Embedding`` lookups plus add on the layer's own tables, on one thread like numpy."""
    import torch

    torch.set_num_threads(1)
    tok = torch.nn.Embedding.from_pretrained(torch.from_numpy(layer.token_embeddings))
    pos = torch.nn.Embedding.from_pretrained(torch.from_numpy(layer.position_embeddings))
    ids_t = torch.from_numpy(ids)  # (B, T)
    positions = torch.arange(ids.shape[-1])  # (T,)

    def run() -> object:
        with torch.no_grad():
            return tok(ids_t) + pos(positions)

    return run


def add_at_backward(
    layer: GPTStyleEmbedding, grad: NDArray[np.floating], ids: NDArray[np.intp]
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """The baseline backward: ``np.add.at`` scatter-add, and the position gradient's batch sum."""
    grad_token = np.zeros_like(layer.token_embeddings)
    np.add.at(grad_token, ids.reshape(-1), grad.reshape(-1, layer.embed_dim))
    grad_position = np.zeros_like(layer.position_embeddings)
    grad_position[: ids.shape[-1]] = grad.reshape(-1, ids.shape[-1], layer.embed_dim).sum(axis=0)
    return grad_token, grad_position


def forward_row(layer: GPTStyleEmbedding, ids: NDArray[np.intp], have_torch: bool) -> list[str]:
    """One table row: forward against the straightforward version, the copy floors and torch."""
    wte, wpe = layer.token_embeddings, layer.position_embeddings
    out = layer.forward(ids)  # (B, T, D)
    src, dst = np.ones_like(out), np.empty_like(out)
    fns: dict[str, Callable[[], object]] = {
        "forward": lambda: layer.forward(ids),
        "naive": lambda: wte[ids] + wpe[np.arange(ids.shape[-1])],  # three full-size arrays
        "copyto": lambda: np.copyto(dst, src),  # the memory floor: read and write out's bytes
        "copy": src.copy,  # the same plus allocating a new output, as forward must
    }
    if have_torch:
        fns["torch"] = torch_forward(layer, ids)
    t = median_seconds(fns)
    peak = peak_bytes(lambda: layer.forward(ids)) / out.nbytes
    baselines = ["naive", "copyto", "copy", "torch"] if have_torch else ["naive", "copyto", "copy"]
    times = [f"{t[name] * 1e3:.2f}" for name in ["forward", *baselines]]
    ratios = [f"{t['forward'] / t[name]:.2f}" for name in baselines]
    if not have_torch:
        times, ratios = [*times, "-"], [*ratios, "-"]
    size = f"{out.nbytes / 2**20:.0f}"
    return [layer.dtype.name, str(ids.shape[0]), size, *times, *ratios, f"{peak:.3f}"]


def backward_row(layer: GPTStyleEmbedding, ids: NDArray[np.intp], seed: int) -> list[str]:
    """One table row: backward against the ``np.add.at`` baseline."""
    rng = np.random.default_rng(seed)
    grad = rng.standard_normal((*ids.shape, layer.embed_dim)).astype(layer.dtype)  # (B, T, D)
    t = median_seconds(
        {
            "backward": lambda: layer.backward(grad, ids),
            "add.at": lambda: add_at_backward(layer, grad, ids),
        }
    )
    times = [f"{t[name] * 1e3:.2f}" for name in ("backward", "add.at")]
    return [layer.dtype.name, str(ids.shape[0]), *times, f"{t['backward'] / t['add.at']:.2f}"]


def main() -> None:
    print_machine()
    print(f"V={VOCAB}, D={DIM}, T={SEQ_LEN}; medians of {REPEATS} interleaved repeats, in ms\n")
    have_torch = importlib.util.find_spec("torch") is not None
    rng = np.random.default_rng(0)
    forward_rows, backward_rows = [], []
    for dtype in DTYPES:
        layer = GPTStyleEmbedding(VOCAB, SEQ_LEN, DIM, seed=0, dtype=dtype)
        for batch in BATCHES:
            ids = rng.integers(0, VOCAB, size=(batch, SEQ_LEN))  # (B, T)
            forward_rows.append(forward_row(layer, ids, have_torch))
            backward_rows.append(backward_row(layer, ids, seed=batch))

    print("Forward: ratios are forward time / baseline time; peak/out is the peak extra memory")
    print("of one forward call (tracemalloc) / the output's bytes.")
    print_table(
        [
            "dtype", "B", "out MiB", "forward", "naive", "copyto", "copy", "torch",
            "fwd/naive", "fwd/copyto", "fwd/copy", "fwd/torch", "peak/out",
        ],
        forward_rows,
    )  # fmt: skip
    print("\nBackward (both tables' gradients): ratio is backward time / np.add.at baseline time.")
    print_table(["dtype", "B", "backward", "add.at", "bwd/add.at"], backward_rows)
    if not have_torch:
        print("\nNote: torch is not importable, so the torch columns are skipped.")


def print_table(header: list[str], rows: list[list[str]]) -> None:
    """A Markdown table, columns padded to their widest cell."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    for row in [header, ["-" * w for w in widths], *rows]:
        print("| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + " |")


if __name__ == "__main__":
    main()
