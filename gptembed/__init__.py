"""gptembed: GPT-style learned position embeddings, what they cost, and what training puts in them.

The package is a set of rooms, one idea each (numpy only, except the figure modules):

- :mod:`gptembed.embedding`: the layer, ``GPTStyleEmbedding``.
- :mod:`gptembed.positions`: position ids for padded batches, and the fixed sinusoidal table.
- :mod:`gptembed.models`: published GPT-2 and GPT-3 sizes and exact parameter arithmetic.
- :mod:`gptembed.attention_cost`: what attention costs as the context grows: memory and FLOPs.
- :mod:`gptembed.measure`: peak memory of a call, power-law slopes, byte counts for people.
- :mod:`gptembed.records`: the toy data, record streams whose layout is set by position.
- :mod:`gptembed.optim`: cross-entropy, evaluation, Adam and the training run the toy models share.
- :mod:`gptembed.readout`: the read-out model (embedding plus one linear map) and its training.
- :mod:`gptembed.lookback`: the toy task that only position can solve: copy the id k back.
- :mod:`gptembed.attention_terms`: a head's scores split into token and position terms, and
  a head's profile by lag.
- :mod:`gptembed.attention_model`: a one-head causal attention toy that must use position.
- :mod:`gptembed.crops`: reading a stream longer than the context, as nanoGPT's generate does.
- :mod:`gptembed.corpus`: real text that ships with the package, and passages cut from it.
- :mod:`gptembed.gpt`: a small GPT (GPT-2's architecture at toy scale) and its training;
  :mod:`gptembed.gpt_config`: its sizes, position scheme, dtype and learning-rate schedule;
  :mod:`gptembed.gpt_runs`: its runs saved and loaded, and the runs the package stores;
  :mod:`gptembed.gpt_terms`: its first scores split into token and position terms.
- :mod:`gptembed.position_schemes`: five ways to give the attention toy position (learned,
  sinusoidal, rotary, ALiBi, none), and running them past the trained length.
- :mod:`gptembed.probes`: looking inside a position table.
- :mod:`gptembed.plotting` and :mod:`gptembed.cost_figures`: the book's data figures, and
  :mod:`gptembed.layer_diagrams` and :mod:`gptembed.scheme_diagrams`: pictures of its ideas with
  their alt text (matplotlib), each imported on its own.
- :mod:`gptembed.samples` and :mod:`gptembed.glue`: sample GPT-2 ids, and the book's glue.

The names below are what a reader reaches for first: the layer, position ids and tables, model
sizes and parameter counts, attention's costs, and the measuring tools. The toy models and their
data are imported from their own modules (``from gptembed.readout import train``), the figures
from the figure modules.
"""

from importlib.metadata import version as _version

from .attention_cost import (
    FlopsPerToken,
    attention_flops_parity,
    attention_probs,
    attention_scores_bytes,
    flops_per_token,
    kv_cache_bytes,
    longest_context,
    measure_attention_scores_peak,
    naive_attention_probs,
    softmax_statistics_bytes,
)
from .embedding import INIT_STD, GPTStyleEmbedding
from .measure import format_bytes, loglog_slope, peak_bytes
from .models import (
    MODELS,
    ModelConfig,
    ParameterCounts,
    config_embedding_counts,
    embedding_parameter_counts,
    gpt_parameter_count,
    model_label,
    transformer_parameter_count,
)
from .positions import PAD_POSITION, position_ids_from_mask, sinusoidal_table

__all__ = [
    "INIT_STD",
    "MODELS",
    "PAD_POSITION",
    "FlopsPerToken",
    "GPTStyleEmbedding",
    "ModelConfig",
    "ParameterCounts",
    "attention_flops_parity",
    "attention_probs",
    "attention_scores_bytes",
    "config_embedding_counts",
    "embedding_parameter_counts",
    "flops_per_token",
    "format_bytes",
    "gpt_parameter_count",
    "kv_cache_bytes",
    "loglog_slope",
    "longest_context",
    "measure_attention_scores_peak",
    "model_label",
    "naive_attention_probs",
    "peak_bytes",
    "position_ids_from_mask",
    "sinusoidal_table",
    "softmax_statistics_bytes",
    "transformer_parameter_count",
]

__version__ = _version("gptembed")
"""The installed version, from the package's metadata (pyproject.toml's, where it is set)."""
