"""Make docs/embedding-addition.png, README's picture: chapter 1's figure, same toy sentence.

Run from the repository root: .venv/bin/python docs/readme_figure.py
"""

from pathlib import Path

from gptembed import GPTStyleEmbedding
from gptembed.plotting import plot_embedding_addition

vocab = ["the", "cat", "sat", "on", "mat", "."]
words = ["the", "cat", "sat", "on", "the"]
ids = [vocab.index(w) for w in words]
layer = GPTStyleEmbedding(vocab_size=len(vocab), max_seq_len=len(words), embed_dim=4, seed=10)
fig = plot_embedding_addition(
    layer.token_embeddings[ids],
    layer.position_embeddings[: len(ids)],
    row_labels=[f"{t} {w}" for t, w in enumerate(words)],
    highlight_rows=[0, 4],
)
fig.savefig(Path(__file__).with_name("embedding-addition.png"), dpi=100)
