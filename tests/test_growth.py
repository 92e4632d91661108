"""Growing the small GPT's table and training it at the new length: the stored curves of chapter 9
are the runs ``tools/fine_tune_lm.py`` makes, and they say what the chapter says."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from gptembed.corpus import held_out_stream, random_windows, train_stream
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
    windows = random_windows(held_out_stream(), spec["windows"], GROWN_LEN, seed=spec["seed"])
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
    inputs, targets = random_windows(held_out_stream(), 2, 128, seed=0)
    old, new = old_and_new(model, inputs, targets, 100)
    losses = token_losses(model, inputs, targets)
    assert old == pytest.approx(losses[:, :100].mean()) and new == pytest.approx(
        losses[:, 100:].mean()
    )
    with pytest.raises(ValueError, match=r"trained_len must be below the windows' length 128"):
        old_and_new(model, inputs, targets, 128)
    with pytest.raises(ValueError, match=r"trained_len must be an integer >= 1, got 0"):
        old_and_new(model, inputs, targets, 0)


def test_save_and_load_round_trip_and_refuse_missing_curves(tmp_path: Path) -> None:
    curves = stored_growth(seed=1)
    save_growth(tmp_path / "c.npz", curves)
    back = load_growth(tmp_path / "c.npz")
    assert back.config == curves.config and back.info == curves.info
    for method in EXTENSIONS:
        np.testing.assert_array_equal(back.new[method], curves.new[method])
    partial = GrowthCurves(
        curves.config,
        curves.trained_len,
        curves.steps,
        {"fresh": curves.old["fresh"]},
        {"fresh": curves.new["fresh"]},
        {"fresh": curves.losses["fresh"]},
        curves.info,
    )
    save_growth(tmp_path / "partial.npz", partial)
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
