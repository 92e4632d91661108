"""Growing the small GPT's table and training it at the new length: the stored curves of chapter 9
are the runs ``tools/fine_tune_lm.py`` makes, and they say what the chapter says."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from gptembed.corpus import held_out_stream, random_passages, train_stream
from gptembed.embedding import EXTENSIONS
from gptembed.gpt import token_losses, train
from gptembed.gpt_runs import stored_run
from gptembed.growth import (
    GROWN_LEN,
    GrowthCurves,
    fine_tune_config,
    grown,
    load_growth,
    old_and_new,
    save_growth,
    stored_growth,
)
from tests.stored_files import savez_that_fails

SEEDS = (0, 1, 2)


@pytest.mark.parametrize("seed", SEEDS)
def test_each_stored_run_is_the_fine_tuning_of_that_seeds_model(seed: int) -> None:
    curves = stored_growth(seed=seed)
    assert curves.config == fine_tune_config(stored_run(seed=seed).config)
    assert curves.config.seq_len == GROWN_LEN and curves.trained_len == 128
    assert curves.info["command"] == f"python tools/fine_tune_lm.py --seed {seed}"
    assert curves.steps[0] == 0 and curves.steps[-1] == curves.config.steps
    for method in EXTENSIONS:
        assert curves.new[method].shape == curves.old[method].shape == curves.steps.shape
        assert curves.losses[method].shape == (curves.config.steps,)


def test_the_stored_curves_start_where_the_grown_models_are_and_their_first_steps_rerun() -> None:
    """Step 0 is each grown model before training, measured here again; then the first two
    steps of the stretched run, re-made (another CPU may round float32 differently)."""
    curves = stored_growth(seed=0)
    model = stored_run(seed=0).model
    spec = curves.info["held_out_windows"]
    windows = random_passages(held_out_stream(), spec["windows"], GROWN_LEN, seed=spec["seed"])
    for method in EXTENSIONS:
        old, new = old_and_new(grown(model, method), *windows, curves.trained_len)
        assert old == pytest.approx(curves.old[method][0], rel=1e-5), method
        assert new == pytest.approx(curves.new[method][0], rel=1e-5), method
    again = train(
        dataclasses.replace(curves.config, steps=2), train_stream(), grown(model, "interpolate")
    )
    np.testing.assert_allclose(again.losses, curves.losses["interpolate"][:2], rtol=1e-5)


@pytest.mark.parametrize("seed", SEEDS)
def test_stretched_rows_train_to_far_below_fresh_and_tiled_rows(seed: int) -> None:
    """What chapter 9 reports, on every seed: after fine-tuning, the stretched table is within a
    tenth of a nat of its old positions at the new ones, and fresh and tiled rows are over a nat
    worse."""
    curves = stored_growth(seed=seed)
    stretched = curves.new["interpolate"][-1]
    assert stretched - curves.old["interpolate"][-1] < 0.1
    for method in ("fresh", "tile"):
        assert curves.new[method][-1] > stretched + 1.0
        assert curves.new[method][-1] < curves.new[method][0]  # they do learn, slowly


def test_old_and_new_split_at_the_trained_length() -> None:
    model = stored_run(seed=0).model
    inputs, targets = random_passages(held_out_stream(), 2, 128, seed=0)
    old, new = old_and_new(model, inputs, targets, 100)
    losses = token_losses(model, inputs, targets)
    assert old == pytest.approx(losses[:, :100].mean()) and new == pytest.approx(
        losses[:, 100:].mean()
    )
    with pytest.raises(ValueError, match=r"trained_len must be below the passages' length 128"):
        old_and_new(model, inputs, targets, 128)
    with pytest.raises(ValueError, match=r"trained_len must be an integer >= 1, got 0"):
        old_and_new(model, inputs, targets, 0)


def _assert_same(back: GrowthCurves, curves: GrowthCurves) -> None:
    """``back`` holds what ``curves`` holds, each curve as float64 and the steps as intp."""
    assert back.config == curves.config and back.info == curves.info
    assert back.trained_len == curves.trained_len and type(back.trained_len) is int
    np.testing.assert_array_equal(back.steps, curves.steps, strict=False)
    assert back.steps.dtype == np.intp
    for name in ("old", "new", "losses"):
        assert list(getattr(back, name)) == list(EXTENSIONS)
        for method in EXTENSIONS:
            got, sent = getattr(back, name)[method], getattr(curves, name)[method]
            assert got.dtype == np.float64 and np.array_equal(got, sent), (name, method)


def _each(curve: np.ndarray) -> dict[str, np.ndarray]:
    return {method: curve for method in EXTENSIONS}


STORED = stored_growth(seed=1)

EDGE_CASES = {
    "as stored": STORED,
    "no step measured": dataclasses.replace(
        STORED,
        steps=np.array([], np.intp),
        old=_each(np.array([])),
        new=_each(np.array([])),
        losses=_each(np.array([])),
    ),
    "float32 and float16 curves": dataclasses.replace(
        STORED,
        old={m: c.astype(np.float32) for m, c in STORED.old.items()},
        new={m: c.astype(np.float16) for m, c in STORED.new.items()},
    ),
    "numpy integers": dataclasses.replace(
        STORED, trained_len=np.int64(128), steps=STORED.steps.astype(np.int32)
    ),
    "methods in another order": dataclasses.replace(STORED, old=dict(reversed(STORED.old.items()))),
    "empty info": dataclasses.replace(STORED, info={}),
}


@pytest.mark.parametrize("case", EDGE_CASES)
@pytest.mark.parametrize("name", ["c.npz", "c"])
def test_what_save_growth_writes_load_growth_reads_back(
    tmp_path: Path, case: str, name: str
) -> None:
    curves = EDGE_CASES[case]
    save_growth(tmp_path / name, curves)
    _assert_same(load_growth(tmp_path / name), curves)
    _assert_same(load_growth(str(tmp_path / name)), curves)
    assert [p.name for p in tmp_path.iterdir()] == ["c.npz"]


NOT_STORED = {
    "a method missing": (
        dataclasses.replace(STORED, new={"fresh": STORED.new["fresh"]}),
        ValueError,
        r"new must hold a curve for each of fresh, tile, interpolate, got 'fresh'$",
    ),
    "no method": (
        dataclasses.replace(STORED, old={}, new={}, losses={}),
        ValueError,
        r"old must hold a curve for each of fresh, tile, interpolate, got none",
    ),
    "a method of another name": (
        dataclasses.replace(STORED, losses={**STORED.losses, "stretch": STORED.losses["tile"]}),
        ValueError,
        r"losses must hold .* got 'fresh', 'tile', 'interpolate', 'stretch'",
    ),
    "a tuple in info": (
        dataclasses.replace(STORED, info={"held_out": (32, 5)}),
        ValueError,
        r"info must read back from JSON as it is \(lists, not tuples; str keys\)",
    ),
    "a number key in info": (
        dataclasses.replace(STORED, info={1: "one"}),
        ValueError,
        r"info must read back from JSON as it is",
    ),
    "a numpy integer in info": (
        dataclasses.replace(STORED, info={"seconds": np.int64(3)}),
        TypeError,
        r"info must hold JSON data .*: Object of type int64 is not JSON serializable",
    ),
    "steps that are not integers": (
        dataclasses.replace(STORED, steps=STORED.steps + 0.5),
        TypeError,
        r"steps must be integers, got dtype float64",
    ),
    "steps in 2-D": (
        dataclasses.replace(STORED, steps=STORED.steps[None]),
        ValueError,
        r"steps must be a 1-D array \(E,\), got shape \(1, 17\)",
    ),
    "a curve of another length": (
        dataclasses.replace(STORED, old={**STORED.old, "tile": STORED.old["tile"][:-1]}),
        ValueError,
        r"old\['tile'\] must be of the steps' shape \(17,\), got shape \(16,\)",
    ),
    "a complex curve": (
        dataclasses.replace(STORED, losses=_each(STORED.losses["tile"] + 0j)),
        TypeError,
        r"losses\['fresh'\] must hold real numbers, got dtype complex128",
    ),
    "a trained length that is not an integer": (
        dataclasses.replace(STORED, trained_len=128.0),
        TypeError,
        r"trained_len must be an integer >= 1, got 128.0",
    ),
}


@pytest.mark.parametrize("case", NOT_STORED)
def test_save_growth_refuses_curves_load_growth_would_not_read_back(
    tmp_path: Path, case: str
) -> None:
    curves, error, message = NOT_STORED[case]
    with pytest.raises(error, match=message):
        save_growth(tmp_path / "c.npz", curves)
    assert not list(tmp_path.iterdir())


def test_load_growth_refuses_a_file_without_every_methods_curves(tmp_path: Path) -> None:
    save_growth(tmp_path / "c.npz", STORED)
    with np.load(tmp_path / "c.npz") as data:
        kept = {k: data[k] for k in data.files if not k.endswith(("_tile", "_interpolate"))}
    np.savez(tmp_path / "partial.npz", **kept)
    with pytest.raises(ValueError, match=r"no curves for \['tile', 'interpolate'\]"):
        load_growth(tmp_path / "partial.npz")
    with pytest.raises(ValueError, match="no stored curves for seed 7"):
        stored_growth(seed=7)


def test_a_save_that_fails_partway_leaves_the_stored_curves_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.npz"
    save_growth(path, stored_growth(seed=1))
    before = path.read_bytes()

    monkeypatch.setattr(np, "savez", savez_that_fails(KeyboardInterrupt()))  # Ctrl-C
    with pytest.raises(KeyboardInterrupt):
        save_growth(path, stored_growth(seed=2))
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]
    monkeypatch.undo()
    save_growth(tmp_path / "d", stored_growth(seed=2))  # .npz added, as np.savez adds it
    assert load_growth(tmp_path / "d.npz").info == stored_growth(seed=2).info
