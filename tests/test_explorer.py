"""The cost explorer's numbers (gptembed.explorer): one setting, and the grid the page reads.

The explorer itself, in the browser, is tested in tests/book/test_explorer_in_browser.py.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from gptembed import MODELS, format_bytes, gpt_parameter_count
from gptembed.explorer import (
    ACCELERATORS,
    ATTENTION_MODES,
    EXPLORER_BATCH_SIZES,
    EXPLORER_DTYPES,
    EXPLORER_LENGTHS,
    context_costs,
    explorer_grid,
    format_share,
)

GIB = 2**30


def test_gpt2_small_at_its_own_context_by_hand() -> None:
    costs = context_costs(MODELS["gpt2-small"], 1024)
    assert costs.position_params == 1024 * 768
    assert costs.params == 124_439_808  # the published model: its table has 1,024 rows
    assert costs.position_share == pytest.approx(786_432 / 124_439_808, rel=1e-15)
    assert costs.weight_bytes == 4 * 124_439_808
    assert costs.scores_layer_bytes == 12 * 1024**2 * 4 == 48 * 2**20
    assert costs.scores_all_bytes == costs.kept_bytes == 576 * 2**20
    assert costs.kv_cache_bytes == 2 * 12 * 1024 * 768 * 4
    assert f"{costs.attention_share:.1%}" == "13.3%"
    assert f"{costs.attention_share_kaplan:.1%}" == "10.0%"
    assert costs.holds == tuple(ACCELERATORS)  # 576 MiB fits in every one


def test_the_three_modes_keep_different_things() -> None:
    cfg = MODELS["gpt2-small"]
    n, batch = 8192, 4
    eager, fused, decode = (
        context_costs(cfg, n, batch_size=batch, bytes_per_element=2, mode=mode)
        for mode in ("eager", "fused", "decode")
    )
    assert eager.scores_layer_bytes == batch * 12 * n * n * 2
    assert fused.scores_layer_bytes == batch * 12 * n * 4  # one fp32 number per row
    assert decode.scores_layer_bytes == batch * 12 * n * 2  # one row of n per head
    assert eager.kept_bytes == 12 * eager.scores_layer_bytes
    assert fused.kept_bytes == 12 * fused.scores_layer_bytes
    assert decode.kept_bytes == decode.kv_cache_bytes + decode.scores_layer_bytes
    # the mode changes only what attention keeps: parameters and FLOPs are the same
    assert eager.params == fused.params == decode.params
    assert eager.attention_share == fused.attention_share == decode.attention_share
    assert eager.scores_all_bytes == 4 * 18 * GIB  # 18 GiB a sequence in fp16 (the chapter)
    assert eager.holds == ("A100/H100 80 GB",)
    assert fused.holds == decode.holds == tuple(ACCELERATORS)


def test_holds_lists_the_accelerators_with_room_smallest_first() -> None:
    cfg = MODELS["gpt2-small"]
    # fp32 scores of all layers: 36 GiB at 8K tokens, past 24 and under 40
    assert context_costs(cfg, 8192).scores_all_bytes == 36 * GIB
    assert context_costs(cfg, 8192).holds == ("A100 40 GB", "A100/H100 80 GB")
    assert context_costs(cfg, 16_384).holds == ()  # 144 GiB
    memory = dict(ACCELERATORS)
    assert list(memory.values()) == sorted(memory.values())


def test_the_position_table_grows_with_the_context() -> None:
    cfg = MODELS["gpt2-small"]
    longest = context_costs(cfg, 2**20)
    assert longest.position_params == 2**20 * 768
    assert longest.params == gpt_parameter_count(50_257, 2**20, 768, 12)
    assert longest.position_share > 0.85  # a million rows outweigh the rest of GPT-2 small


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"seq_len": 0}, ValueError, r"seq_len must be an integer >= 1, got 0"),
        ({"seq_len": 1024.0}, TypeError, r"seq_len must be an integer >= 1, got 1024.0"),
        ({"batch_size": 0}, ValueError, r"batch_size must be an integer >= 1, got 0"),
        ({"bytes_per_element": 0}, ValueError, r"bytes_per_element must be an integer >= 1"),
        (
            {"mode": "lazy"},
            ValueError,
            r"mode must be one of 'eager', 'fused', 'decode', got 'lazy'",
        ),
    ],
)
def test_context_costs_refuse_bad_input(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        context_costs(MODELS["gpt2-small"], **({"seq_len": 1024} | kwargs))


def test_numpy_integers_are_taken_as_ints() -> None:
    costs = context_costs(
        MODELS["gpt2-small"], np.int32(1024), batch_size=np.int64(2), bytes_per_element=np.int8(2)
    )
    assert costs == context_costs(MODELS["gpt2-small"], 1024, batch_size=2, bytes_per_element=2)
    assert type(costs.kept_bytes) is int


def test_format_share_keeps_three_digits_without_exponents() -> None:
    assert format_share(0.133) == "13.3%"
    assert format_share(1.76e-7) == "0.0000176%"
    assert format_share(0.5) == "50%"
    assert format_share(0.99999) == "100%"


@pytest.fixture(scope="module")
def grid() -> dict:
    return explorer_grid()


def _setting_indices() -> itertools.product:
    return itertools.product(
        range(len(MODELS)),
        range(len(EXPLORER_LENGTHS)),
        range(len(EXPLORER_DTYPES)),
        range(len(EXPLORER_BATCH_SIZES)),
        range(len(ATTENTION_MODES)),
    )


def test_grid_spans_the_controls(grid: dict) -> None:
    assert EXPLORER_LENGTHS[0] == 256 and EXPLORER_LENGTHS[-1] == 2**20
    assert [m["key"] for m in grid["models"]] == list(MODELS)
    assert [length["tokens"] for length in grid["lengths"]] == list(EXPLORER_LENGTHS)
    assert grid["lengths"][-1]["label"] == "1,048,576 tokens"
    assert [d["bytes"] for d in grid["dtypes"]] == [4, 2]
    assert grid["batch_sizes"] == list(EXPLORER_BATCH_SIZES)
    assert [mode["key"] for mode in grid["modes"]] == ["eager", "fused", "decode"]
    assert grid["accelerators"] == list(ACCELERATORS)
    shape = np.array(grid["by_setting"], dtype=object).shape
    assert shape == (12, 13, 2, 7, 3, 6)
    assert np.array(grid["by_length"]).shape == (12, 13, 5)


def test_grid_looks_up_what_context_costs_computes(grid: dict) -> None:
    """Every setting the controls reach: the indices lead to this setting's values."""
    values, models = grid["values"], list(MODELS.values())
    for m, n, d, b, k in _setting_indices():
        costs = context_costs(
            models[m],
            EXPLORER_LENGTHS[n],
            batch_size=EXPLORER_BATCH_SIZES[b],
            bytes_per_element=grid["dtypes"][d]["bytes"],
            mode=grid["modes"][k]["key"],
        )
        shown = [values[i] for i in grid["by_setting"][m][n][d][b][k]]
        exact = [costs.weight_bytes, costs.kv_cache_bytes, costs.scores_layer_bytes]
        exact += [costs.scores_all_bytes, costs.kept_bytes]
        assert shown[:5] == [[str(x), format_bytes(x)] for x in exact]
        assert shown[5] == [list(costs.holds), ", ".join(costs.holds) or "none"]


def test_every_control_at_its_far_end_by_hand() -> None:
    """GPT-3 175B, a million tokens, fp16, a batch of 64: integers far past 2**53, exact."""
    costs = context_costs(MODELS["gpt3-175b"], 2**20, batch_size=64, bytes_per_element=2)
    assert costs.scores_layer_bytes == 64 * 96 * 2**40 * 2  # 12 PiB a layer
    assert costs.scores_all_bytes == costs.kept_bytes == 96 * costs.scores_layer_bytes
    assert costs.kv_cache_bytes == 2 * 96 * 2**20 * 12_288 * 64 * 2
    assert costs.position_params == 2**20 * 12_288
    assert costs.holds == ()


def test_grid_is_json_that_keeps_every_integer_exact(grid: dict) -> None:
    """Integers travel as strings: JavaScript's numbers are exact only up to 2**53."""
    text = json.dumps(grid)
    assert json.loads(text) == grid
    exact = [value for value, _ in grid["values"]]
    assert not any(isinstance(value, int) for value in exact)
    biggest = max(int(value) for value in exact if isinstance(value, str))
    assert biggest > 2**53  # GPT-3 175B's scores at a million tokens
    assert len({json.dumps(v) for v in grid["values"]}) == len(grid["values"])  # each value once


def test_a_model_name_for_a_config_is_refused_saying_what_to_pass() -> None:
    with pytest.raises(TypeError, match=r"pass MODELS\['gpt2-small'\], not the name 'gpt2-small'"):
        context_costs("gpt2-small", 1024)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="MODELS' keys: gpt2-small, gpt2-medium"):
        context_costs("gpt-2", 1024)  # type: ignore[arg-type]
