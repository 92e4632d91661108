"""One training step of the small GPT (forward and backward): its time, where the time goes, and
the same step in PyTorch on the CPU where torch is installed.

Run by hand (not part of pytest): ``python benchmarks/bench_gpt.py``. The sizes are those of the
stored model (``gptembed.gpt.stored_run(seed=0).config``), on one batch of training windows.

1. The numpy step, ``loss_and_grads``: the median of several timed steps.
2. Its shares, from profiled steps (cProfile's cumulative time of the functions each part is
   made of; profiling adds a little time of its own): attention (the heads and their two
   projections, forward and backward), the MLP (both matrices and the GELU), the embedding layer
   (``GPTStyleEmbedding.forward`` and ``backward``), the LayerNorms, and the rest (the output
   head, the loss and the bookkeeping).
3. The same step in torch on the CPU, the baseline a reader would reach for: the same weights,
   a pre-LayerNorm block written as nanoGPT writes it (``F.scaled_dot_product_attention`` with
   ``is_causal=True``, the tanh GELU, a tied head), the loss and ``loss.backward()``. The ratio
   is numpy's time over torch's. Without torch this part is skipped, saying so.

Both run on one thread, as ``tools/train_lm.py`` trains (BLAS's thread count is set below, before
numpy loads; torch's with ``torch.set_num_threads(1)``): on a machine whose two cores are shared,
a second BLAS thread mostly waits for the other jobs.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import cProfile  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from gptembed.corpus import random_windows, train_stream  # noqa: E402
from gptembed.gpt import GPT, init_model, loss_and_grads, stored_run  # noqa: E402

REPEATS = 7
PARTS = {
    "attention": ("_attention", "attention"),  # the forward function, the backward method
    "MLP": ("_mlp", "mlp"),
    "embedding layer": ("forward (embedding.py)", "backward (embedding.py)"),
    "LayerNorms": ("_layer_norm", "_layer_norm_backward"),
}


def _seconds(step: Callable[[], object]) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def _shares(model: GPT, inputs: np.ndarray, targets: np.ndarray) -> dict[str, float]:
    """Each part's share of profiled steps, by the cumulative time of its functions."""
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(REPEATS):
        loss_and_grads(model, inputs, targets)
    profile.disable()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = next(v[3] for (file, _, name), v in stats.items() if name == "loss_and_grads")
    shares = {}
    for part, names in PARTS.items():
        seconds = 0.0
        for (file, _, name), (_, _, _, cumulative, _) in stats.items():
            label = f"{name} (embedding.py)" if file.endswith("embedding.py") else name
            if label in names:
                seconds += cumulative
        shares[part] = seconds / total
    shares["the rest (head, loss, bookkeeping)"] = 1.0 - sum(shares.values())
    return shares


def _torch_step(model: GPT, inputs: np.ndarray, targets: np.ndarray) -> Callable[[], float] | str:
    """One forward and backward step in torch as a function, or why there is none."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return "torch is not installed (pip install torch to compare)"

    torch.set_num_threads(1)

    def tensor(array: np.ndarray) -> torch.Tensor:
        return torch.tensor(array, dtype=torch.float32, requires_grad=True)

    params = {name: tensor(array) for name, array in model.parameters().items()}
    ids = torch.tensor(inputs, dtype=torch.long)
    y = torch.tensor(targets, dtype=torch.long)
    batch, seq_len = inputs.shape
    dim, n_heads = model.embedding.embed_dim, model.n_heads

    def step() -> float:
        p = params
        x = p["token_embeddings"][ids] + p["position_embeddings"][:seq_len]
        for layer in range(model.n_layers):
            h = F.layer_norm(x, (dim,), p["ln1_gain"][layer], p["ln1_bias"][layer], 1e-5)
            q, k, v = (h @ p["w_attn"][layer] + p["b_attn"][layer]).split(dim, dim=-1)
            q, k, v = (t.view(batch, seq_len, n_heads, -1).transpose(1, 2) for t in (q, k, v))
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

    numpy_loss = loss_and_grads(model, inputs, targets)[0]
    torch_loss = step()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread; loss {torch_loss:.6f}")
    print(f"(numpy's loss on the same batch and weights: {numpy_loss:.6f})")
    return step


def main() -> None:
    config = stored_run(seed=0).config
    model = init_model(config)  # the sizes matter here, not the weights
    inputs, targets = random_windows(train_stream(), config.batch_size, config.seq_len, seed=0)
    print(
        f"One training step: batch {config.batch_size} x {config.seq_len} characters, "
        f"{config.n_layers} blocks of {config.n_heads} heads, width {config.embed_dim}, "
        f"{config.dtype}; numpy {np.__version__}\n"
    )

    def numpy_step() -> float:
        return loss_and_grads(model, inputs, targets)[0]

    torch_step = _torch_step(model, inputs, targets)
    steps = {"numpy": numpy_step}
    if not isinstance(torch_step, str):
        steps["torch"] = torch_step
    for step in steps.values():
        step()  # warm up
    # Alternate the two, so a change in the machine's load reaches both alike.
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(REPEATS):
        for name, step in steps.items():
            times[name].append(_seconds(step))
    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"\nnumpy step (median of {REPEATS}): {median['numpy'] * 1000:.0f} ms")
    for part, share in _shares(model, inputs, targets).items():
        print(f"  {part:36} {share:6.1%}")
    if isinstance(torch_step, str):
        print(f"\ntorch comparison skipped: {torch_step}")
        return
    print(f"torch step (median of {REPEATS}): {median['torch'] * 1000:.0f} ms")
    print(f"numpy / torch: {median['numpy'] / median['torch']:.2f}")


if __name__ == "__main__":
    main()
