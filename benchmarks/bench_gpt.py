"""One training step of the small GPT (forward and backward) for each position scheme: its time,
where the time goes, and the same step in PyTorch on the CPU where torch is installed.

Run by hand (not part of pytest): ``python benchmarks/bench_gpt.py``. Two sizes, each with every
scheme of :data:`gptembed.positions.SCHEMES` (``GPTConfig.scheme``), on one batch of training
windows: chapter 10's scheme comparison (``tools/train_lm.py --scheme``: 2 blocks of 4 heads,
width 64, a batch of 32 windows of 64 characters) and the stored model of chapter 7
(``gptembed.gpt_runs.stored_run(seed=0).config``: the same at 128 characters).

1. The numpy step, ``loss_and_grads``, in float32 as the models train: the median CPU time
   (``time.process_time``) of several timed steps.
2. Its shares, from profiled steps (cProfile's cumulative time of the functions each part is made
   of; profiling adds a little time of its own): attention (the heads and their two projections,
   forward and backward), the MLP (both matrices and the GELU), the embedding layer (the lookup
   ``_kernels.gather_add`` and its gradients ``_lookup.table_grads``), the LayerNorms, and the rest
   (the output head, the loss and the bookkeeping); and, within attention, the scheme's own position
   work (``positions.rotate``, ALiBi's slopes and distances). For a step slower than ``TARGET``
   times torch's, the functions that take the most time of their own.
3. The same step in torch on the CPU, the baseline a reader would reach for: the same weights,
   a pre-LayerNorm block written as nanoGPT writes it (``F.scaled_dot_product_attention``, the
   tanh GELU, a tied head), the loss and ``loss.backward()``, with the scheme written as torch
   code of its own, not numpy's: the position table added to the token rows (``"learned"``,
   trained; ``"sinusoidal"`` and ``"none"``, fixed); each head's queries and keys rotated by
   position (``"rotary"``: the pairs ``(2i, 2i + 1)`` at frequencies ``base**(-2i / H)``, as
   ``positions.rotate``); or an additive float ``attn_mask``, ``-m_h * (i - j)`` with the causal
   mask folded in as ``-inf`` (``"alibi"``). The ratio is numpy's time over torch's. Without
   torch this part is skipped, saying so.
4. Before timing, a check that the two compute the same thing: the loss and every trained
   gradient of both, on the same weights and batch, in float32 (the timed models) and in float64.
   The weights are ``init_model``'s with every LayerNorm and bias moved off its initial 1 or 0
   and larger queries and keys (``model_of``), so that every array matters. The script stops if
   they disagree by more than ``TOLERANCE``: a torch step with the wrong scheme (rotary or ALiBi
   run as none) is off by 2e-4 in the loss and 0.1 in the gradients.

Both run on one thread, as ``tools/train_lm.py`` trains (BLAS's thread count is set below, before
numpy loads; torch's with ``torch.set_num_threads(1)``): on a machine whose two cores are shared,
a second BLAS thread mostly waits for the other jobs. Their repeats alternate, so that a change
of load reaches both alike.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import cProfile  # noqa: E402
import functools  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from dataclasses import dataclass, replace  # noqa: E402
from types import ModuleType  # noqa: E402

import numpy as np  # noqa: E402
from bench_embedding import cpu_model  # noqa: E402  # run as a script, benchmarks/ is on the path

from gptembed.corpus import random_passages, train_stream  # noqa: E402
from gptembed.gpt import GPT, init_model, loss_and_grads  # noqa: E402
from gptembed.gpt_config import GPTConfig  # noqa: E402
from gptembed.gpt_runs import stored_run  # noqa: E402
from gptembed.positions import SCHEMES, Scheme, alibi_slopes  # noqa: E402

REPEATS = 11
TARGET = 2.0
"""numpy's step should take at most this many times torch's."""

PARTS = {  # each part's functions, as (file, function)
    "attention": (("gpt.py", "_attention"), ("gpt.py", "attention")),  # forward, backward
    "MLP": (("gpt.py", "_mlp"), ("gpt.py", "mlp")),
    "embedding layer": (("_kernels.py", "gather_add"), ("_lookup.py", "table_grads")),
    "LayerNorms": (("_transformer.py", "layer_norm"), ("_transformer.py", "layer_norm_backward")),
}
POSITION_WORK = (
    ("positions.py", "rotate"),
    ("positions.py", "alibi_slopes"),
    ("_transformer.py", "key_distance"),
)
"""The scheme's own work inside attention (part of the attention share, not besides it)."""

TOLERANCE = {"float32": 1e-5, "float64": 1e-10}
"""The largest relative difference between numpy's and torch's loss, and between their gradients
(the largest difference over an array's largest entry), that passes as the same computation."""


def comparison_config(scheme: Scheme) -> GPTConfig:
    """The sizes of chapter 10's scheme runs (``tools/train_lm.py --scheme``)."""
    return GPTConfig(seq_len=64, n_layers=2, n_heads=4, embed_dim=64, batch_size=32, scheme=scheme)


def configs() -> Iterator[GPTConfig]:
    """Every scheme at the comparison's sizes, then at the stored model's."""
    stored = stored_run(seed=0).config
    for scheme in SCHEMES:
        yield comparison_config(scheme)
    for scheme in SCHEMES:
        yield replace(stored, scheme=scheme)


def model_of(config: GPTConfig) -> GPT:
    """``init_model(config)`` with LayerNorm gains and every bias drawn away from 1 and 0, and
    the query, key and value map five times as large, so that attention is far from uniform and
    position moves the loss (at init's weights, torch with no position scheme matched numpy's
    rotary loss to 3e-6); the position table stays the scheme's (learned, sinusoidal or zeros).
    The values change no time: only the sizes do."""
    model = init_model(config)
    model.w_attn[...] *= 5.0
    rng = np.random.default_rng(1)
    for name, array in model.parameters().items():
        if name.endswith("_gain"):
            array += 0.1 * rng.standard_normal(array.shape)
        elif name.startswith("b_") or name.endswith("_bias"):
            array += 0.02 * rng.standard_normal(array.shape)
    return model


def as_dtype(model: GPT, config: GPTConfig, dtype: str) -> GPT:
    """A copy of ``model`` in ``dtype``: the same weights, rounded if need be."""
    copy = init_model(replace(config, dtype=dtype))
    for name, array in copy.parameters().items():
        array[...] = model.parameters()[name]
    return copy


def _seconds(step: Callable[[], object]) -> float:
    """The CPU time of one call (both run on one thread): time spent waiting for a core that
    other jobs hold does not count, as wall time would."""
    start = time.process_time()
    step()
    return time.process_time() - start


def _label(file: str, name: str) -> tuple[str, str]:
    return os.path.basename(file), name


def _profile(model: GPT, inputs: np.ndarray, targets: np.ndarray) -> pstats.Stats:
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(REPEATS):
        loss_and_grads(model, inputs, targets)
    profile.disable()
    return pstats.Stats(profile)


def _shares(stats: pstats.Stats) -> dict[str, float]:
    """Each part's share of profiled steps, by the cumulative time of its functions; the last
    entry is the scheme's position work, which the attention share already holds."""
    entries = stats.stats  # type: ignore[attr-defined]
    total = next(v[3] for (_, _, name), v in entries.items() if name == "loss_and_grads")

    def seconds(functions: tuple[tuple[str, str], ...]) -> float:
        return sum(
            cumulative
            for (file, _, name), (_, _, _, cumulative, _) in entries.items()
            if _label(file, name) in functions
        )

    shares = {part: seconds(functions) / total for part, functions in PARTS.items()}
    shares["the rest"] = 1.0 - sum(shares.values())
    shares["position work"] = seconds(POSITION_WORK) / total
    return shares


def _top_functions(stats: pstats.Stats, n: int = 8) -> list[str]:
    """The ``n`` functions that take the most time of their own, as lines of text."""
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in entries.values())
    rows = sorted(entries.items(), key=lambda item: -item[1][2])[:n]
    return [
        f"    {own / total:6.1%} own, {cumulative / total:6.1%} cumulative, {calls:5d} calls: "
        f"{name} ({os.path.basename(file)}:{line})"
        for (file, line, name), (_, calls, own, cumulative, _) in rows
    ]


@dataclass
class TorchStep:
    """The torch step of one model: ``step()`` runs it and returns the loss; the gradients are
    then in ``params[name].grad`` for the ``params`` that train."""

    step: Callable[[], float]
    params: dict[str, object]


def torch_step(torch: ModuleType, model: GPT, inputs: np.ndarray, targets: np.ndarray) -> TorchStep:
    """One forward and backward step of ``model``'s computation in torch, in its dtype."""
    F = torch.nn.functional
    dtype = torch.float64 if model.embedding.dtype == np.float64 else torch.float32
    scheme = model.scheme

    def tensor(name: str, array: np.ndarray) -> object:
        trains = name != "position_embeddings" or scheme == "learned"
        return torch.tensor(array, dtype=dtype, requires_grad=trains)

    params = {name: tensor(name, array) for name, array in model.parameters().items()}
    ids = torch.tensor(inputs, dtype=torch.long)
    y = torch.tensor(targets, dtype=torch.long)
    batch, seq_len = inputs.shape
    dim, n_heads, head = model.embedding.embed_dim, model.n_heads, model.head_dim
    t = torch.arange(seq_len, dtype=torch.float64)
    # rotary: the angle t * base**(-2i / H) of pair (2i, 2i + 1) of a head at position t
    angles = t[:, None] * model.rotary_base ** (-torch.arange(0, head, 2).double() / head)
    sin, cos = angles.sin().to(dtype), angles.cos().to(dtype)  # (T, H/2)
    # alibi: -m_h * (i - j) for query i and key j <= i, -inf for the keys in the future. A mask
    # with a heads axis costs torch's CPU attention about twice what (T, T) or is_causal does: that
    # is ALiBi's price in torch, so the baseline pays it.
    distance = t[:, None] - t[None, :]  # (T, T), i - j
    slopes = torch.tensor(alibi_slopes(n_heads))[:, None, None]  # (nh, 1, 1)
    alibi = (-slopes * distance).masked_fill(distance < 0, float("-inf")).to(dtype)

    def rotate(a: object) -> object:  # (B, nh, T, H), each pair turned by its angle
        even, odd = a[..., 0::2], a[..., 1::2]
        return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)

    def step() -> float:
        p = params
        x = p["token_embeddings"][ids]
        if scheme in ("learned", "sinusoidal", "none"):
            x = x + p["position_embeddings"][:seq_len]
        for layer in range(model.n_layers):
            h = F.layer_norm(x, (dim,), p["ln1_gain"][layer], p["ln1_bias"][layer], 1e-5)
            q, k, v = (h @ p["w_attn"][layer] + p["b_attn"][layer]).split(dim, dim=-1)
            q, k, v = (a.view(batch, seq_len, n_heads, head).transpose(1, 2) for a in (q, k, v))
            if scheme == "rotary":
                q, k = rotate(q), rotate(k)
            if scheme == "alibi":
                heads = F.scaled_dot_product_attention(q, k, v, attn_mask=alibi)
            else:
                heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            heads = heads.transpose(1, 2).reshape(batch, seq_len, dim)
            x = x + heads @ p["w_attn_proj"][layer] + p["b_attn_proj"][layer]
            h = F.layer_norm(x, (dim,), p["ln2_gain"][layer], p["ln2_bias"][layer], 1e-5)
            h = F.gelu(h @ p["w_fc"][layer] + p["b_fc"][layer], approximate="tanh")
            x = x + h @ p["w_mlp_proj"][layer] + p["b_mlp_proj"][layer]
        x = F.layer_norm(x, (dim,), p["lnf_gain"], p["lnf_bias"], 1e-5)
        logits = x @ p["token_embeddings"].T
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
        for tensor_ in params.values():
            tensor_.grad = None
        loss.backward()
        return float(loss.detach())

    return TorchStep(step, params)


def agreement(
    torch: ModuleType, model: GPT, inputs: np.ndarray, targets: np.ndarray
) -> tuple[float, float]:
    """``(loss, gradients)``: the relative difference of torch's loss from numpy's, and the
    largest over the trained arrays of ``max |torch - numpy| / max |numpy|``."""
    loss, grads = loss_and_grads(model, inputs, targets)
    ours = torch_step(torch, model, inputs, targets)
    their_loss = ours.step()
    worst = 0.0
    for name, param in ours.params.items():
        if param.grad is not None:  # type: ignore[attr-defined]
            theirs = param.grad.double().numpy()  # type: ignore[attr-defined]
            worst = max(worst, np.abs(theirs - grads[name]).max() / np.abs(grads[name]).max())
    return abs(their_loss - loss) / abs(loss), float(worst)


def main() -> None:
    try:
        import torch
    except ImportError:
        torch = None
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    versions = f"Python {platform.python_version()}, numpy {np.__version__}"
    if torch is not None:
        torch.set_num_threads(1)
        versions += f", torch {torch.__version__} on {torch.get_num_threads()} thread"
    print(versions)
    print("load average at the start {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    print(
        f"One training step, float32: a batch of 32 windows, 2 blocks of 4 heads, width 64; "
        f"median CPU time of {REPEATS} alternating repeats; {TARGET:g}x is the target for "
        "numpy / torch\n"
    )
    if torch is None:
        print("torch comparison skipped: torch is not installed (pip install torch to compare)\n")

    rows, shares, slow = [], [], []
    for config in configs():
        model = model_of(config)
        inputs, targets = random_passages(train_stream(), config.batch_size, config.seq_len, seed=0)
        steps: dict[str, Callable[[], object]] = {
            "numpy": functools.partial(loss_and_grads, model, inputs, targets)
        }
        checks = ["-"] * 4
        if torch is not None:
            # Same computation: loss and gradients of both, on the same weights and batch.
            for i, dtype in enumerate(("float32", "float64")):
                loss_diff, grad_diff = agreement(
                    torch, as_dtype(model, config, dtype), inputs, targets
                )
                checks[i], checks[2 + i] = f"{loss_diff:.1e}", f"{grad_diff:.1e}"
                if max(loss_diff, grad_diff) > TOLERANCE[dtype]:
                    sys.exit(
                        f"{config.scheme}, seq_len {config.seq_len}, {dtype}: torch and numpy "
                        f"disagree (loss {loss_diff:.1e}, gradients {grad_diff:.1e} relative, "
                        f"more than {TOLERANCE[dtype]:.0e})"
                    )
            steps["torch"] = torch_step(torch, model, inputs, targets).step
        for step in steps.values():
            step()  # warm up
        # Alternate the two, so a change in the machine's load reaches both alike.
        times: dict[str, list[float]] = {name: [] for name in steps}
        for _ in range(REPEATS):
            for name, step in steps.items():
                times[name].append(_seconds(step))
        ms = {name: statistics.median(t) * 1000 for name, t in times.items()}
        ratio = ms["numpy"] / ms["torch"] if "torch" in ms else float("nan")
        within = "-" if "torch" not in ms else "yes" if ratio <= TARGET else "no"
        torch_ms = f"{ms['torch']:.0f}" if "torch" in ms else "-"
        rows.append(
            f"| {config.scheme} | {config.seq_len} | {ms['numpy']:.0f} | {torch_ms} | "
            f"{ratio:.2f} | {within} | " + " | ".join(checks) + " |"
        )
        stats = _profile(model, inputs, targets)
        parts = _shares(stats)
        shares.append(
            f"| {config.scheme} | {config.seq_len} | "
            + " | ".join(f"{share:.0%}" for share in parts.values())
            + " |"
        )
        if ratio > TARGET:
            slow.append(
                f"{config.scheme}, seq_len {config.seq_len} (numpy / torch {ratio:.2f}), "
                "the functions that take the most time of their own in profiled steps:\n"
                + "\n".join(_top_functions(stats))
            )
        print(f"  measured {config.scheme}, seq_len {config.seq_len}", file=sys.stderr)

    print(
        "| scheme | T | numpy ms | torch ms | numpy / torch | within 2x | "
        "loss diff float32 | float64 | gradient diff float32 | float64 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    print(
        "\nloss diff: |torch - numpy| / |numpy|; gradient diff: the largest over the trained "
        "arrays of max |torch - numpy| / max |numpy|\n"
    )
    print("Shares of the numpy step (position work is part of attention):\n")
    print("| scheme | T | " + " | ".join(parts) + " |")
    print("| --- | --- |" + " --- |" * len(parts))
    print("\n".join(shares))
    for text in slow:
        print(f"\n{text}")
    print("\nload average at the end {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
