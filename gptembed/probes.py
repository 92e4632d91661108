"""Looking inside a position table: row similarity, linear probes, principal components.

A :func:`random_walk` is the control for each: smooth by construction, and meaningless.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import (
    as_generator,
    check_bool,
    check_float,
    check_int,
    check_int_in_range,
    check_real_array,
)


def _rows(table: ArrayLike, minimum: int = 0, purpose: str = "") -> NDArray[np.float64]:
    """``table`` as a finite ``(L, D)`` float64 array of at least ``minimum`` rows.

    Every probe checks its table here, once per call: a NaN or an infinity would otherwise reach
    LAPACK, which may raise, return NaN or never return.

    Raises:
        TypeError: the table does not hold real numbers.
        ValueError: not 2-D, no columns, a NaN or an infinity, or fewer than ``minimum`` rows
            (the message ends with ``purpose``).
    """
    rows = check_real_array("table", table)
    if rows.ndim != 2:
        raise ValueError(f"table must be a 2-D (L, D) array, got shape {rows.shape}")
    if rows.shape[1] == 0:
        raise ValueError(f"table must be a 2-D (L, D) array with D >= 1, got shape {rows.shape}")
    if len(rows) < minimum:
        raise ValueError(f"table must have at least {minimum} rows{purpose}, got {len(rows)}")
    return rows


def _unit_scale(array: NDArray[np.float64]) -> tuple[NDArray[np.float64], int]:
    """``array`` divided by ``2 ** e``, the power of two just above its largest magnitude, and
    ``e``: every value then lies in ``(-1, 1)``, so the sums of squares inside a fit neither
    overflow (a table of 1e200) nor underflow (1e-200). A power of two divides exactly, and
    floating-point arithmetic is the same at every such scale, so a table of ordinary size gives
    the same bits as without it."""
    exponent = int(np.frexp(np.abs(array).max(initial=0.0))[1])
    return np.ldexp(array, -exponent), exponent


def cosine_similarity_matrix(table: ArrayLike) -> NDArray[np.float64]:
    """``(L, L)`` cosine similarity between every pair of rows of an ``(L, D)`` table.

    Each row is divided by its largest magnitude before its norm is taken, so rows of any finite
    size (1e200 or 1e-200) have a norm that neither overflows nor underflows.

    Raises:
        TypeError: the table does not hold real numbers.
        ValueError: ``table`` is not 2-D, holds a NaN or an infinity, or a row is all zeros (its
            direction is undefined).
    """
    return _cosine(_rows(table))


def _cosine(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`cosine_similarity_matrix` of rows checked by :func:`_rows`."""
    scale = np.abs(rows).max(axis=1, initial=0.0)  # (L,)
    if rows.size and not scale.all():
        bad = int(np.flatnonzero(scale == 0)[0])
        raise ValueError(f"row {bad} is all zeros: cosine similarity needs nonzero rows")
    unit = rows / scale[:, None]  # every entry in [-1, 1], the largest of each row +-1
    unit /= np.linalg.norm(unit, axis=1)[:, None]
    return np.clip(unit @ unit.T, -1.0, 1.0)


def lagged_similarity(table: ArrayLike, lag: int) -> NDArray[np.float64]:
    """``(L - lag,)`` cosine similarity of row ``t`` with row ``t + lag``, for ``t = 0 .. L-lag-1``.

    Raises:
        TypeError, ValueError: fewer than 2 rows, ``lag`` is not in ``[1, L - 1]``, or as
            :func:`cosine_similarity_matrix`.
    """
    sims = _cosine(_rows(table, 2))  # (L, L)
    lag = check_int_in_range("lag", lag, 1, len(sims) - 1, " for this table")
    return np.diagonal(sims, offset=lag).copy()


def similarity_by_lag(table: ArrayLike) -> NDArray[np.float64]:
    """``(L - 1,)`` mean cosine similarity of rows ``lag`` apart, for ``lag = 1 .. L-1``.

    Raises:
        TypeError, ValueError: fewer than 2 rows, or as :func:`cosine_similarity_matrix`.
    """
    sims = _cosine(_rows(table, 2))  # (L, L)
    return np.array([np.diagonal(sims, offset=lag).mean() for lag in range(1, len(sims))])


@dataclass(frozen=True)
class ProbeScore:
    """A linear probe's error on the rows it was fitted to and on rows it never saw.

    Attributes:
        train: mean error over the fitted rows of every fold.
        held_out: mean error over the held-out rows of every fold: the number to believe.
        baseline: the held-out error of a probe that ignores the rows (predicts the mean of
            the fitted targets).
    """

    train: float
    held_out: float
    baseline: float


def _folds(
    n_rows: int, n_folds: int, units: str = "rows", contiguous: bool = False, name: str = "table"
) -> list[NDArray[np.intp]]:
    """Held-out rows of each fold: every ``n_folds``-th row (a fixed interleaved split), or with
    ``contiguous`` consecutive blocks of rows (the first fold the first block).

    Every fold holds out at least two of the ``n_rows`` (``units`` names them in a message).
    """
    if n_rows < 4:
        raise ValueError(f"{name} must have at least 4 {units} for 2 folds of 2, got {n_rows}")
    n_folds = check_int_in_range(
        "n_folds", n_folds, 2, n_rows // 2, f" for {n_rows} {units} (two per fold)"
    )
    if check_bool("contiguous", contiguous):
        return np.array_split(np.arange(n_rows), n_folds)
    return [np.arange(fold, n_rows, n_folds) for fold in range(n_folds)]


def _ridge_fit(x: NDArray[np.float64], y: NDArray[np.float64], ridge: float) -> NDArray[np.float64]:
    """``W`` minimising ``|x W - y|^2 + penalty |W|^2``, ``penalty = ridge * mean eigenvalue``.

    The penalty scales with the rows' own size (``trace(x^T x) / D``), so one ``ridge`` means the
    same for tables of any scale. ``ridge = 0`` is plain least squares (minimum norm).
    """
    if ridge == 0:
        return np.asarray(np.linalg.lstsq(x, y, rcond=None)[0], dtype=np.float64)
    gram = x.T @ x  # (D, D)
    penalty = ridge * np.trace(gram) / len(gram)
    return np.linalg.solve(gram + penalty * np.eye(len(gram)), x.T @ y)


def position_probe(
    table: ArrayLike, n_folds: int = 4, ridge: float = 0.0, *, contiguous: bool = False
) -> ProbeScore:
    """How well a linear map reads the absolute position ``t`` off row ``t`` of a table.

    Linear regression with an intercept from the ``D`` numbers of a row to its index, fitted by
    ``n_folds``-fold cross-validation on a fixed interleaved split (fold ``f`` holds out rows
    ``f, f + n_folds, ...``): least squares (minimum norm), or with ``ridge > 0`` a penalty of
    ``ridge`` times the mean eigenvalue of the fitted rows' scatter, which does not depend on the
    table's scale (the rows are scaled to magnitudes below 1 first, so any finite table is read
    alike). Errors are mean absolute errors in positions. This follows the absolute-position
    probe of Wang and Chen (EMNLP 2020, arXiv:2010.04903).

    With ``contiguous=True`` each fold holds out one block of consecutive rows instead, so the
    probe must carry the position into rows *beyond* the ones it was fitted on, not between
    them. Any smooth table passes the interleaved probe (a :func:`random_walk` reads within a
    position or two); the blocked one tells a table that encodes position along a consistent
    direction from one that only changes slowly.

    Raises:
        TypeError: a table that does not hold real numbers, a non-numeric ``ridge``, or a
            ``contiguous`` that is not a bool.
        ValueError: a table that is not 2-D or holds a NaN or an infinity, too few rows for the
            folds, or a ``ridge`` that is negative or not finite.
    """
    rows, _ = _unit_scale(_rows(table))
    ridge = check_float("ridge", ridge, minimum=0)
    positions = np.arange(len(rows), dtype=np.float64)
    train_err, test_err, base_err = [], [], []
    for held in _folds(len(rows), n_folds, contiguous=contiguous):
        fit = np.setdiff1d(np.arange(len(rows)), held)
        x_mean, y_mean = rows[fit].mean(axis=0), positions[fit].mean()
        x = rows[fit] - x_mean  # (n, D)
        weights = _ridge_fit(x, positions[fit] - y_mean, ridge)  # (D,)
        guess = (rows - x_mean) @ weights + y_mean  # (L,) every row's predicted position
        train_err.append(np.abs(guess[fit] - positions[fit]).mean())
        test_err.append(np.abs(guess[held] - positions[held]).mean())
        base_err.append(np.abs(y_mean - positions[held]).mean())
    return ProbeScore(float(np.mean(train_err)), float(np.mean(test_err)), float(np.mean(base_err)))


def state_position_probe(states: ArrayLike, n_folds: int = 4, ridge: float = 1e-3) -> ProbeScore:
    """How well a linear map reads the position ``t`` off a model's hidden state at ``t``.

    :func:`position_probe` for hidden states instead of a table: ``states`` ``(B, T, D)`` hold
    one vector per token of ``B`` sequences, so each position has ``B`` examples, and a state
    carries its token as well as its position. Linear regression with an intercept (and a
    ``ridge`` penalty as in :func:`position_probe`) from a state to its ``t``, fitted on the
    states of some sequences and scored on the others (``n_folds`` folds of whole sequences), so
    a probe that memorised a sequence's tokens gains nothing. Errors are mean absolute errors in
    positions. The probe of Haviv et al. 2022 ("Transformer Language Models without Positional
    Encodings Still Learn Positional Information", arXiv:2203.16634) is of this kind.

    Raises:
        TypeError: states that are not real numbers.
        ValueError: states that are not ``(B, T, D)`` with ``B >= 4``, or hold a NaN or inf;
            ``n_folds`` not in ``[2, B // 2]``; a negative or non-finite ``ridge``.
    """
    array = check_real_array("states", states)
    if array.ndim != 3 or 0 in array.shape:
        raise ValueError(f"states must be a non-empty (B, T, D) array, got shape {array.shape}")
    array, _ = _unit_scale(array)  # as position_probe does
    ridge = check_float("ridge", ridge, minimum=0)
    n_seqs, seq_len, _ = array.shape
    positions = np.broadcast_to(np.arange(seq_len, dtype=np.float64), (n_seqs, seq_len))
    train_err, test_err, base_err = [], [], []
    for held in _folds(n_seqs, n_folds, units="sequences", name="states"):
        fit = np.setdiff1d(np.arange(n_seqs), held)
        x_fit = array[fit].reshape(-1, array.shape[2])  # (n T, D)
        y_fit = positions[fit].reshape(-1)
        x_mean, y_mean = x_fit.mean(axis=0), y_fit.mean()
        weights = _ridge_fit(x_fit - x_mean, y_fit - y_mean, ridge)
        guess = (array - x_mean) @ weights + y_mean  # (B, T)
        train_err.append(np.abs(guess[fit] - positions[fit]).mean())
        test_err.append(np.abs(guess[held] - positions[held]).mean())
        base_err.append(np.abs(y_mean - positions[held]).mean())
    return ProbeScore(float(np.mean(train_err)), float(np.mean(test_err)), float(np.mean(base_err)))


def _unexplained(guess: NDArray[np.float64], target: NDArray[np.float64]) -> float:
    """``sum |guess - target|^2 / sum |target - mean target|^2`` over rows ``(n, D)``."""
    spread = np.sum((target - target.mean(axis=0)) ** 2)
    return float(np.sum((guess - target) ** 2) / spread)


def shift_probe(table: ArrayLike, shift: int, n_folds: int = 4, ridge: float = 0.0) -> ProbeScore:
    """How well ONE linear map ``M`` takes row ``t`` to row ``t + shift``, for every ``t``.

    Least squares ``M`` from rows ``t`` to rows ``t + shift`` (minimum norm; with ``ridge > 0``
    penalised as in :func:`position_probe`), cross-validated on a fixed interleaved split of the
    ``L - shift`` pairs as in :func:`position_probe`. The error
    is the residual's share of the targets' variance, ``sum |t_hat - t|^2 / sum |t - mean|^2``
    over a fold's rows (0: exact; 1: no better than the mean row). For a sinusoidal table it is
    0 up to rounding: each sin/cos pair of a frequency is rotated by a fixed angle per position.

    With ``n`` fitted pairs in ``D`` dimensions and ``n <= D``, least squares fits any rows
    exactly, so the ``train`` error says nothing there; ``held_out`` is the one to read.

    Raises:
        TypeError, ValueError: ``shift`` not in ``[1, L - 1]``, too few pairs for the folds, and
            as :func:`position_probe`.
    """
    rows, _ = _unit_scale(_rows(table, 2, " for a shift"))  # as position_probe does
    ridge = check_float("ridge", ridge, minimum=0)
    shift = check_int_in_range("shift", shift, 1, len(rows) - 1, " for this table")
    sources, targets = rows[:-shift], rows[shift:]  # (L - shift, D) each
    train_err, test_err, base_err = [], [], []
    for held in _folds(len(sources), n_folds, f"pairs of rows {shift} apart"):
        fit = np.setdiff1d(np.arange(len(sources)), held)
        mapping = _ridge_fit(sources[fit], targets[fit], ridge)  # (D, D)
        guess = sources @ mapping  # (L - shift, D)
        centre = targets[fit].mean(axis=0)  # (D,)
        train_err.append(_unexplained(guess[fit], targets[fit]))
        test_err.append(_unexplained(guess[held], targets[held]))
        base_err.append(_unexplained(np.broadcast_to(centre, targets[held].shape), targets[held]))
    return ProbeScore(float(np.mean(train_err)), float(np.mean(test_err)), float(np.mean(base_err)))


@dataclass(frozen=True)
class PrincipalComponents:
    """A table's rows along their directions of greatest variance (principal components).

    Attributes:
        scores: ``(L, K)`` each row's coordinate along each component, the rows centred first;
            component ``k``'s sign is chosen so its scores rise with the row index on average.
        directions: ``(K, D)`` unit vectors, the components, by decreasing variance.
        variance_share: ``(K,)`` each component's share of the centred rows' total variance.
        mean: ``(D,)`` the mean row.
    """

    scores: NDArray[np.float64]
    directions: NDArray[np.float64]
    variance_share: NDArray[np.float64]
    mean: NDArray[np.float64]


def principal_components(table: ArrayLike) -> PrincipalComponents:
    """The principal components of an ``(L, D)`` table's rows, ``K = min(L, D)`` of them.

    Raises:
        ValueError: ``table`` is not 2-D, has fewer than 2 rows, or all its rows are equal.
    """
    rows, exponent = _unit_scale(_rows(table, 2))  # sums of squares of any finite table
    mean = rows.mean(axis=0)
    centred = rows - mean
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    total = float(np.sum(s**2))
    if total == 0:
        raise ValueError("every row of the table is the same: there is no variance to split")
    scores = u * s  # (L, K)
    # An SVD's signs are arbitrary (and vary between LAPACK builds): fix them by the data.
    trend = np.arange(len(rows)) - (len(rows) - 1) / 2  # (L,)
    signs = np.where(trend @ scores < 0, -1.0, 1.0)  # (K,)
    return PrincipalComponents(
        np.ldexp(scores * signs, exponent),  # back to the table's scale, exactly
        vt * signs[:, None],
        s**2 / total,
        np.ldexp(mean, exponent),
    )


def random_walk(
    n_rows: int, dim: int, *, seed: int | np.random.Generator = 0
) -> NDArray[np.float64]:
    """An ``(n_rows, dim)`` table that is smooth by construction and means nothing: each row is
    the one before plus a step drawn from ``N(0, 1)`` in every dimension (``np.cumsum`` of
    Gaussian rows).

    The control for a trained table's instruments. Neighbouring rows are alike, the first
    principal component is close to a linear ramp and the next ones are waves of rising frequency:
    the principal components of any random walk have that shape (Antognini and Sohl-Dickstein
    2018, "PCA of high dimensional random walks with comparison to neural network training",
    arXiv:1806.08805). What a trained table shows beyond that is what training put there.

    Raises:
        TypeError, ValueError: a size that is not a positive integer, or a seed that is not an
            integer >= 0 or a Generator.
    """
    shape = check_int("n_rows", n_rows), check_int("dim", dim)
    return np.cumsum(as_generator(seed).standard_normal(shape), axis=0)
