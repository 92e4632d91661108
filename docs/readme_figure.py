"""Make docs/embedding-addition.png, README's picture: the intro's first figure, the layer's two
lookups and their sum for the toy sentence of chapter 1.

Run from the repository root: .venv/bin/python docs/readme_figure.py
"""

from pathlib import Path

from gptembed import GPTStyleEmbedding
from gptembed.layer_diagrams import plot_embedding_sum

vocab = ["the", "cat", "sat", "on", "mat", "."]
ids = [vocab.index(w) for w in ["the", "cat", "sat", "on", "the"]]
layer = GPTStyleEmbedding(vocab_size=len(vocab), max_seq_len=len(ids), embed_dim=4, seed=10)
fig = plot_embedding_sum(layer.token_embeddings, layer.position_embeddings, ids, tokens=vocab)
fig.savefig(Path(__file__).with_name("embedding-addition.png"), dpi=100)
