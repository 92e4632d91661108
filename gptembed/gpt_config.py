"""The small GPT's config: its sizes, how position enters, its dtype, its learning-rate schedule.

A :class:`GPTConfig` is what :func:`gptembed.gpt.init_model` makes a model from and
:func:`gptembed.gpt.train` trains it with; it names the shape of each array the model holds
(:meth:`GPTConfig.parameter_shapes`, which :func:`gptembed.gpt_runs.load` checks a file against
before it makes the model), and reads back the config a stored run's header holds. The model
itself is :mod:`gptembed.gpt`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import check_float, check_float_dtype, check_int, check_rotary_interpolation
from .corpus import VOCAB_SIZE
from .embedding import INIT_STD
from .optim import RunConfig
from .positions import SCHEMES, Scheme

BOS_ID = VOCAB_SIZE
"""The beginning-of-sequence id of a run with ``bos=True``: the first id past the corpus's
characters, so it never occurs in the text."""

_STORED_NAMES = {"n_layer": "n_layers", "n_head": "n_heads"}
"""Field names of runs stored before the package's one vocabulary, and their names now."""


@dataclass(frozen=True, kw_only=True)
class GPTConfig(RunConfig):
    """A GPT run: the sizes, plus :class:`~gptembed.optim.RunConfig`'s schedule.

    Attributes:
        vocab_size: ``V``, rows of the token table (by default the corpus's characters).
        seq_len: ``T``, the context length, and the rows of the position table (with
            ``max_start`` more).
        n_layers: blocks.
        n_heads: heads per block; ``embed_dim`` must be a multiple of it.
        embed_dim: ``D``, the width of the residual stream and of both tables.
        dtype: the dtype of every array, ``"float32"`` or ``"float64"``. float16 is refused: in
            it Adam's ``eps`` (1e-8) and the square of a gradient of 1e-4 round to 0, so a step
            divides by zero and training runs to inf and NaN (:class:`~gptembed.optim.Adam`
            refuses float16 arrays too); train in float32 and cast the result.
        scheme: how position enters, one of :data:`~gptembed.positions.SCHEMES` (see
            :mod:`gptembed.gpt`); ``"none"`` stands for :class:`~gptembed.optim.RunConfig`'s
            ``use_positions=False``, which is refused.
        rotary_base: the wavelength scale of the rotary angles (10,000, as in RoPE).
        sinusoidal_scale: what the sinusoidal table is multiplied by before it is added (used by
            ``"sinusoidal"`` only): :data:`~gptembed.embedding.INIT_STD`, the token rows' scale
            at initialisation, by default; chapter 10's control trains at 0.1, the trained token
            rows' scale.
        rotary_interpolation: ``s`` of position interpolation (Chen et al. 2023,
            arXiv:2306.15595; ``rope_scaling={"type": "linear", "factor": s}`` in Hugging Face
            transformers): rotary turns position ``m`` by the angles of ``m / s``, so that ``s``
            times the trained length turns through the trained angles only. 1 (no
            interpolation) by default; a number >= 1, and 1 for every scheme but ``"rotary"``.
        max_start: the most rows a training window's positions are moved by (randomised, or
            shifted, absolute positions: Kiyono et al. 2021, "SHAPE", arXiv:2109.05644; Ruoss et
            al. 2023, arXiv:2305.16843): the position table has ``seq_len + max_start`` rows,
            and each training window reads the ``seq_len`` rows from a start row drawn
            uniformly from ``[0, max_start]`` (:func:`gptembed.gpt.train`), so every row is
            trained while the windows stay ``seq_len`` long. 0 (every window at row 0) by
            default; above 0 for the absolute schemes only (``"learned"``, ``"sinusoidal"``):
            the others see distances alone, which a shift does not change.
        bos: prepend a beginning-of-sequence id, :data:`BOS_ID`, to every training window
            (:func:`gptembed.gpt.train` drops the window's last input for it, so the window stays
            ``seq_len`` long; :func:`gptembed.gpt.prepend_bos` does the same to held-out
            windows). A new id rather than the corpus's end-of-text ``"\\f"``: that one also
            occurs mid-window, while Kazemnejad et al.'s Theorem 1 (2023) needs a token that
            stands at position 0 of every window and nowhere else. Needs ``vocab_size`` above
            :data:`BOS_ID`, so that the token table has its row.
        warmup: steps over which the learning rate rises linearly from ``learning_rate / warmup``
            to ``learning_rate``; it then decays along a half cosine to a tenth of it by the
            last step, as nanoGPT's ``get_lr`` does.
    """

    vocab_size: int = VOCAB_SIZE
    seq_len: int = 128
    n_layers: int = 2
    n_heads: int = 4
    embed_dim: int = 64
    dtype: str = "float32"
    scheme: Scheme = "learned"
    rotary_base: float = 10000.0
    sinusoidal_scale: float = INIT_STD
    rotary_interpolation: float = 1.0
    max_start: int = 0
    learning_rate: float = 3e-3
    warmup: int = 100
    bos: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check(check_int, "vocab_size", "seq_len", "n_layers", "n_heads", "embed_dim")
        self._check(check_int, "warmup", "max_start", minimum=0)
        if self.embed_dim % self.n_heads:
            raise ValueError(
                f"embed_dim must be a multiple of n_heads, got embed_dim {self.embed_dim} "
                f"and n_heads {self.n_heads}"
            )
        if self.scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, got {self.scheme!r}")
        if not self.use_positions:
            raise ValueError("use_positions=False is scheme='none' here: pass that instead")
        self._check(check_float, "rotary_base", above=1)
        self._check(check_float, "sinusoidal_scale", above=0)
        self._keep(
            "rotary_interpolation",
            check_rotary_interpolation(self.scheme, self.rotary_interpolation),
        )
        if self.scheme not in ("learned", "sinusoidal") and self.max_start:
            raise ValueError(
                f"max_start moves an absolute scheme's table rows (learned, sinusoidal); a "
                f"{self.scheme!r} model sees distances alone, which a shift does not change, so "
                f"it must be 0, got {self.max_start}"
            )
        if not isinstance(self.bos, bool):
            raise TypeError(f"bos must be True or False, got {self.bos!r}")
        if self.bos and self.vocab_size <= BOS_ID:
            raise ValueError(
                f"bos=True needs vocab_size above the <bos> id {BOS_ID} (the corpus's "
                f"{VOCAB_SIZE} characters, then <bos>), got vocab_size {self.vocab_size}"
            )
        if self.scheme == "rotary" and (self.embed_dim // self.n_heads) % 2:
            raise ValueError(
                f"a rotary head's width embed_dim / n_heads must be even (it rotates pairs), got "
                f"{self.embed_dim} / {self.n_heads} = {self.embed_dim // self.n_heads}"
            )
        dtype = check_float_dtype(self.dtype)
        if dtype not in (np.float32, np.float64):
            raise TypeError(
                f"dtype must be float32 or float64, got {dtype}: in float16 Adam's eps (1e-8) "
                "and the square of a gradient of 1e-4 round to 0, and training runs to NaN"
            )
        self._keep("dtype", dtype.name)

    @classmethod
    def from_stored(cls, fields: dict[str, Any]) -> GPTConfig:
        """The config a stored run's header holds (``dataclasses.asdict`` of one), including the
        runs stored before the fields were named as the rest of the package names them
        (``n_layer`` and ``n_head``, now ``n_layers`` and ``n_heads``)."""
        renamed = {_STORED_NAMES.get(name, name): value for name, value in fields.items()}
        return cls(**renamed)

    @property
    def table_rows(self) -> int:
        """``L``, the position table's rows: ``seq_len + max_start``."""
        return self.seq_len + self.max_start

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """The shape of each array of the model this config makes, keyed and ordered as
        :meth:`~gptembed.gpt.GPT.parameters` (``V``, ``L``, ``D``, ``N`` the config's
        vocab_size, :attr:`table_rows`, embed_dim and n_layers): what
        :func:`~gptembed.gpt_runs.load` checks a file's arrays against before it makes the
        model."""
        vocab, rows, dim, layers = self.vocab_size, self.table_rows, self.embed_dim, self.n_layers
        return {
            "token_embeddings": (vocab, dim),
            "position_embeddings": (rows, dim),
            **{name: (layers, dim) for name in ("ln1_gain", "ln1_bias")},
            "w_attn": (layers, dim, 3 * dim),
            "b_attn": (layers, 3 * dim),
            "w_attn_proj": (layers, dim, dim),
            **{name: (layers, dim) for name in ("b_attn_proj", "ln2_gain", "ln2_bias")},
            "w_fc": (layers, dim, 4 * dim),
            "b_fc": (layers, 4 * dim),
            "w_mlp_proj": (layers, 4 * dim, dim),
            "b_mlp_proj": (layers, dim),
            **{name: (dim,) for name in ("lnf_gain", "lnf_bias")},
        }

    def learning_rate_at(self, step: int) -> float:
        """The learning rate of step ``step`` (0-based) of ``steps``: warmup, then cosine decay.

        With ``warmup=0`` the first step runs at ``learning_rate``; a step past the last runs at
        the last step's rate, a tenth of it.

        Raises:
            TypeError, ValueError: ``step`` is not an integer >= 0.
        """
        step = check_int("step", step, minimum=0)
        if step < self.warmup:
            return self.learning_rate * (step + 1) / self.warmup
        span = max(1, self.steps - 1 - self.warmup)
        progress = min(1.0, (step - self.warmup) / span)
        low = 0.1 * self.learning_rate
        return low + 0.5 * (1.0 + math.cos(math.pi * progress)) * (self.learning_rate - low)
