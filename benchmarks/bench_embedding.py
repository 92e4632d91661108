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

VOCAB, DIM, MAX_LEN = 50_257, 768, 1_024  # GPT-2 small
SHAPES = ((1, 1_024), (8, 1_024), (8_192, 1), (65_536, 1))  # (B, T): long rows, many short ones
DTYPES = (np.float32, np.float64)
REPEATS = 11
OLD_BLOCK_BYTES = 768 * 1024


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


def old_forward(layer: GPTStyleEmbedding, ids: NDArray[np.intp]) -> NDArray[np.floating]:
    """``forward`` as it was before position ids: blocks inside each batch row, one row a time.

    Kept here (not in the package) as the baseline the new blocking must not fall behind.
    """
    seq_len = ids.shape[-1]
    out = np.empty((*ids.shape, layer.embed_dim), dtype=layer.dtype)
    positions = layer.position_embeddings[:seq_len]  # (T, D)
    block = max(1, OLD_BLOCK_BYTES // (layer.embed_dim * layer.dtype.itemsize))
    rows_out = out.reshape(-1, seq_len, layer.embed_dim)
    for ids_row, out_row in zip(ids.reshape(-1, seq_len), rows_out, strict=True):
        for s in range(0, seq_len, block):
            dst = out_row[s : s + block]
            np.take(layer.token_embeddings, ids_row[s : s + block], axis=0, out=dst, mode="clip")
            dst += positions[s : s + block]
    return out


def forward_row(layer: GPTStyleEmbedding, ids: NDArray[np.intp], have_torch: bool) -> list[str]:
    """One table row: forward against plain numpy, the old forward, the copy floor and torch."""
    wte, wpe = layer.token_embeddings, layer.position_embeddings
    positions = np.arange(ids.shape[-1])  # (T,)
    position_ids = np.broadcast_to(positions, ids.shape).copy()  # (B, T), as a padded batch has
    out = layer.forward(ids)  # (B, T, D)
    src, dst = np.ones_like(out), np.empty_like(out)
    fns: dict[str, Callable[[], object]] = {
        "forward": lambda: layer.forward(ids),
        "plain": lambda: wte[ids] + wpe[positions],  # two full-size arrays
        "old": lambda: old_forward(layer, ids),
        "copyto": lambda: np.copyto(dst, src),  # the memory floor: out's bytes once each way
        "by ids": lambda: layer.forward(ids, position_ids=position_ids),
        "plain by ids": lambda: wte[ids] + wpe[position_ids],
    }
    if have_torch:
        fns["torch"] = torch_forward(layer, ids)
    t = median_seconds(fns)
    peak = peak_bytes(lambda: layer.forward(ids)) / out.nbytes
    shape = f"({ids.shape[0]}, {ids.shape[1]})"
    times = [f"{t[name] * 1e3:.2f}" for name in ("forward", "plain", "old")]
    ratios = [t["forward"] / t[name] for name in ("plain", "old", "copyto")]
    ratios.append(t["by ids"] / t["plain by ids"])
    cells = [f"{r:.2f}" for r in ratios]
    cells.append(f"{t['forward'] / t['torch']:.2f}" if have_torch else "-")
    size = f"{out.nbytes / 2**20:.0f}"
    return [layer.dtype.name, shape, size, *times, *cells, f"{peak:.3f}"]


def add_at_backward(
    layer: GPTStyleEmbedding, grad: NDArray[np.floating], ids: NDArray[np.intp]
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """The baseline backward: ``np.add.at`` scatter-add, and the position gradient's batch sum."""
    grad_token = np.zeros_like(layer.token_embeddings)
    np.add.at(grad_token, ids.reshape(-1), grad.reshape(-1, layer.embed_dim))
    grad_position = np.zeros_like(layer.position_embeddings)
    grad_position[: ids.shape[-1]] = grad.reshape(-1, ids.shape[-1], layer.embed_dim).sum(axis=0)
    return grad_token, grad_position


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
    print(f"V={VOCAB}, D={DIM}, L={MAX_LEN}; medians of {REPEATS} interleaved repeats, in ms\n")
    have_torch = importlib.util.find_spec("torch") is not None
    rng = np.random.default_rng(0)
    forward_rows, backward_rows = [], []
    for dtype in DTYPES:
        layer = GPTStyleEmbedding(VOCAB, MAX_LEN, DIM, seed=0, dtype=dtype)
        for shape in SHAPES:
            ids = rng.integers(0, VOCAB, size=shape)  # (B, T)
            forward_rows.append(forward_row(layer, ids, have_torch))
            if shape[-1] == MAX_LEN:
                backward_rows.append(backward_row(layer, ids, seed=shape[0]))

    print("Forward: ratios are forward time / baseline time (below 1: forward is faster);")
    print("by-ids/plain is forward with (B, T) position_ids / wte[ids] + wpe[position_ids];")
    print("peak/out is the peak extra memory of one forward call / the output's bytes.")
    print_table(
        [
            "dtype", "shape", "out MiB", "forward", "plain", "old",
            "fwd/plain", "fwd/old", "fwd/copyto", "by-ids/plain", "fwd/torch", "peak/out",
        ],
        forward_rows,
    )  # fmt: skip
    print("\nBackward (both tables' gradients): ratio is backward time / np.add.at baseline time.")
    print_table(["dtype", "B", "backward", "add.at", "bwd/add.at"], backward_rows)
    if not have_torch:
        print("\nNote: torch is not importable, so the fwd/torch column is skipped.")


def print_table(header: list[str], rows: list[list[str]]) -> None:
    """A Markdown table, columns padded to their widest cell."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    for row in [header, ["-" * w for w in widths], *rows]:
        print("| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + " |")


if __name__ == "__main__":
    main()
