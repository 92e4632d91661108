"""The input layer's diagrams: each draws the package's own arithmetic, says the same in words,
refuses what it cannot draw, and keeps its text legible at the book's page width."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.patches import Rectangle

from gptembed import (
    GPTStyleEmbedding,
)
from gptembed.attention_model import AttentionConfig, cached_forward
from gptembed.attention_model import init_model as init_attention_model
from gptembed.layer_diagrams import (
    _KV_CACHED,
    _KV_DROPPED,
    _KV_EMPTY,
    _KV_NEW,
    describe_embedding_sum,
    describe_kv_cache,
    describe_padded_batch,
    plot_embedding_sum,
    plot_kv_cache,
    plot_padded_batch,
)
from gptembed.positions import (
    PAD_POSITION,
    position_ids_from_mask,
)
from tests.figure_checks import (
    assert_legible_diagram,
    images_by_label,
    texts_of,
)

pytestmark = pytest.mark.usefixtures("no_pyplot_figures")


# The concept diagrams: each draws the package's own arithmetic, says the same in words, refuses
# what it cannot draw, and keeps its text legible at the book's page width.

_WORDS = ["the", "cat", "sat", "on", "mat", "."]
_IDS = [0, 1, 2, 3, 0]  # "the cat sat on the"
_BATCH_IDS = [[50256, 50256, 464, 3797, 3332], [464, 3290, 3332, 319, 262]]
_BATCH_MASK = [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]]


def _toy_layer() -> GPTStyleEmbedding:
    return GPTStyleEmbedding(vocab_size=6, max_seq_len=5, embed_dim=4, seed=10)


def test_embedding_sum_draws_both_tables_the_picked_rows_and_the_layers_sum() -> None:
    layer = _toy_layer()
    wte, wpe = (t.astype(np.float64) for t in (layer.token_embeddings, layer.position_embeddings))
    fig = plot_embedding_sum(layer.token_embeddings, layer.position_embeddings, _IDS, tokens=_WORDS)
    images = images_by_label(fig)
    drawn = {label: np.asarray(image.get_array()) for label, image in images.items()}
    np.testing.assert_array_equal(drawn["token table"], wte)
    np.testing.assert_array_equal(drawn["position table"], wpe)
    np.testing.assert_array_equal(drawn["token rows"], wte[_IDS])
    np.testing.assert_array_equal(drawn["position rows"], wpe[:5])
    np.testing.assert_allclose(drawn["sum"], wte[_IDS] + wpe[:5], rtol=0, atol=1e-15)
    np.testing.assert_allclose(drawn["sum"], layer.forward(_IDS), rtol=1e-6)
    limits = {image.get_clim() for image in images.values()}
    (low, high), *others = limits
    assert not others and low == -high == -np.abs(drawn["sum"]).max()  # one centred scale
    texts = texts_of(fig)
    assert "t = 0, 4" in texts and "t = 1" in texts  # "the" is picked at 0 and 4
    labels = [t for t in texts if t[:1].isdigit() and t.split(" ", 1)[-1] in _WORDS]
    assert labels == ["0 the", "1 cat", "2 sat", "3 on", "4 the"]  # position and token
    assert "pick rows 0 to 4" in texts
    # the tables' names are the book's formulas' (W_token, W_position), not GPT-2's wte and wpe
    assert {"token table $W_{\\mathrm{token}}$", "$W_{\\mathrm{position}}$[0:5]"} <= set(texts)
    assert not [t for t in texts if "wte" in t or "wpe" in t]


def test_embedding_sum_fades_the_rows_a_short_sequence_skips() -> None:
    """A 2-token sequence of a 5-row position table: rows 2..4 faded, and so are 4 token rows."""
    layer = _toy_layer()
    fig = plot_embedding_sum(layer.token_embeddings, layer.position_embeddings, [4, 5])
    ax = fig.axes[0]
    veils = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_alpha() == 0.7]
    assert len(veils) == 4 + 1  # token rows 0..3 one by one, position rows 2..4 as one
    assert "pick rows 0 and 1" in texts_of(fig)
    assert ["id 4", "id 5"] == [t.split(" ", 1)[1] for t in texts_of(fig) if t[:2] in ("0 ", "1 ")]


def test_embedding_sum_refuses_bad_input() -> None:
    wte, wpe = np.zeros((6, 4)), np.zeros((5, 4))
    with pytest.raises(ValueError, match=r"one width D, got shapes \(6, 4\) and \(5, 3\)"):
        plot_embedding_sum(wte, np.zeros((5, 3)), [0])
    with pytest.raises(ValueError, match=r"token_table holds nan at index \(1, 2\)"):
        bad = wte.copy()
        bad[1, 2] = np.nan
        plot_embedding_sum(bad, wpe, [0])
    with pytest.raises(ValueError, match=r"token id 6 at index \(1,\) is out of range"):
        plot_embedding_sum(wte, wpe, [0, 6])
    with pytest.raises(ValueError, match="sequence length 6 at start_pos 0 exceeds max_seq_len 5"):
        plot_embedding_sum(wte, wpe, [0] * 6)
    with pytest.raises(ValueError, match=r"token_ids must have shape \(T,\) with T >= 1"):
        plot_embedding_sum(wte, wpe, [[0, 1]])
    with pytest.raises(TypeError, match="token_ids must be integers"):
        plot_embedding_sum(wte, wpe, [0.0])
    with pytest.raises(
        ValueError, match="tokens must name each of the token table's 6 rows, got 2"
    ):
        describe_embedding_sum(wte, wpe, [0], tokens=["a", "b"])
    with pytest.raises(ValueError, match=r"shape \(50, 4\): a diagram draws at most 16 rows"):
        plot_embedding_sum(np.zeros((50, 4)), wpe, [0])


def test_embedding_sum_described_in_words() -> None:
    layer = _toy_layer()
    text = describe_embedding_sum(
        layer.token_embeddings, layer.position_embeddings, _IDS, tokens=_WORDS
    )
    assert "\n" not in text
    assert "6 rows (one per token: 'the', 'cat', 'sat', 'on', 'mat' and '.') by 4 columns" in text
    assert "The sequence 'the' 'cat' 'sat' 'on' 'the' (ids 0, 1, 2, 3 and 0)" in text
    assert text.endswith("The token 'the' sits at positions 0 and 4: the same token row each "
                         "time, but different rows of x.")  # fmt: skip
    blank = describe_embedding_sum(np.ones((2, 2)), np.ones((2, 2)), [1], tokens="a\n")
    assert "one per token: 'a' and '\\n'" in blank  # a blank token is written visibly
    fig = plot_embedding_sum(np.ones((2, 2)), np.ones((2, 2)), [1], tokens="a\n")
    assert "0 '\\n'" in texts_of(fig)


def test_kv_cache_gives_each_new_token_the_cache_length_as_its_position() -> None:
    """The start_pos the figure gives each step is the length of the package's KVCache before
    that step (attention_model.cached_forward run on a tiny model), and the cache grows by one."""
    fig = plot_kv_cache(4, prompt_len=3)
    states = np.asarray(images_by_label(fig)["cache"].get_array())
    assert states.shape == (5, 7)
    model = init_attention_model(AttentionConfig(vocab_size=4, seq_len=7, embed_dim=4, head_dim=2))
    _, cache = cached_forward(model, [[1, 2, 3]])
    for step in range(1, 5):
        row = states[step]
        start = int(np.flatnonzero(row == _KV_NEW)[0])
        assert start == cache.length == int((row == _KV_CACHED).sum())
        assert (row[start + 1 :] == _KV_EMPTY).all()
        _, cache = cached_forward(model, [[0]], cache)
    np.testing.assert_array_equal(states[0], [_KV_NEW] * 3 + [_KV_EMPTY] * 4)
    bold = [t.get_text() for t in fig.axes[0].texts if t.get_fontweight() == "bold"]
    assert bold == ["0", "1", "2", "3", "4", "5", "6"]  # each new token's position id
    assert _KV_DROPPED not in states


def test_kv_cache_window_keeps_the_last_keys_while_positions_go_on() -> None:
    """As gpt.forward's window: the newest position i keeps keys j with i - j < window."""
    states = np.asarray(
        images_by_label(plot_kv_cache(6, prompt_len=3, window=4))["cache"].get_array()
    )
    for step, row in enumerate(states):
        newest = 2 if step == 0 else 2 + step
        j = np.arange(states.shape[1])
        kept = (j <= newest) & (newest - j < 4)
        np.testing.assert_array_equal(np.isin(row, (_KV_CACHED, _KV_NEW)), kept)
        np.testing.assert_array_equal(row == _KV_DROPPED, (j <= newest) & ~kept)
    text = describe_kv_cache(6, prompt_len=3, window=4)
    assert "from step 2 on, the oldest key is dropped" in text
    assert "the cache stays at 4 keys while start_pos goes on counting, to 8." in text
    assert "(3, 4, 5, 6, 7 and 8)" in text


def test_kv_cache_refuses_bad_input() -> None:
    for call in (plot_kv_cache, describe_kv_cache):
        with pytest.raises(ValueError, match="window must hold the prompt, >= prompt_len 3, got 2"):
            call(2, prompt_len=3, window=2)
        with pytest.raises(ValueError, match=r"got prompt_len 10 \+ n_steps 7 = 17"):
            call(7, prompt_len=10)
        with pytest.raises(ValueError, match="n_steps must be an integer >= 1, got 0"):
            call(0)
        with pytest.raises(TypeError, match=r"window must be an integer >= 1, got 2\.5"):
            call(2, window=2.5)  # type: ignore[arg-type]
    assert describe_kv_cache(1, prompt_len=1).startswith(
        "A grid of decoding steps (rows) by token positions (columns). Step 0 embeds the prompt's "
        "1 token at position 0 and caches its key and value. At the next step one new token"
    )


def test_padded_batch_draws_ids_mask_and_the_position_ids_of_the_mask() -> None:
    ids = np.array([[9, 9, 5, 7], [4, 6, 5, 7], [9, 9, 9, 3]])
    mask = np.array([[0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 1]])
    fig = plot_padded_batch(ids, mask)
    images = images_by_label(fig)
    assert list(images) == ["token ids", "attention mask", "position ids"]
    for label, expected in (
        ("token ids", ids),
        ("attention mask", mask),
        ("position ids", position_ids_from_mask(mask)),
    ):
        drawn = images[label].get_array()
        np.testing.assert_array_equal(drawn.data, expected)
        np.testing.assert_array_equal(drawn.mask, mask == 0)  # padding greyed in every grid
    np.testing.assert_array_equal(position_ids_from_mask(mask)[mask == 0], PAD_POSITION)
    cells = [t for t in fig.axes[0].texts if t.get_text().isdigit()]
    assert [t.get_text() for t in cells[:4]] == ["9", "9", "5", "7"]
    assert [to_rgba(t.get_color()) == to_rgba("black") for t in cells[:4]] == [
        False, False, True, True,
    ]  # fmt: skip
    text = describe_padded_batch(ids, mask)
    assert "Sequence 0 is left-padded with 2 slots: its positions read 0, 0, 0, 1." in text
    assert "Sequence 1 has no padding: its positions read 0, 1, 2, 3." in text
    assert "Sequence 2 is left-padded with 3 slots" in text
    others = describe_padded_batch(
        [[1, 2, 0], [0, 0, 0], [1, 0, 2]], [[1, 1, 0], [0] * 3, [1, 0, 1]]
    )
    assert "Sequence 0 is right-padded with 1 slot: its positions read 0, 1, 0." in others
    assert "Sequence 1 is all padding: its positions read 0, 0, 0." in others
    assert "Sequence 2 is padded with 1 slot: its positions read 0, 0, 1." in others


def test_padded_batch_refuses_bad_input() -> None:
    for call in (plot_padded_batch, describe_padded_batch):
        with pytest.raises(ValueError, match=r"attention_mask must have the ids' shape \(1, 3\)"):
            call([[1, 2, 3]], [[1, 1]])
        with pytest.raises(ValueError, match=r"attention_mask value 2 at index \(0, 1\)"):
            call([[1, 2]], [[1, 2]])
        with pytest.raises(TypeError, match="token_ids must be integers"):
            call([[1.0, 2.0]], [[1, 1]])
        with pytest.raises(ValueError, match=r"token_ids must have shape \(B, T\)"):
            call([1, 2], [1, 1])
        with pytest.raises(ValueError, match="token ids must be >= 0, got -1"):
            call([[-1, 2]], [[1, 1]])
        with pytest.raises(ValueError, match=r"at most 8 sequences of 12 slots.*\(1, 13\)"):
            call([[1] * 13], [[1] * 13])


def test_diagrams_are_deterministic() -> None:
    """Two calls draw the same picture, to the byte (no randomness, no hidden state)."""
    pictures = []
    for _ in range(2):
        buffer = io.BytesIO()
        plot_kv_cache(2, prompt_len=2).savefig(buffer, format="png", dpi=20)
        pictures.append(buffer.getvalue())
    assert pictures[0] == pictures[1]


_DIAGRAMS = {
    "embedding sum": lambda: plot_embedding_sum(
        _toy_layer().token_embeddings, _toy_layer().position_embeddings, _IDS, tokens=_WORDS
    ),
    "kv cache": lambda: plot_kv_cache(6, prompt_len=3, window=4),
    "padded batch": lambda: plot_padded_batch(_BATCH_IDS, _BATCH_MASK),
}


@pytest.mark.parametrize("name", list(_DIAGRAMS))
def test_every_diagram_is_legible_at_page_width_and_fits_its_figure(name: str) -> None:
    assert_legible_diagram(_DIAGRAMS[name](), name)
