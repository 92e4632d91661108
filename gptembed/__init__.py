"""gptembed: GPT-style learned position embeddings, their parameter cost, attention's memory cost.

The math lives in :mod:`gptembed.embedding`, :mod:`gptembed.models`, :mod:`gptembed.attention` and
:mod:`gptembed.training` (numpy only); figures live in :mod:`gptembed.plotting` (matplotlib),
imported on its own.
"""

from .attention import (
    attention_probs,
    attention_scores_bytes,
    format_bytes,
    loglog_slope,
    measure_attention_scores_peak,
    naive_attention_probs,
    peak_bytes,
)
from .embedding import INIT_STD, GPTStyleEmbedding
from .models import (
    MODELS,
    ModelConfig,
    ParameterCounts,
    config_embedding_counts,
    embedding_parameter_counts,
    transformer_parameter_count,
)

__all__ = [
    "INIT_STD",
    "MODELS",
    "GPTStyleEmbedding",
    "ModelConfig",
    "ParameterCounts",
    "attention_probs",
    "attention_scores_bytes",
    "config_embedding_counts",
    "embedding_parameter_counts",
    "format_bytes",
    "loglog_slope",
    "measure_attention_scores_peak",
    "naive_attention_probs",
    "peak_bytes",
    "transformer_parameter_count",
]

__version__ = "0.1.0"
