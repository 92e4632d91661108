"""The pieces of a pre-LayerNorm transformer block in numpy, each with its backward pass.

LayerNorm, GPT-2's GELU, the heads' reshapes, one matrix product over every position, which keys
a causal head may see (:class:`Window`), and the heads' weights under a position scheme
(:func:`attend`): what :mod:`gptembed.gpt` builds its blocks from. Arrays are ``(..., D)`` in the
model's dtype; nothing here knows the model's layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

from ._checks import check_int
from .positions import Scheme, alibi_slopes, rotate

Floats: TypeAlias = NDArray[np.floating]

LN_EPS = 1e-5
"""The small number LayerNorm adds to the variance, as GPT-2 does."""

_GELU_C = math.sqrt(2.0 / math.pi)


def layer_norm(x: Floats, gain: Floats, bias: Floats) -> tuple[Floats, Floats, Floats]:
    """LayerNorm over the last axis of ``(..., D)``: ``(out, xhat, rstd)``, ``out = gain * xhat
    + bias`` with ``xhat = (x - mean) * rstd`` and ``rstd`` ``(..., 1)`` one over each vector's
    standard deviation (with :data:`LN_EPS`), the two :func:`layer_norm_backward` needs."""
    centred = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + LN_EPS)
    xhat = centred
    xhat *= rstd  # in place, as are the gain and bias below: each (..., D) array made once
    out = xhat * gain
    out += bias
    return out, xhat, rstd


def layer_norm_backward(
    dy: Floats, xhat: Floats, rstd: Floats, gain: Floats
) -> tuple[Floats, Floats, Floats]:
    """``(dx, dgain, dbias)`` of a LayerNorm given ``dL/dy`` ``(..., D)`` and what
    :func:`layer_norm` returned beside its output."""
    dgain = (dy * xhat).reshape(-1, xhat.shape[-1]).sum(axis=0)
    dbias = dy.reshape(-1, xhat.shape[-1]).sum(axis=0)
    dxhat = dy * gain
    # d xhat_i / d x_j = rstd (delta_ij - 1/D - xhat_i xhat_j / D)
    dx = rstd * (
        dxhat
        - dxhat.mean(axis=-1, keepdims=True)
        - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)
    )
    return dx, dgain, dbias


def gelu(x: Floats) -> tuple[Floats, Floats]:
    """GPT-2's GELU, the tanh approximation: ``x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.

    Returns the GELU of ``x`` and the tanh (which :func:`gelu_backward` needs). Written in place
    on two buffers, in the order of ``0.5 * x * (1 + tanh(c * x * (1 + 0.044715 * x * x)))``;
    ``x**3`` would take 400 times as long as ``x * x * x`` here.
    """
    inner = 0.044715 * x
    inner *= x
    inner += 1.0
    th = _GELU_C * x
    th *= inner
    np.tanh(th, out=th)
    np.add(th, 1.0, out=inner)
    inner *= 0.5 * x
    return inner, th


def gelu_backward(dy: Floats, x: Floats, th: Floats) -> Floats:
    """``dL/dx`` of :func:`gelu` at ``x`` given ``dL/dy`` and the forward pass's tanh ``th``:
    ``dy * (0.5 (1 + th) + 0.5 x (1 - th^2) c (1 + 3 * 0.044715 x^2))``, in that order."""
    slope = th * th
    np.subtract(1.0, slope, out=slope)
    slope *= 0.5 * x
    slope *= _GELU_C
    cubic = (3 * 0.044715) * x
    cubic *= x
    cubic += 1.0
    slope *= cubic
    np.add(th, 1.0, out=cubic)
    cubic *= 0.5
    slope += cubic
    slope *= dy
    return slope


def split_heads(a: Floats, n_heads: int) -> Floats:
    """``(B, T, D)`` -> ``(B, n_heads, T, D / n_heads)``."""
    batch, seq_len, dim = a.shape
    return a.reshape(batch, seq_len, n_heads, dim // n_heads).transpose(0, 2, 1, 3)


def merge_heads(a: Floats) -> Floats:
    """``(B, n_heads, T, H)`` -> ``(B, T, n_heads * H)``."""
    batch, n_heads, seq_len, head = a.shape
    return a.transpose(0, 2, 1, 3).reshape(batch, seq_len, n_heads * head)


def linear(a: Floats, w: Floats) -> Floats:
    """``a @ w`` for ``(..., N)`` and ``(N, M)`` as one matrix product of ``(B*T, N)`` rows:
    ``@`` on ``(B, T, N)`` would make ``B`` products of ``T`` rows, a third slower here."""
    return (a.reshape(-1, a.shape[-1]) @ w).reshape(*a.shape[:-1], w.shape[-1])


@dataclass(frozen=True)
class Window:
    """Which keys a query sees: ``j <= i``, and with ``size`` only the last ``size`` of them
    (``i - j < size``) plus the first ``sinks`` (``j < sinks``), the attention sinks."""

    size: int | None = None
    sinks: int = 0

    @classmethod
    def of(
        cls,
        window: int | None,
        sinks: int,
        scheme: Scheme,
        start_pos: int,
        position_ids: object,
    ) -> Window:
        """The window of a model of ``scheme`` called with ``window`` and ``sinks`` (and
        ``start_pos`` and ``position_ids``), checked (against the length by
        :meth:`checked_for`).

        Raises:
            TypeError, ValueError: as the small GPT's ``forward``.
        """
        sinks = check_int("sinks", sinks, minimum=0)
        if window is None:
            if sinks:
                raise ValueError(f"sinks={sinks} needs a window: without one every key is kept")
            return cls()
        window = check_int("window", window)
        if start_pos or position_ids is not None:
            raise ValueError(
                "window and sinks count positions from the sequence's first id: pass neither "
                "start_pos nor position_ids with them"
            )
        if sinks and scheme in ("learned", "sinusoidal"):
            raise ValueError(
                f"sinks need a relative scheme (rotary, alibi or none), got {scheme!r}: an "
                "absolute scheme's positions are added to the inputs, so keeping a first token "
                "in the cache cannot give it a position within the cache"
            )
        return cls(window, sinks)

    def checked_for(self, seq_len: int) -> Window:
        """This window, for sequences of ``seq_len`` ids.

        Raises:
            ValueError: more sinks than the sequence has keys.
        """
        if self.sinks > seq_len:
            raise ValueError(
                f"sinks={self.sinks} with {seq_len} ids: a sequence has only {seq_len} first keys "
                f"to keep, so sinks must lie in [0, {seq_len}]"
            )
        return self

    def blocked(self, seq_len: int) -> NDArray[np.bool_]:
        """``(T, T)``, True where query ``i`` (down) may not see key ``j`` (across)."""
        t = np.arange(seq_len)
        behind = t[:, None] - t[None, :]  # i - j
        blocked = behind < 0
        if self.size is not None:
            blocked |= (behind >= self.size) & (t[None, :] >= self.sinks)
        return blocked

    def additive_mask(self, seq_len: int, dtype: np.dtype) -> Floats:
        """``(T, T)`` of ``dtype``: 0 where query ``i`` may see key ``j``, -inf where it may not
        (adding it is cheaper than masking by index). Made once per pass and sliced: whether
        query ``i`` sees key ``j`` depends on ``i`` and ``j`` alone, not on the length."""
        return np.where(self.blocked(seq_len), -np.inf, 0.0).astype(dtype)

    def key_distance(self, positions: NDArray[np.intp]) -> NDArray[np.intp]:
        """``(..., T, T)`` distance ``i - j`` from query to key as a relative scheme sees it:
        the positions' own, but a sink's counted within the kept cache, as StreamingLLM assigns
        them (Xiao et al. 2023, arXiv:2309.17453, section 3.2): a query that has evicted keys
        sits at cache position ``sinks + size - 1`` and sink ``j`` at ``j``."""
        distance = positions[..., :, None] - positions[..., None, :]
        if self.size is None or not self.sinks:
            return distance
        query_in_cache = np.minimum(distance[..., :, :1], self.sinks + self.size - 1)  # (.., T, 1)
        sink_distance = query_in_cache - np.arange(self.sinks)
        return np.concatenate([sink_distance, distance[..., self.sinks :]], axis=-1)


def masked_softmax(scores: Floats, mask: Floats) -> Floats:
    """Softmax over the last axis of ``(..., Q, K)`` scores, in place, after adding ``mask``
    ``(Q, K)`` (:meth:`Window.additive_mask`, sliced to the scores' queries and keys): a key
    masked with -inf gets 0. A causal mask never blocks the diagonal, so every row has a finite
    maximum."""
    scores += mask
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


def head_positions(positions: NDArray[np.intp]) -> NDArray[np.intp]:
    """Positions ``(T,)`` as they are, ``(B, T)`` as ``(B, 1, T)``: broadcast over the heads."""
    return positions if positions.ndim == 1 else positions[:, None, :]


def turn(
    a: Floats, at: NDArray[np.intp], base: float, interpolation: float, *, inverse: bool = False
) -> NDArray[np.float64]:
    """Rotary's turn of ``(B, n_heads, T, H)`` queries or keys at positions ``at`` (as
    :func:`head_positions` gives them): :func:`~gptembed.positions.rotate` at ``at /
    interpolation`` (position interpolation, Chen et al. 2023; the positions as they are at 1).
    ``inverse`` turns back, as a gradient goes."""
    return rotate(a, base, inverse, positions=at if interpolation == 1 else at / interpolation)


QUERY_BLOCK = 64
"""How many queries :func:`attend` scores at once when it keeps no weights (the small GPT's
``logits`` and ``token_losses``). A block of queries reads only the keys up to its last query (the
later ones are masked anyway), so at length ``T`` a causal head does about ``(T + QUERY_BLOCK) /
2T`` of the full score matrix's work: 0.62 of it at ``T = 256``. ``forward`` keeps the full
``(T, T)`` weights, for the backward pass and the figures."""


def attend(
    q: Floats,
    k: Floats,
    v: Floats,
    positions: NDArray[np.intp],
    window: Window,
    mask: Floats,
    scheme: Scheme,
    rotary_base: float,
    *,
    rotary_interpolation: float = 1.0,
    keep: bool = True,
) -> tuple[Floats, Floats, Floats, Floats]:
    """Causal heads of ``(B, n_heads, T, H)`` queries, keys and values at ``positions`` (``(T,)``
    or ``(B, T)``), position entering as ``scheme`` says: ``(q, k, probs, heads)``, ``q`` and
    ``k`` as the scores use them (rotated, for ``"rotary"``), ``probs`` the ``(B, n_heads, T,
    T)`` weights and ``heads`` ``(B, T, n_heads * H)`` the heads' outputs side by side.

    Rotary turns by the angles of ``positions / rotary_interpolation`` (:func:`turn`).
    ``mask`` is ``window``'s ``(T, T)`` additive mask. Without ``keep`` the weights are worked
    out :data:`QUERY_BLOCK` queries at a time, each block against the keys up to its last query,
    and ``probs`` is an empty array.
    """
    at = head_positions(positions)
    scale = 1.0 / math.sqrt(q.shape[-1])
    q_sinks = None  # rotary queries at their cache positions, for the sinks' scores
    if scheme == "rotary":
        if window.size is not None and window.sinks:
            query_in_cache = np.minimum(at, window.sinks + window.size - 1)
            q_sinks = turn(q, query_in_cache, rotary_base, rotary_interpolation)
        q, k = (turn(a, at, rotary_base, rotary_interpolation) for a in (q, k))
    bias = None
    if scheme == "alibi":
        slopes = alibi_slopes(q.shape[1])[:, None, None]  # (nh, 1, 1)
        bias = (slopes * window.key_distance(at)).astype(q.dtype, copy=False)  # (.., T, T)
    seq_len = q.shape[-2]

    def weights(rows: slice, n_keys: int) -> Floats:
        """The attention weights of the queries ``rows`` on the first ``n_keys`` keys."""
        scores = q[..., rows, :] @ k[..., :n_keys, :].swapaxes(-1, -2)
        if q_sinks is not None:
            sinks = min(window.sinks, n_keys)  # a block of early queries sees fewer keys
            scores[..., :sinks] = q_sinks[..., rows, :] @ k[..., :sinks, :].swapaxes(-1, -2)
        scores *= scale  # in place: one array of scores, not two
        if bias is not None:
            scores -= bias[..., rows, :n_keys]
        return masked_softmax(scores, mask[rows, :n_keys])

    if keep:
        probs = weights(slice(None), seq_len)  # (B, nh, T, T)
        return q, k, probs, merge_heads(probs @ v)
    by_block = np.empty_like(q)  # (B, nh, T, H)
    for start in range(0, seq_len, QUERY_BLOCK):
        stop = min(start + QUERY_BLOCK, seq_len)
        by_block[..., start:stop, :] = weights(slice(start, stop), stop) @ v[..., :stop, :]
    return q, k, np.empty(0, dtype=q.dtype), merge_heads(by_block)
