"""A small GPT in numpy: GPT-2's architecture at toy scale, with its backward pass written by hand.

For ids ``(B, T)``, with ``n_layers`` blocks of ``n_heads`` causal heads each::

    x = wte[ids] + wpe[0:T]                     # GPTStyleEmbedding, (B, T, D)
    for each block:
        x = x + Attention(LayerNorm_1(x))       # pre-LayerNorm, residual
        x = x + MLP(LayerNorm_2(x))             # D -> 4D, GELU, 4D -> D
    logits = LayerNorm_f(x) @ wte^T             # the output head is the token table (tied)

This is GPT-2's layout (Radford et al. 2019, "Language Models are Unsupervised Multitask
Learners", section 2.3: LayerNorm at the input of each block and after the last one, residual
projections initialised at ``0.02 / sqrt(2 * n_layers)``) without dropout. The arrays are stacked
over blocks (leading axis ``n_layers``) and named after GPT-2's modules: ``ln_1``, ``attn.c_attn``
(``w_attn``: one ``(D, 3D)`` map to queries, keys and values), ``attn.c_proj`` (``w_attn_proj``),
``ln_2``, ``mlp.c_fc`` (``w_fc``), ``mlp.c_proj`` (``w_mlp_proj``) and ``ln_f``.

Position enters as ``config.scheme`` says (:data:`~gptembed.positions.SCHEMES`): ``"learned"`` is
the table above, GPT-2's; ``"sinusoidal"`` puts the fixed table of Vaswani et al. 2017 in its place
(at the token rows' scale), never trained; ``"rotary"`` adds nothing to the input and rotates every
head's queries and keys by their positions (RoPE, Su et al. 2021, arXiv:2104.09864); ``"alibi"``
adds nothing and biases each head's scores by ``-m_h * (i - j)``, with the geometric slopes ``m_h``
of Press et al. 2021 (:func:`~gptembed.positions.alibi_slopes`); ``"none"`` gives no position
signal but the causal mask. For the last three the position table is all zeros and never trained.
Everything else, the initial weights of a seed included, is the same for every scheme.

Every product is a matrix product (``@``) in the model's dtype: float32 for training (about twice
as fast as float64 here), float64 for the finite-difference checks of the gradients and for the
chapter's measurements of the trained model (:func:`~gptembed.gpt_runs.stored_run`). The
sizes, scheme, dtype and schedule are a :class:`~gptembed.gpt_config.GPTConfig`. A trained run
is stored and read by :mod:`gptembed.gpt_runs`; :mod:`gptembed.gpt_terms` splits the first
block's scores into token and position terms.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._arrays import flat_rows
from ._checks import (
    check_fits_in_memory,
    check_in_range,
    check_int,
    check_integer_array,
    check_rotary_interpolation,
    check_type,
)
from ._kernels import gather_add
from ._lookup import checked_lookup, table_grads
from ._scoring import scored_positions
from ._transformer import (
    Window,
    attend,
    gelu,
    gelu_backward,
    head_positions,
    layer_norm,
    layer_norm_backward,
    linear,
    merge_heads,
    split_heads,
    turn,
)
from .attention_cost import attention_scores_bytes
from .corpus import random_passages
from .embedding import INIT_STD, Extension, GPTStyleEmbedding
from .gpt_config import BOS_ID, GPTConfig
from .models import gpt_parameter_count
from .optim import (
    ArrayModel,
    Evaluation,
    TrainResult,
    cross_entropy,
    losses_of_logits,
    run_training,
    weights_rng,
)
from .positions import Scheme, random_start_rows, sinusoidal_table

Floats: TypeAlias = NDArray[np.floating]
"""An array in the model's dtype: float32 to train, float64 to check gradients and to measure."""


@dataclass
class GPT(ArrayModel):
    """The embedding layer, ``n_layers`` pre-LayerNorm blocks, a final LayerNorm and a tied head.

    Attributes:
        embedding: :class:`GPTStyleEmbedding`, ``(V, D)`` token and ``(T, D)`` position tables;
            the token table is also the output head.
        n_heads: heads per block.
        scheme: how position enters (:attr:`~gptembed.gpt_config.GPTConfig.scheme`).
        rotary_base: the rotary angles' wavelength scale (used by ``"rotary"`` only).
        sinusoidal_scale: the sinusoidal table's factor (used by ``"sinusoidal"`` only).
        rotary_interpolation: rotary turns position ``m`` by the angles of ``m / s`` (position
            interpolation): ``dataclasses.replace(model, rotary_interpolation=4.0)`` runs it 4
            times as long so, as ``rotary_base=`` :func:`~gptembed.positions.ntk_base` does.
        ln1_gain, ln1_bias: ``(n_layers, D)``, the LayerNorm before attention.
        w_attn, b_attn: ``(n_layers, D, 3D)`` and ``(n_layers, 3D)``: queries, keys and values,
            in that order, each ``n_heads`` slices of ``D / n_heads`` columns.
        w_attn_proj, b_attn_proj: ``(n_layers, D, D)``, ``(n_layers, D)``: the heads' outputs back
            to the residual stream.
        ln2_gain, ln2_bias: ``(n_layers, D)``, the LayerNorm before the MLP.
        w_fc, b_fc: ``(n_layers, D, 4D)``, ``(n_layers, 4D)``.
        w_mlp_proj, b_mlp_proj: ``(n_layers, 4D, D)``, ``(n_layers, D)``.
        lnf_gain, lnf_bias: ``(D,)``, the final LayerNorm.
    """

    embedding: GPTStyleEmbedding
    n_heads: int
    scheme: Scheme
    rotary_base: float
    ln1_gain: Floats
    ln1_bias: Floats
    w_attn: Floats
    b_attn: Floats
    w_attn_proj: Floats
    b_attn_proj: Floats
    ln2_gain: Floats
    ln2_bias: Floats
    w_fc: Floats
    b_fc: Floats
    w_mlp_proj: Floats
    b_mlp_proj: Floats
    lnf_gain: Floats
    lnf_bias: Floats
    sinusoidal_scale: float = INIT_STD
    rotary_interpolation: float = 1.0

    def __post_init__(self) -> None:
        """Refuse (here, as ``dataclasses.replace`` makes the model too) an interpolation below
        1, or one a scheme without rotary would ignore: as its config refuses them."""
        self.rotary_interpolation = check_rotary_interpolation(
            self.scheme, self.rotary_interpolation
        )

    @property
    def n_layers(self) -> int:
        """Blocks."""
        return self.w_attn.shape[0]

    @property
    def head_dim(self) -> int:
        """``D / n_heads``, the width of one head's queries, keys and values."""
        return self.embedding.embed_dim // self.n_heads

    @property
    def max_seq_len(self) -> int:
        """The longest sequence the model runs as it is (:func:`at_length` makes it longer)."""
        return self.embedding.max_seq_len


def init_model(config: GPTConfig) -> GPT:
    """A fresh model as GPT-2 initialises one: tables as in :class:`GPTStyleEmbedding`, every
    matrix from N(0, 0.02**2) except the two residual projections, whose standard deviation is
    ``0.02 / sqrt(2 n_layers)``; biases 0 and LayerNorm gains 1.

    Only the position table depends on the scheme: GPT-2's random draw (``"learned"``), the
    sinusoidal table, or zeros (the schemes that add nothing to the input).

    Raises:
        ValueError: the config's arrays would not fit in the machine's memory.
    """
    dtype = np.dtype(config.dtype)
    n_params = gpt_parameter_count(
        config.vocab_size, config.seq_len, config.embed_dim, config.n_layers
    )
    check_fits_in_memory(
        f"GPTConfig's vocab_size {config.vocab_size:,}, seq_len {config.seq_len:,}, n_layers "
        f"{config.n_layers:,} and embed_dim {config.embed_dim:,}: {n_params:,} parameters in "
        f"{dtype},",
        n_params * dtype.itemsize,
    )
    embedding = GPTStyleEmbedding(
        config.vocab_size, config.table_rows, config.embed_dim, seed=config.seed, dtype=dtype
    )
    embedding.position_embeddings[:] = _position_table(
        config.scheme, embedding.position_embeddings, config.sinusoidal_scale
    )
    rng = weights_rng(seed=config.seed)
    residual_std = INIT_STD / math.sqrt(2 * config.n_layers)
    arrays = {}
    for name, shape in config.parameter_shapes().items():  # drawn in this order
        if name.endswith("embeddings"):
            continue
        if name.endswith("_gain"):
            arrays[name] = np.ones(shape, dtype=dtype)
        elif name.startswith("b_") or name.endswith("_bias"):
            arrays[name] = np.zeros(shape, dtype=dtype)
        else:  # the residual stream's two projections start smaller
            std = residual_std if name in ("w_attn_proj", "w_mlp_proj") else INIT_STD
            arrays[name] = (rng.standard_normal(shape) * std).astype(dtype)
    return GPT(
        embedding=embedding,
        n_heads=config.n_heads,
        scheme=config.scheme,
        rotary_base=config.rotary_base,
        sinusoidal_scale=config.sinusoidal_scale,
        rotary_interpolation=config.rotary_interpolation,
        **arrays,
    )


def check_model(model: GPT, config: GPTConfig) -> GPT:
    """``model``, if ``config`` could have made it: its sizes, head count, scheme, rotary base and
    interpolation and dtype are the config's (:func:`train` and :func:`~gptembed.gpt_runs.save`
    refuse any other: a 4-head rotary model trained under a 2-head ALiBi config, whose arrays
    have the same shapes, came back trained as the config's).

    Raises:
        TypeError: ``model`` is not a :class:`GPT`.
        ValueError: naming each field in which the model differs from the config, and each array
            of another shape than the config's.
    """
    check_type("model", model, GPT)
    found = {
        "vocab_size": model.embedding.vocab_size,
        "seq_len": model.max_seq_len - config.max_start,  # the rows past max_start's
        "n_layers": model.n_layers,
        "n_heads": model.n_heads,
        "embed_dim": model.embedding.embed_dim,
        "dtype": model.embedding.dtype.name,
        "scheme": model.scheme,
        "rotary_base": model.rotary_base,
        "sinusoidal_scale": model.sinusoidal_scale,
        "rotary_interpolation": model.rotary_interpolation,
    }
    wrong = [
        f"{name} {value!r} (the config's {getattr(config, name)!r})"
        for name, value in found.items()
        if value != getattr(config, name)
    ]
    shapes = config.parameter_shapes()
    wrong += [
        f"{name} {array.shape} (the config's {shapes[name]})"
        for name, array in model.parameters().items()
        if array.shape != shapes[name]
    ]
    if wrong:
        raise ValueError(f"the model does not match its config: {', '.join(wrong)}")
    return model


def _position_table(scheme: Scheme, learned: Floats, scale: float = INIT_STD) -> Floats:
    """The ``(L, D)`` position table of ``scheme``, given the learned table of that shape: the
    learned one itself, the sinusoidal table times ``scale``, or zeros.

    By default the sinusoidal table is scaled by :data:`~gptembed.embedding.INIT_STD` (0.02): its
    entries are then as large as the token rows' (N(0, 0.02**2)), as in Vaswani et al. 2017 (section
    3.4), who multiply token rows of standard deviation about ``1 / sqrt(D)`` by ``sqrt(D)``
    before adding the table. Unscaled it would be 35 times the token rows, and the first
    LayerNorm would see little but position.
    """
    if scheme == "learned":
        return learned
    if scheme == "sinusoidal":  # at the token rows' scale, as Vaswani et al. scale theirs
        return (scale * sinusoidal_table(*learned.shape)).astype(learned.dtype)
    return np.zeros_like(learned)


@dataclass
class LayerNormTrace:
    """What one LayerNorm computed: ``y = gain * xhat + bias``, ``xhat = (x - mean) * rstd``.

    Attributes:
        xhat: ``(..., D)`` the normalised inputs.
        rstd: ``(..., 1)`` one over each vector's standard deviation (with LayerNorm's 1e-5).
    """

    xhat: Floats
    rstd: Floats


def _layer_norm(x: Floats, gain: Floats, bias: Floats) -> tuple[Floats, LayerNormTrace]:
    """LayerNorm over the last axis of ``(..., D)``: its output and what backward needs."""
    out, xhat, rstd = layer_norm(x, gain, bias)
    return out, LayerNormTrace(xhat, rstd)


@dataclass
class BlockTrace:
    """What one block computed on ``(B, T)`` ids; ``backward`` reads it, a reader may too.

    Attributes:
        ln1, ln2: the two LayerNorms.
        h1: ``(B, T, D)`` LayerNorm_1's output, the input of the heads.
        q, k, v: ``(B, n_heads, T, D / n_heads)``; ``q`` and ``k`` as the scores use them
            (rotated, for ``"rotary"``).
        probs: ``(B, n_heads, T, T)`` attention weights: query ``i`` down, key ``j <= i`` across
            (only the keys a window keeps, for :func:`forward` with ``window``).
        heads: ``(B, T, D)`` the heads' outputs side by side, before ``w_attn_proj``.
        h2: ``(B, T, D)`` LayerNorm_2's output.
        pre_gelu: ``(B, T, 4D)``.
        post_gelu: ``(B, T, 4D)``.
        gelu_tanh: ``(B, T, 4D)``, the tanh inside the GELU, kept for the backward pass.
    """

    ln1: LayerNormTrace
    h1: Floats
    q: Floats
    k: Floats
    v: Floats
    probs: Floats
    heads: Floats
    ln2: LayerNormTrace
    h2: Floats
    pre_gelu: Floats
    post_gelu: Floats
    gelu_tanh: Floats


@dataclass
class ForwardTrace:
    """What :func:`forward` computed on ids ``(B, T)``.

    Attributes:
        logits: ``(B, T, V)`` next-token logits.
        blocks: one :class:`BlockTrace` per block.
        lnf: the final LayerNorm; ``final``: its output ``(B, T, D)``.
        positions: ``(T,)`` or ``(B, T)``, the position of each id.
    """

    logits: Floats
    blocks: list[BlockTrace]
    lnf: LayerNormTrace
    final: Floats
    positions: NDArray[np.intp]


def _attention(
    model: GPT,
    layer: int,
    h1: Floats,
    positions: NDArray[np.intp],
    window: Window,
    mask: Floats,
    keep: bool = True,
) -> tuple[Floats, ...]:
    """Block ``layer``'s heads on LayerNorm_1's output ``(B, T, D)`` at ``positions``: ``(q, k,
    v, probs, heads, out)``, ``out`` the ``(B, T, D)`` added to the residual stream. ``mask`` is
    ``window``'s ``(T, T)`` additive mask. Without ``keep`` the weights are worked out
    :data:`~gptembed._transformer.QUERY_BLOCK` queries at a time and ``probs`` is empty."""
    dim = model.embedding.embed_dim
    qkv = linear(h1, model.w_attn[layer])  # (B, T, 3D)
    qkv += model.b_attn[layer]
    q, k, v = (
        np.ascontiguousarray(split_heads(qkv[..., i * dim : (i + 1) * dim], model.n_heads))
        for i in range(3)
    )
    q, k, probs, heads = attend(
        q, k, v, positions, window, mask, model.scheme, model.rotary_base,
        rotary_interpolation=model.rotary_interpolation, keep=keep,
    )  # fmt: skip
    out = linear(heads, model.w_attn_proj[layer])
    out += model.b_attn_proj[layer]
    return q, k, v, probs, heads, out


def _mlp(model: GPT, layer: int, h2: Floats) -> tuple[Floats, ...]:
    """Block ``layer``'s MLP on LayerNorm_2's output ``(B, T, D)``: ``(pre_gelu, post_gelu,
    gelu_tanh, out)``, ``out`` the ``(B, T, D)`` added to the residual stream."""
    pre_gelu = linear(h2, model.w_fc[layer])  # (B, T, 4D)
    pre_gelu += model.b_fc[layer]
    post_gelu, th = gelu(pre_gelu)
    out = linear(post_gelu, model.w_mlp_proj[layer])
    out += model.b_mlp_proj[layer]
    return pre_gelu, post_gelu, th, out


@dataclass
class _BlockBackward:
    """Back through block ``layer``, given what its forward pass kept (``trace``): each method
    takes ``dL/d(its output)`` and returns ``dL/d(its input)``, writing the block's rows of
    ``grads`` (keyed as :meth:`GPT.parameters`) on the way."""

    model: GPT
    layer: int
    trace: BlockTrace
    positions: NDArray[np.intp]
    grads: dict[str, Floats]

    def affine(self, x: Floats, weight: str, bias: str, dout: Floats) -> Floats:
        """Back through ``out = x @ w + b`` (``x`` ``(B, T, N)``, ``w`` ``(N, M)``), the block's
        arrays named ``weight`` and ``bias``."""
        self.grads[weight][self.layer] = flat_rows(x).T @ flat_rows(dout)
        self.grads[bias][self.layer] = flat_rows(dout).sum(axis=0)
        return linear(dout, getattr(self.model, weight)[self.layer].T)

    def attention(self, dout: Floats) -> Floats:
        """Back through :func:`_attention`: ``(B, T, D)`` in, ``dL/dh1`` ``(B, T, D)`` out."""
        b, model = self.trace, self.model
        dmerged = self.affine(b.heads, "w_attn_proj", "b_attn_proj", dout)
        dheads = split_heads(dmerged, model.n_heads)  # (B, nh, T, H)
        dprobs = dheads @ b.v.swapaxes(-1, -2)  # (B, nh, T, T)
        dv = b.probs.swapaxes(-1, -2) @ dheads
        # Softmax backward, row by row: ds = p * (dp - sum_j p dp); later keys have p = 0.
        dscores = dprobs  # in place
        dscores -= (b.probs * dprobs).sum(axis=-1, keepdims=True)
        dscores *= b.probs
        dscores *= 1.0 / math.sqrt(model.head_dim)
        dq = dscores @ b.k
        dk = dscores.swapaxes(-1, -2) @ b.q
        if model.scheme == "rotary":  # back through the rotations, to the projections' q and k
            at, s = head_positions(self.positions), model.rotary_interpolation
            dq, dk = (turn(d, at, model.rotary_base, s, inverse=True) for d in (dq, dk))
        dqkv = np.concatenate([merge_heads(d) for d in (dq, dk, dv)], axis=-1)  # (B, T, 3D)
        return self.affine(b.h1, "w_attn", "b_attn", dqkv)

    def mlp(self, dout: Floats) -> Floats:
        """Back through :func:`_mlp`: ``(B, T, D)`` in, ``dL/dh2`` ``(B, T, D)`` out."""
        b = self.trace
        dpost = self.affine(b.post_gelu, "w_mlp_proj", "b_mlp_proj", dout)
        dpre = gelu_backward(dpost, b.pre_gelu, b.gelu_tanh)
        return self.affine(b.h2, "w_fc", "b_fc", dpre)

    def layer_norm(self, dy: Floats, name: str) -> Floats:
        """Back through LayerNorm ``name`` (``"ln1"`` or ``"ln2"``) given ``dL/dy``."""
        layer, gain = self.layer, f"{name}_gain"
        trace = getattr(self.trace, name)
        dx, self.grads[gain][layer], self.grads[f"{name}_bias"][layer] = layer_norm_backward(
            dy, trace.xhat, trace.rstd, getattr(self.model, gain)[layer]
        )
        return dx


def forward(
    model: GPT,
    token_ids: ArrayLike,
    start_pos: int = 0,
    *,
    position_ids: ArrayLike | None = None,
    window: int | None = None,
    sinks: int = 0,
) -> ForwardTrace:
    """Run the model on ids ``(B, T)``, keeping what :func:`loss_and_grads` needs.

    Args:
        token_ids: ids in ``[0, V)``, shape ``(B, T)``.
        start_pos, position_ids: where the ids sit (see :meth:`GPTStyleEmbedding.forward`).
        window: if given, every head of every block sees only the last ``window`` keys (itself
            included), as a KV cache of ``window`` entries would hold them: sliding-window
            attention, run on the whole sequence at once.
        sinks: with ``window``, the first ``sinks`` keys are kept as well (StreamingLLM's
            attention sinks, Xiao et al. 2023). A relative scheme sees a kept first key at its
            distance within the cache (``min(i, sinks + window - 1) - j``), not its true one.

    Raises:
        TypeError, ValueError: as :meth:`GPTStyleEmbedding.check_ids`, or ids that are not 2-D
            or hold no position (``T = 0``: no query has a key to attend to); a ``window`` that
            is not an integer >= 1 or ``sinks`` not one >= 0; ``window`` or ``sinks`` with a
            ``start_pos`` or ``position_ids`` (a cache counts from the sequence's first id);
            ``sinks`` over ``T`` (the keys there are), without ``window``, or for an absolute
            scheme (``"learned"``, ``"sinusoidal"``), whose positions are in the inputs: a cache
            cannot move them; attention weights too large for the machine's memory.
    """
    kept = Window.of(window, sinks, model.scheme, start_pos, position_ids)
    ids, positions = _checked_ids(model, token_ids, start_pos, position_ids)
    batch, seq_len = ids.shape
    itemsize = model.embedding.dtype.itemsize
    check_fits_in_memory(
        f"forward's attention weights, batch {batch:,} x n_heads {model.n_heads:,} x n_layers "
        f"{model.n_layers:,} x T**2 {seq_len**2:,} in {model.embedding.dtype},",
        attention_scores_bytes(seq_len, model.n_heads, model.n_layers, batch, itemsize),
    )
    return _forward(model, ids, positions, kept.checked_for(seq_len))


def _checked_ids(
    model: GPT, token_ids: ArrayLike, start_pos: int, position_ids: ArrayLike | None
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The ids ``(B, T)`` of a :func:`forward` call and their positions, checked once (as
    :meth:`GPTStyleEmbedding.check_ids`, and ``T >= 1``)."""
    embedding = model.embedding
    ids, positions = checked_lookup(
        token_ids,
        start_pos,
        position_ids,
        vocab_size=embedding.vocab_size,
        max_seq_len=embedding.max_seq_len,
    )
    if ids.ndim != 2 or ids.shape[1] == 0:
        raise ValueError(f"token_ids must have shape (B, T) with T >= 1, got {ids.shape}")
    return ids, positions


def _forward(
    model: GPT,
    ids: NDArray[np.intp],
    positions: NDArray[np.intp],
    window: Window,
    keep: bool = True,
) -> ForwardTrace:
    """:func:`forward` of ids and positions that :func:`_checked_ids` returned; without
    ``keep``, only the logits (no block traces, and attention a block of queries at a time).
    The window's ``(T, T)`` mask is made once for every block, and dropped on return."""
    wte, wpe = model.embedding.token_embeddings, model.embedding.position_embeddings
    x = gather_add(wte, ids, wpe, positions)  # (B, T, D): wte[ids] + wpe[positions]
    mask = window.additive_mask(ids.shape[1], wte.dtype)  # (T, T), sliced by each block
    blocks = []
    for layer in range(model.n_layers):
        h1, ln1 = _layer_norm(x, model.ln1_gain[layer], model.ln1_bias[layer])
        q, k, v, probs, heads, out = _attention(model, layer, h1, positions, window, mask, keep)
        x = x + out
        h2, ln2 = _layer_norm(x, model.ln2_gain[layer], model.ln2_bias[layer])
        pre_gelu, post_gelu, th, out = _mlp(model, layer, h2)
        x = x + out
        if keep:
            trace = BlockTrace(ln1, h1, q, k, v, probs, heads, ln2, h2, pre_gelu, post_gelu, th)
            blocks.append(trace)
    final, lnf = _layer_norm(x, model.lnf_gain, model.lnf_bias)
    logits = linear(final, model.embedding.token_embeddings.T)  # (B, T, V)
    return ForwardTrace(logits, blocks, lnf, final, positions)


EVAL_TOKENS = 512
"""How many positions :func:`logits` and :func:`token_losses` send through the model at once: a
batch of passages goes through in chunks of ``max(1, EVAL_TOKENS // T)`` passages, whose score and
MLP arrays stay small enough for the CPU's caches. The logits are the same (to the last bit or
so: BLAS may order a product's sums by its number of rows), and chapter 7's 256 passages of 128
take 0.4 of the time they take in one piece, chapter 10's 16 passages of 512 0.6
(``benchmarks/bench_eval.py``)."""


def _chunked_logits(
    model: GPT, ids: NDArray[np.intp], positions: NDArray[np.intp], window: Window
) -> Floats:
    """Logits ``(B, T, V)`` of checked ids and positions, run ``EVAL_TOKENS`` at a time."""
    per = max(1, EVAL_TOKENS // ids.shape[1])
    chunks = [
        _forward(
            model,
            ids[start : start + per],
            positions[start : start + per] if positions.ndim == 2 else positions,
            window,
            keep=False,
        ).logits
        for start in range(0, max(len(ids), 1), per)  # one (empty) chunk for no passages
    ]
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


def logits(
    model: GPT,
    token_ids: ArrayLike,
    start_pos: int = 0,
    *,
    position_ids: ArrayLike | None = None,
    window: int | None = None,
    sinks: int = 0,
) -> Floats:
    """Next-token logits ``(B, T, V)`` of ids ``(B, T)``; the arguments and errors are
    :func:`forward`'s. Without the trace that :func:`forward` keeps, the passages go through a
    few at a time (:data:`EVAL_TOKENS`)."""
    kept = Window.of(window, sinks, model.scheme, start_pos, position_ids)
    ids, positions = _checked_ids(model, token_ids, start_pos, position_ids)
    seq_len = ids.shape[1]
    check_fits_in_memory(  # the window's mask and ALiBi's distances: int64, (T, T)
        f"the (T, T) mask of causal attention at T = {seq_len:,}:", 2 * seq_len**2 * 8
    )
    return _chunked_logits(model, ids, positions, kept.checked_for(seq_len))


def loss_and_grads(
    model: GPT, inputs: ArrayLike, targets: ArrayLike, *, position_ids: ArrayLike | None = None
) -> tuple[float, dict[str, Floats]]:
    """Mean cross-entropy (nats) of ``(B, T)`` inputs against next-token targets, and every
    gradient, keyed and shaped as :meth:`GPT.parameters`. ``position_ids`` as in
    :func:`forward` (by default ``0 .. T-1``): :func:`train` moves each window's rows so.

    A target equal to :data:`~gptembed.optim.IGNORE` is not scored: the mean is over
    the other predictions, and the gradients are those of that mean (chapter 8 scores only the
    last position this way). The token table's gradient is the sum of two: as the input table
    and as the output head.

    Raises:
        ValueError: targets of another shape than the inputs, a target outside ``[0, V)`` that is
            not IGNORE, or every target IGNORE; position ids as :func:`forward` refuses them.
    """
    ids, positions = _checked_ids(model, inputs, 0, position_ids)  # the one check of the ids
    f = _forward(model, ids, positions, Window())
    scored = scored_positions(f.logits, targets)  # (B, T)
    loss, dscored = cross_entropy(f.logits[scored], np.asarray(targets)[scored])
    dlogits = np.zeros(f.logits.shape, dtype=model.embedding.dtype)  # (B, T, V)
    dlogits[scored] = dscored
    wte = model.embedding.token_embeddings
    grad_head = flat_rows(dlogits).T @ flat_rows(f.final)  # (V, D)
    dx, grad_lnf_gain, grad_lnf_bias = layer_norm_backward(
        linear(dlogits, wte), f.lnf.xhat, f.lnf.rstd, model.lnf_gain
    )
    grads = {name: np.zeros_like(array) for name, array in model.parameters().items()}
    grads["lnf_gain"], grads["lnf_bias"] = grad_lnf_gain, grad_lnf_bias
    for layer in reversed(range(model.n_layers)):  # x + MLP(LN_2(x)), then x + Attention(LN_1(x))
        block = _BlockBackward(model, layer, f.blocks[layer], f.positions, grads)
        dx = dx + block.layer_norm(block.mlp(dx), "ln2")
        dx = dx + block.layer_norm(block.attention(dx), "ln1")
    grad_token, grad_position = table_grads(
        dx, ids, positions, wte, model.embedding.position_embeddings
    )
    grads["token_embeddings"] = grad_token + grad_head
    grads["position_embeddings"] = grad_position
    return loss, grads


def token_losses(
    model: GPT,
    inputs: ArrayLike,
    targets: ArrayLike,
    start_pos: int = 0,
    *,
    position_ids: ArrayLike | None = None,
    window: int | None = None,
    sinks: int = 0,
) -> NDArray[np.float64]:
    """Cross-entropy (nats) of every prediction: ``(B, T)`` for ``(B, T)`` inputs and targets.

    The keywords go to :func:`logits`; the mean is :func:`evaluate`.

    Raises:
        ValueError: targets of another shape than the inputs, or outside ``[0, V)``; and as
            :func:`forward`.
    """
    z = logits(model, inputs, start_pos, position_ids=position_ids, window=window, sinks=sinks)
    return losses_of_logits(z, targets)


def evaluate(
    model: GPT,
    inputs: ArrayLike,
    targets: ArrayLike,
    start_pos: int = 0,
    *,
    position_ids: ArrayLike | None = None,
) -> Evaluation:
    """Mean cross-entropy (nats per token) and accuracy of the argmax of the model's predictions,
    as every model's ``evaluate`` returns them; no update.

    Raises:
        ValueError: no passages (``(0, T)`` inputs: a mean over no predictions is undefined); and
            as :func:`forward` and :func:`~gptembed.optim.cross_entropy`.
    """
    z = logits(model, inputs, start_pos, position_ids=position_ids)  # (B, T, V)
    if z.shape[0] == 0:
        raise ValueError(
            f"evaluate needs at least one passage, got shape {z.shape[:-1]}: a mean over no "
            "predictions is undefined"
        )
    return Evaluation.of(z, targets)


def prepend_bos(inputs: ArrayLike, targets: ArrayLike) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Passages with the ``<bos>`` id (:data:`~gptembed.gpt_config.BOS_ID`) at position 0: the
    windows a ``bos=True`` model trains and is scored on (:attr:`GPTConfig.bos
    <gptembed.gpt_config.GPTConfig>`).

    Each ``(B, T)`` passage keeps its length: ``<bos>`` comes in front and the last input drops
    out, so the inputs are ``[<bos>, x_0, ..., x_{T-2}]`` and the targets
    ``[x_0, ..., x_{T-1}]`` (position 0 now predicts the passage's first character).

    Raises:
        TypeError, ValueError: inputs or targets that are not ``(B, T)`` integer arrays of one
            shape.
    """
    ids = check_integer_array("inputs", inputs, BOS_ID + 1)
    next_ids = check_integer_array("targets", targets, BOS_ID + 1)
    if ids.ndim != 2 or ids.shape != next_ids.shape or ids.shape[1] == 0:
        raise ValueError(
            f"inputs and targets must be (B, T) arrays of one shape with T >= 1, got "
            f"{ids.shape} and {next_ids.shape}"
        )
    bos = np.full((ids.shape[0], 1), BOS_ID, dtype=np.intp)
    shifted = np.concatenate([bos, ids[:, :-1]], axis=1).astype(np.intp, copy=False)
    return shifted, np.concatenate([ids[:, :1], next_ids[:, :-1]], axis=1).astype(np.intp)


def train(
    config: GPTConfig,
    stream: ArrayLike,
    model: GPT | None = None,
    *,
    after_step: Callable[[int, GPT], None] | None = None,
) -> TrainResult[GPT, GPTConfig]:
    """Train a :class:`GPT` with Adam on passages cut at random offsets of ``stream``.

    Each step draws ``batch_size`` passages of ``seq_len + 1`` ids at uniform random offsets
    (:func:`~gptembed.corpus.random_passages`), so position 0 is rarely the start of a document;
    with ``config.bos`` each starts with ``<bos>`` instead (:func:`prepend_bos`). With
    ``config.max_start`` each passage reads the table from a start row drawn uniformly from
    ``[0, max_start]``, from the batches' own random stream after the passages
    (:func:`~gptembed.positions.random_start_rows`).
    The learning rate follows :meth:`~gptembed.gpt_config.GPTConfig.learning_rate_at`.
    Training starts from a copy of ``model`` if one is given (left as it was: chapter 9
    fine-tunes a grown model this way), else from :func:`init_model` of ``config``;
    :func:`~gptembed.optim.run_training` runs it.
    ``after_step(steps_done, model)`` is called after every update (``tools/train_lm.py`` logs
    held-out losses with it).

    Deterministic: the same ``config``, ``stream`` and start give the same losses and weights on
    the same machine.

    The whole stream is checked once, before the first step: an id outside ``[0, vocab_size)``
    anywhere in it is refused, not found when a passage first holds it.

    Raises:
        TypeError: ``model`` is not a :class:`GPT`, or the stream does not hold integers.
        ValueError: an id of the stream outside ``[0, vocab_size)``; a ``model`` that ``config``
            did not make (:func:`check_model`: ``seq_len`` position rows, the heads,
            the scheme, the dtype...); or a step's attention weights would not fit in the
            machine's memory.
        FloatingPointError: a step's loss is not finite (NaN or inf): training stops there.
    """
    if model is not None:
        check_model(model, config)
    ids = check_integer_array("stream", stream, config.vocab_size)
    check_in_range("stream id", ids, config.vocab_size, "ids")
    itemsize = np.dtype(config.dtype).itemsize
    check_fits_in_memory(
        f"a training step's attention weights, batch_size {config.batch_size:,} x n_heads "
        f"{config.n_heads:,} x n_layers {config.n_layers:,} x seq_len**2 {config.seq_len**2:,} "
        f"in {config.dtype},",
        attention_scores_bytes(
            config.seq_len, config.n_heads, config.n_layers, config.batch_size, itemsize
        ),
    )
    steps: list[float] = []

    def finite_step(
        model: GPT, inputs: ArrayLike, targets: ArrayLike, position_ids: ArrayLike | None = None
    ) -> tuple[float, dict[str, Floats]]:
        """:func:`loss_and_grads`, stopping at the first loss that is not finite: an update
        from it would make every weight NaN, and the steps after it would train nothing."""
        loss, grads = loss_and_grads(model, inputs, targets, position_ids=position_ids)
        if not math.isfinite(loss):
            raise FloatingPointError(
                f"step {len(steps)}'s loss is {loss}: training stopped there (a learning rate "
                f"too high for the model, {config.learning_rate} at most here, or weights that "
                "were not finite to begin with)"
            )
        steps.append(loss)
        return loss, grads

    return run_training(
        config,
        model,
        init_model,
        finite_step,
        lambda seed: _passages(ids, config, seed),
        schedule=config.learning_rate_at,
        after_step=after_step,
        frozen=() if config.scheme == "learned" else ("position_embeddings",),
    )


def _passages(
    ids: NDArray[np.integer], config: GPTConfig, seed: np.random.Generator
) -> tuple[NDArray[np.intp], ...]:
    """One training batch: :func:`~gptembed.corpus.random_passages`, with ``<bos>`` in front if
    ``config.bos``, and the position ids of :func:`~gptembed.positions.random_start_rows` if
    ``config.max_start``."""
    batch = random_passages(ids, config.batch_size, config.seq_len, seed=seed)
    batch = prepend_bos(*batch) if config.bos else batch
    if not config.max_start:
        return batch
    starts = random_start_rows(config.batch_size, config.seq_len, config.max_start, seed=seed)
    return (*batch, starts)


def at_length(model: GPT, seq_len: int, method: Extension | None = None, *, seed: int = 1) -> GPT:
    """``model`` able to run ``seq_len`` positions: its position table with ``seq_len`` rows.

    A learned table grows by ``method`` (:meth:`~gptembed.embedding.GPTStyleEmbedding.extended`,
    ``"fresh"`` by default, fresh rows drawn with ``seed``); a sinusoidal one by more rows of
    its formula, the zero table of the other schemes by more zeros (rotary and ALiBi compute
    their positions, so they run at any length as they are): for those a ``method`` has no
    meaning and is refused. A table already ``seq_len`` long is kept. Every other array is
    shared with ``model``, not copied.

    Raises:
        ValueError: a ``method`` for a scheme other than ``"learned"``.
        TypeError, ValueError: as :meth:`~gptembed.embedding.GPTStyleEmbedding.extended`
            (``seq_len`` shorter than the table, an unknown ``method``, a bad ``seed``).
    """
    seq_len = check_int("seq_len", seq_len)
    if model.scheme != "learned" and method is not None:
        raise ValueError(
            f"method={method!r} grows a learned table; a {model.scheme!r} table grows by its own "
            "rule: pass no method"
        )
    embedding = model.embedding.extended(seq_len, method=method or "fresh", seed=seed)
    if model.scheme != "learned":
        embedding.position_embeddings = _position_table(
            model.scheme, embedding.position_embeddings, model.sinusoidal_scale
        )
    return replace(model, embedding=embedding)
