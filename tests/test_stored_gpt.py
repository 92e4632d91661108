"""The small GPT stored in the package: it loads, it is the run its stored curve says, and the
first steps of ``tools/train_lm.py`` reproduce that curve."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from gptembed import gpt
from gptembed.corpus import held_out_stream, random_windows, train_stream
from gptembed.gpt import GPTConfig, evaluate, load, save, stored_run, train

DATA = Path(gpt.__file__).parent / "data"
SEEDS = (0, 1, 2)


def test_the_stored_runs_are_small() -> None:
    runs = sorted(DATA.glob("gpt_seed*.npz"))
    assert [p.name for p in runs] == [f"gpt_seed{s}.npz" for s in SEEDS]
    assert sum(p.stat().st_size for p in runs) <= 2 * 1024 * 1024


@pytest.mark.parametrize("seed", SEEDS)
def test_each_stored_run_has_its_seed_and_the_same_sizes(seed: int) -> None:
    run = stored_run(seed=seed)
    assert run.config == dataclasses.replace(stored_run(seed=0).config, seed=seed)
    assert run.config.seq_len >= 128
    assert len(run.losses) == run.config.steps
    assert run.held_out_steps[-1] == run.config.steps
    assert run.info["command"] == f"python tools/train_lm.py --seed {seed}"
    assert run.info["seconds"] > 0


def test_the_stored_weights_give_the_stored_held_out_loss() -> None:
    run = stored_run(seed=0)
    spec = run.info["held_out_windows"]
    windows = random_windows(
        held_out_stream(), spec["windows"], run.config.seq_len, seed=spec["seed"]
    )
    assert evaluate(run.model, *windows) == pytest.approx(run.held_out_losses[-1], rel=1e-4)
    # Read as float64, the same values: the loss agrees to float32's rounding.
    wide = stored_run(seed=0, dtype=np.float64)
    assert wide.config == run.config and wide.model.embedding.dtype == np.float64
    for name, array in run.model.parameters().items():
        np.testing.assert_array_equal(wide.model.parameters()[name], array, err_msg=name)
    assert evaluate(wide.model, *windows) == pytest.approx(run.held_out_losses[-1], rel=1e-4)


def test_the_first_steps_reproduce_the_stored_curve() -> None:
    """tools/train_lm.py's run, re-made for its first steps (all inside the warmup, whose rates
    do not depend on the run's length). Another CPU may round float32 differently, hence the
    tolerance; on the machine that stored the run the losses agree to the last bits."""
    run = stored_run(seed=0)
    steps = 4
    assert steps <= run.config.warmup
    again = train(dataclasses.replace(run.config, steps=steps), train_stream())
    np.testing.assert_allclose(again.losses, run.losses[:steps], rtol=1e-5)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    config = GPTConfig(vocab_size=7, seq_len=8, n_layer=1, n_head=2, embed_dim=8, steps=3)
    result = train(config, np.tile(np.arange(7), 20))
    stored = gpt.StoredRun(
        result.model, config, result.losses, np.array([3]), np.array([1.5]), {"note": "x"}
    )
    save(tmp_path / "run.npz", stored)
    back = load(tmp_path / "run.npz")
    assert back.config == config and back.info == {"note": "x"}
    for name, array in result.model.parameters().items():
        np.testing.assert_array_equal(back.model.parameters()[name], array, err_msg=name)
    np.testing.assert_allclose(back.losses, result.losses, rtol=1e-6)


def test_a_damaged_file_or_an_unknown_seed_is_refused(tmp_path: Path) -> None:
    with np.load(DATA / "gpt_seed0.npz") as data:
        arrays = dict(data)
    arrays["w_fc"] = arrays["w_fc"][:, :, :3]
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=r"w_fc must have shape \(2, 64, 256\), got \(2, 64, 3\)"):
        load(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="no stored run for seed 7"):
        stored_run(seed=7)
