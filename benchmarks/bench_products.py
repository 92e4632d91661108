"""The toy models' matrix products: ``@`` against ``np.einsum``, and the thread count's effect.

Run by hand (not part of pytest): ``python benchmarks/bench_products.py``; about half a minute.

1. Time: every product of one training step of each toy model, at the book's sizes, written as
   the models write it (``@``, which numpy hands to BLAS) and as ``np.einsum`` (numpy's own
   loops, never BLAS). Medians of interleaved repeats, CPU time; ratio ``einsum / @``.
2. Bits: each model's ``train`` at the book's default config, in a fresh process per thread
   count (``OPENBLAS_NUM_THREADS`` = 1, 2, 4, 8), and a hash of the trained arrays. One hash per
   model means the thread count does not change a single bit.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

from gptembed.attention_model import AttentionConfig
from gptembed.readout import ReadoutConfig
from gptembed.records import VOCAB_SIZE

REPEATS = 51
THREADS = (1, 2, 4, 8)

Product = tuple[str, Callable[..., np.ndarray], tuple[int, ...], tuple[int, ...]]


def readout_products(c: ReadoutConfig) -> list[Product]:
    """One step of the read-out model: (einsum subscripts, the model's ``@``, shapes)."""
    b, t, d, v = c.batch_size, c.seq_len, c.embed_dim, VOCAB_SIZE
    return [
        ("btd,dv->btv", lambda x, w: x @ w, (b, t, d), (d, v)),  # logits
        ("nd,nv->dv", lambda x, g: x.T @ g, (b * t, d), (b * t, v)),  # weight's gradient
        ("btv,dv->btd", lambda g, w: g @ w.T, (b, t, v), (d, v)),  # input's gradient
    ]


def attention_products(c: AttentionConfig) -> list[Product]:
    """One step of the attention model: (einsum subscripts, the model's ``@``, shapes)."""
    b, t, d, h, v = c.batch_size, c.seq_len, c.embed_dim, c.head_dim, c.vocab_size
    matmul = np.matmul
    return [
        *[("btd,dh->bth", matmul, (b, t, d), (d, h))] * 3,  # q, k, v
        ("bih,bjh->bij", lambda q, k: q @ k.swapaxes(-1, -2), (b, t, h), (b, t, h)),  # scores
        ("bij,bjh->bih", matmul, (b, t, t), (b, t, h)),  # probs @ v
        ("bth,hv->btv", matmul, (b, t, h), (h, v)),  # logits
        ("nh,nv->hv", lambda o, g: o.T @ g, (b * t, h), (b * t, v)),  # w_out's gradient
        ("btv,hv->bth", lambda g, w: g @ w.T, (b, t, v), (h, v)),  # dout
        ("bih,bjh->bij", lambda g, x: g @ x.swapaxes(-1, -2), (b, t, h), (b, t, h)),  # dprobs
        *[("bij,bih->bjh", lambda p, g: p.swapaxes(-1, -2) @ g, (b, t, t), (b, t, h))] * 2,
        ("bij,bjh->bih", matmul, (b, t, t), (b, t, h)),  # dq
        *[("bth,dh->btd", lambda g, w: g @ w.T, (b, t, h), (d, h))] * 3,  # dx
        *[("nd,nh->dh", lambda x, g: x.T @ g, (b * t, d), (b * t, h))] * 3,  # projections' grads
    ]


def step_seconds(products: list[Product]) -> dict[str, float]:
    """Median CPU time of all the products of one step, each way, interleaved."""
    rng = np.random.default_rng(0)
    arrays = [(rng.standard_normal(a), rng.standard_normal(b)) for _, _, a, b in products]
    for (subscripts, product, _, _), (a, b) in zip(products, arrays, strict=True):
        np.testing.assert_allclose(np.einsum(subscripts, a, b), product(a, b), rtol=1e-10)
    pairs = list(zip(products, arrays, strict=True))
    ways = {
        "@": lambda: [product(a, b) for (_, product, _, _), (a, b) in pairs],
        "einsum": lambda: [np.einsum(s, a, b) for (s, _, _, _), (a, b) in pairs],
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(REPEATS):
        for name, way in ways.items():
            start = time.process_time()
            for _ in range(20):
                way()
            times[name].append((time.process_time() - start) / 20)
    return {name: statistics.median(ts) for name, ts in times.items()}


TRAIN_AND_HASH = """
import hashlib
from gptembed import attention_model, readout
for module, config in ((readout, readout.ReadoutConfig()),
                       (attention_model, attention_model.AttentionConfig())):
    arrays = module.train(config).model.parameters().values()
    print(hashlib.sha256(b"".join(a.tobytes() for a in arrays)).hexdigest()[:16])
"""


def trained_hashes(threads: int) -> list[str]:
    """Each model's hash after ``train`` in a fresh process with ``threads`` BLAS threads."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    run = [sys.executable, "-c", TRAIN_AND_HASH]
    return subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout.split()


def main() -> None:
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    print(f"numpy {np.__version__}, BLAS {blas.get('name')} {blas.get('version')}, ", end="")
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}\n")
    print("| model | products per step | @ (ms) | einsum (ms) | einsum / @ |")
    print("| --- | --- | --- | --- | --- |")
    for name, products in (
        ("read-out", readout_products(ReadoutConfig())),
        ("attention", attention_products(AttentionConfig())),
    ):
        t = step_seconds(products)
        row = f"| {name} | {len(products)} | {t['@'] * 1e3:.3f} | {t['einsum'] * 1e3:.3f} |"
        print(f"{row} {t['einsum'] / t['@']:.2f} |")
    print("\n| BLAS threads | read-out hash | attention hash |\n| --- | --- | --- |")
    hashes = {threads: trained_hashes(threads) for threads in THREADS}
    for threads, (ours, theirs) in hashes.items():
        print(f"| {threads} | {ours} | {theirs} |")
    same = len({tuple(h) for h in hashes.values()}) == 1
    print(f"\nthe same bits at every thread count: {same}")


if __name__ == "__main__":
    main()
