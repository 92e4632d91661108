"""The small GPT's stored runs: what save writes load reads back exactly, a save is whole or not
at all, the runs the package ships are what their commands train, and the tools that store them."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import tracemalloc
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from gptembed import gpt as gpt_module
from gptembed import gpt_runs
from gptembed._npz import npz_path
from gptembed.corpus import held_out_stream, random_passages, train_stream
from gptembed.gpt import GPT, at_length, evaluate, init_model, prepend_bos, train
from gptembed.gpt_config import BOS_ID, GPTConfig
from gptembed.gpt_runs import StoredRun, load, save, stored_run, stored_scheme_run
from gptembed.positions import SCHEMES
from tests.small_gpts import ONE_BLOCK
from tests.stored_files import load_tool, savez_that_fails

DATA = Path(gpt_runs.__file__).parent / "data"


SEEDS = (0, 1, 2)


def test_config_stores_python_numbers_and_the_dtype_by_name(tmp_path: Path) -> None:
    """Sizes were once checked but kept as the numpy scalars given, which save() could not write
    into its JSON header."""
    config = dataclasses.replace(
        ONE_BLOCK, seq_len=np.int64(8), warmup=np.int32(2), dtype=np.dtype(np.float64)
    )
    assert type(config.seq_len) is int and type(config.warmup) is int
    assert config == dataclasses.replace(ONE_BLOCK, warmup=2, dtype="float64")
    run = StoredRun(init_model(config), config, np.zeros(0), np.zeros(0, int), np.zeros(0), {})
    save(tmp_path / "run.npz", run)
    assert load(tmp_path / "run.npz").config == config


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


def test_the_scheme_runs_are_stored_for_five_schemes_and_three_seeds() -> None:
    runs = sorted(p.name for p in DATA.glob("scheme_*.npz") if not p.name.startswith(CONTROLLED))
    assert runs == sorted(f"scheme_{k}_seed{s}.npz" for k in SCHEMES for s in SEEDS)
    assert sum((DATA / name).stat().st_size for name in runs) <= 15 * 256 * 1024
    with pytest.raises(ValueError, match="scheme must be one of"):
        stored_scheme_run("relative")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no stored rotary run for seed 3"):
        stored_scheme_run("rotary", seed=3)


def test_every_scheme_run_names_its_scheme_seed_and_command() -> None:
    base = dataclasses.replace(stored_run(seed=0).config, seq_len=64)
    for scheme in SCHEMES:
        for seed in SEEDS:
            run = stored_scheme_run(scheme, seed=seed)
            assert run.config == dataclasses.replace(base, scheme=scheme, seed=seed)
            command = f"python tools/train_lm.py --scheme {scheme} --seed {seed}"
            assert run.info["command"] == command
            assert len(run.losses) == run.config.steps == run.held_out_steps[-1]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_each_scheme_run_is_what_its_command_trains(scheme: str) -> None:
    """The stored config is chapter 7's but for the length and the scheme; the first steps of
    ``tools/train_lm.py --scheme`` reproduce the stored curve; the stored weights, rounded to
    float16, still give the final held-out loss to within a hundredth of a nat."""
    run = stored_scheme_run(scheme, seed=0)
    base = stored_run(seed=0).config
    assert run.config == dataclasses.replace(base, seq_len=64, scheme=scheme)
    assert run.info["command"] == f"python tools/train_lm.py --scheme {scheme} --seed 0"
    steps = 3
    again = train(dataclasses.replace(run.config, steps=steps), train_stream())
    np.testing.assert_allclose(again.losses, run.losses[:steps], rtol=1e-5)
    spec = run.info["held_out_windows"]
    windows = random_passages(held_out_stream(), spec["windows"], 64, seed=spec["seed"])
    assert evaluate(run.model, *windows).loss == pytest.approx(run.held_out_losses[-1], abs=0.01)


CONTROLLED = ("scheme_bos_", "scheme_scaled_", "scheme_interpolated_", "scheme_shifted_")
CONTROL_RUNS = {
    "bos": "none",
    "scaled": "sinusoidal",
    "interpolated": "rotary",
    "shifted": "learned",
}
"""Chapter 10's controls and ways past the trained length, and the scheme each is stored for."""

CONTROL_CHANGES: dict[str, dict[str, Any]] = {
    "bos": {"bos": True, "vocab_size": BOS_ID + 1},
    "scaled": {"sinusoidal_scale": 0.1},
    "interpolated": {
        "seq_len": 256,
        "batch_size": 8,
        "rotary_interpolation": 4.0,
        "steps": 200,
        "warmup": 20,
    },
    "shifted": {"max_start": 192},
}
"""How each run's config differs from its scheme run's."""


def test_the_controls_are_stored_for_three_seeds_and_nothing_else() -> None:
    runs = sorted(p.name for p in DATA.glob("scheme_*.npz") if p.name.startswith(CONTROLLED))
    expected = [f"scheme_{c}_{k}_seed{s}.npz" for c, k in CONTROL_RUNS.items() for s in SEEDS]
    assert runs == sorted(expected)
    assert sum((DATA / name).stat().st_size for name in runs) <= len(runs) * 280 * 1024
    with pytest.raises(ValueError, match="control must be None or one of"):
        stored_scheme_run("none", control="eos")
    with pytest.raises(ValueError, match="no stored rotary run with control 'bos' for seed 0"):
        stored_scheme_run("rotary", control="bos")
    with pytest.raises(ValueError, match="no stored alibi run with control 'shifted' for seed 0"):
        stored_scheme_run("alibi", control="shifted")
    with pytest.raises(ValueError, match="no stored rotary run with control 'interpolated' for "
                       "seed 3"):  # fmt: skip
        stored_scheme_run("rotary", seed=3, control="interpolated")


def _control_windows(run: StoredRun, control: str) -> tuple[np.ndarray, np.ndarray]:
    """The held-out windows a control run's curve was measured on, as its info names them."""
    spec = run.info["held_out_windows"]
    length = run.config.seq_len
    windows = random_passages(held_out_stream(), spec["windows"], length, seed=spec["seed"])
    return prepend_bos(*windows) if control == "bos" else windows


def _control_start(run: StoredRun, control: str) -> GPT | None:
    """Where a control run's training started: the stored rotary run, interpolated and grown
    to the fine-tune's length, for ``"interpolated"``; a fresh model (None) for the others."""
    if control != "interpolated":
        return None
    rotary = stored_scheme_run("rotary", seed=run.config.seed).model
    return at_length(dataclasses.replace(rotary, rotary_interpolation=4.0), run.config.seq_len)


@pytest.mark.parametrize("control", sorted(CONTROL_RUNS))
def test_each_control_run_is_what_its_command_trains(control: str) -> None:
    """A control's config is its scheme run's but for the control (the fine-tune of
    ``--interpolated``: its length, batch, factor and schedule); its first steps re-run, from a
    fresh model or from the stored rotary run, match the stored curve, and its float16 weights
    give the final held-out loss."""
    scheme = CONTROL_RUNS[control]
    for seed in SEEDS:
        run = stored_scheme_run(scheme, seed=seed, control=control)  # type: ignore[arg-type]
        plain = stored_scheme_run(scheme, seed=seed).config  # type: ignore[arg-type]
        assert run.config == dataclasses.replace(plain, **CONTROL_CHANGES[control])
        command = f"python tools/train_lm.py --scheme {scheme} --{control} --seed {seed}"
        assert run.info["command"] == command
        assert len(run.losses) == run.config.steps == run.held_out_steps[-1]
    steps = 3
    start = _control_start(run, control)
    again = train(dataclasses.replace(run.config, steps=steps), train_stream(), start)
    np.testing.assert_allclose(again.losses, run.losses[:steps], rtol=1e-5)
    windows = _control_windows(run, control)
    assert evaluate(run.model, *windows).loss == pytest.approx(run.held_out_losses[-1], abs=0.01)
    if start is not None:  # the fine-tune's curve starts at step 0, before the first update
        assert run.held_out_steps.tolist() == list(range(0, 201, 20))


def test_prepend_bos_puts_bos_first_and_keeps_the_length() -> None:
    inputs, targets = np.array([[5, 6, 7]]), np.array([[6, 7, 8]])
    x, y = prepend_bos(inputs, targets)
    assert x.tolist() == [[BOS_ID, 5, 6]] and y.tolist() == [[5, 6, 7]]
    with pytest.raises(ValueError, match="one shape"):
        prepend_bos(inputs, targets[:, :2])
    with pytest.raises(ValueError, match=f"vocab_size above the <bos> id {BOS_ID}"):
        GPTConfig(bos=True)
    with pytest.raises(TypeError, match="bos must be True or False"):
        GPTConfig(bos=1)  # type: ignore[arg-type]


def test_a_bos_config_trains_on_windows_that_start_with_bos(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[np.ndarray] = []
    real = gpt_module.loss_and_grads

    def spy(model: GPT, inputs: np.ndarray, targets: np.ndarray, **kwargs: Any) -> Any:
        seen.append(np.asarray(inputs))
        return real(model, inputs, targets, **kwargs)

    monkeypatch.setattr(gpt_module, "loss_and_grads", spy)
    config = dataclasses.replace(ONE_BLOCK, bos=True, vocab_size=BOS_ID + 1, steps=1)
    train(config, train_stream())
    assert (seen[0][:, 0] == BOS_ID).all() and (seen[0][:, 1:] != BOS_ID).all()


def test_the_sinusoidal_scale_scales_the_table_and_survives_growing() -> None:
    config = dataclasses.replace(ONE_BLOCK, scheme="sinusoidal")
    small = init_model(config).embedding.position_embeddings
    large_model = init_model(dataclasses.replace(config, sinusoidal_scale=0.1))
    np.testing.assert_allclose(large_model.embedding.position_embeddings, 5 * small, rtol=1e-6)
    grown = at_length(large_model, 2 * config.seq_len).embedding.position_embeddings
    np.testing.assert_allclose(grown[: config.seq_len], 5 * small, rtol=1e-6)
    with pytest.raises(ValueError, match="sinusoidal_scale"):
        dataclasses.replace(config, sinusoidal_scale=0.0)


def test_the_stored_weights_give_the_stored_held_out_loss() -> None:
    run = stored_run(seed=0)
    spec = run.info["held_out_windows"]
    windows = random_passages(
        held_out_stream(), spec["windows"], run.config.seq_len, seed=spec["seed"]
    )
    assert evaluate(run.model, *windows).loss == pytest.approx(run.held_out_losses[-1], rel=1e-4)
    # Read as float64, the same values: the loss agrees to float32's rounding.
    wide = stored_run(seed=0, dtype=np.float64)
    assert wide.config == run.config and wide.model.embedding.dtype == np.float64
    for name, array in run.model.parameters().items():
        np.testing.assert_array_equal(wide.model.parameters()[name], array, err_msg=name)
    assert evaluate(wide.model, *windows).loss == pytest.approx(run.held_out_losses[-1], rel=1e-4)


def test_the_first_steps_reproduce_the_stored_curve() -> None:
    """tools/train_lm.py's run, re-made for its first steps (all inside the warmup, whose rates
    do not depend on the run's length). Another CPU may round float32 differently, hence the
    tolerance; on the machine that stored the run the losses agree to the last bits."""
    run = stored_run(seed=0)
    steps = 4
    assert steps <= run.config.warmup
    again = train(dataclasses.replace(run.config, steps=steps), train_stream())
    np.testing.assert_allclose(again.losses, run.losses[:steps], rtol=1e-5)


def test_runs_stored_with_the_old_field_names_still_load() -> None:
    """The stored runs' headers name n_layer and n_head; the package now says n_layers and
    n_heads, as ModelConfig and attention_cost do (issue 25)."""
    with np.load(DATA / "gpt_seed0.npz") as data:
        stored = json.loads(str(data["header"]))["config"]
    assert {"n_layer", "n_head"} <= stored.keys()
    config = GPTConfig.from_stored(stored)
    assert (config.n_layers, config.n_heads) == (stored["n_layer"], stored["n_head"])
    assert GPTConfig.from_stored(dataclasses.asdict(config)) == config


def test_the_new_fields_round_trip_and_runs_stored_without_them_still_load(
    tmp_path: Path,
) -> None:
    """rotary_interpolation and max_start are in the header of a run saved with them; the
    scheme runs stored before them name neither and load with 1 and 0."""
    for config in (
        dataclasses.replace(ONE_BLOCK, scheme="rotary", rotary_interpolation=2.5),
        dataclasses.replace(ONE_BLOCK, max_start=3),
    ):
        save(tmp_path / "run.npz", _stored(init_model(config), config))
        back = load(tmp_path / "run.npz")
        assert back.config == config and back.model.max_seq_len == config.table_rows
        assert back.model.rotary_interpolation == config.rotary_interpolation
    with np.load(DATA / "scheme_rotary_seed0.npz") as data:
        stored = json.loads(str(data["header"]))["config"]
    assert not {"rotary_interpolation", "max_start"} & stored.keys()
    config = stored_scheme_run("rotary").config
    assert (config.rotary_interpolation, config.max_start) == (1.0, 0)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    config = dataclasses.replace(ONE_BLOCK, steps=3)
    result = train(config, np.tile(np.arange(7), 20))
    stored = StoredRun(
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


def _stored(model: GPT, config: GPTConfig) -> StoredRun:
    return StoredRun(model, config, np.zeros(2), np.array([2]), np.array([1.5]), {})


def test_a_save_that_fails_partway_leaves_the_stored_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk, Ctrl-C or a kill while the .npz is written: the run stored before is kept
    byte for byte and no half-written file is left beside it."""
    path = tmp_path / "run.npz"
    save(path, _stored(init_model(ONE_BLOCK), ONE_BLOCK))
    before = path.read_bytes()

    monkeypatch.setattr(np, "savez", savez_that_fails(OSError(28, "No space left on device")))
    with pytest.raises(OSError, match="No space left"):
        save(path, _stored(init_model(ONE_BLOCK), dataclasses.replace(ONE_BLOCK, seed=1)))
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]


def test_save_adds_npz_as_numpy_does_and_refuses_a_folder(tmp_path: Path) -> None:
    save(tmp_path / "run", _stored(init_model(ONE_BLOCK), ONE_BLOCK))
    assert [p.name for p in tmp_path.iterdir()] == ["run.npz"]
    assert load(tmp_path / "run.npz").config == ONE_BLOCK
    assert npz_path(tmp_path / "run") == tmp_path / "run.npz"
    with pytest.raises(ValueError, match=f"{tmp_path} is a folder: name the file"):
        save(tmp_path, _stored(init_model(ONE_BLOCK), ONE_BLOCK))
    with pytest.raises(ValueError, match=f"the folder {tmp_path / 'no'} does not exist"):
        save(tmp_path / "no" / "run.npz", _stored(init_model(ONE_BLOCK), ONE_BLOCK))


def test_save_refuses_a_run_that_load_could_not_read(tmp_path: Path) -> None:
    model = init_model(ONE_BLOCK)
    grown = dataclasses.replace(model, embedding=model.embedding.extended(16, method="tile"))
    with pytest.raises(ValueError, match=r"seq_len 16 \(the config's 8\), position_embeddings"):
        save(tmp_path / "run.npz", _stored(grown, ONE_BLOCK))
    with pytest.raises(ValueError, match=r"its config: n_heads 2 \(the config's 1\)"):
        save(tmp_path / "run.npz", _stored(model, dataclasses.replace(ONE_BLOCK, n_heads=1)))
    with pytest.raises(ValueError, match=r"its config: scheme 'learned' \(the config's 'alibi'\)"):
        save(tmp_path / "run.npz", _stored(model, dataclasses.replace(ONE_BLOCK, scheme="alibi")))
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_run_stored_in_float16_loads_as_its_rounded_weights(scheme: str, tmp_path: Path) -> None:
    config = dataclasses.replace(ONE_BLOCK, scheme=scheme)
    model = init_model(config)
    save(tmp_path / "run", _stored(model, config), weights_dtype=np.float16)
    back = load(tmp_path / "run.npz", dtype=np.float64)
    assert back.config == config and back.model.scheme == scheme
    for name, array in model.parameters().items():
        expected = array.astype(np.float16).astype(np.float64)
        np.testing.assert_array_equal(back.model.parameters()[name], expected, err_msg=name)


def test_load_refuses_an_npz_that_is_not_a_stored_run(tmp_path: Path) -> None:
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(
        ValueError,
        match=r"not a stored run: it lacks header, losses, held_out_steps, held_out_losses",
    ):
        load(tmp_path / "other.npz")


def _no_training(*args: object, **kwargs: object) -> None:
    raise AssertionError("trained before the output path was checked")


@pytest.mark.parametrize("tool_name", ["train_lm", "fine_tune_lm"])
@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("missing/run.npz", r"--out: the folder \S+missing does not exist"),
        ("", r"--out: \S+ is a folder: name the file"),
    ],
)
def test_the_tools_check_their_out_path_before_training(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tool_name: str,
    out: str,
    message: str,
) -> None:
    tool = load_tool(tool_name, monkeypatch)
    monkeypatch.setattr(tool, "train", _no_training)
    monkeypatch.setattr(sys, "argv", [f"{tool_name}.py", "--out", str(tmp_path / out)])
    with pytest.raises(SystemExit):
        tool.main()
    assert re.search(message, capsys.readouterr().err)


def _tiny_train_lm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str) -> ModuleType:
    """train_lm made to train a tiny model for 2 steps into ``tmp_path / out``."""
    tool = load_tool("train_lm", monkeypatch)
    tiny = GPTConfig(seq_len=8, n_layers=1, n_heads=2, embed_dim=8, steps=2, warmup=1)
    monkeypatch.setattr(tool, "CONFIG", tiny)
    monkeypatch.setattr(tool, "HELD_OUT", random_passages(held_out_stream(), 2, 8, seed=0))
    monkeypatch.setattr(sys, "argv", ["train_lm.py", "--out", str(tmp_path / out)])
    return tool


def test_train_lm_stores_a_path_without_npz_where_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _tiny_train_lm(tmp_path, monkeypatch, "run").main()
    stored = tmp_path / "run.npz"
    assert f"stored {stored} ({stored.stat().st_size:,} bytes)" in capsys.readouterr().err
    assert load(stored).config.steps == 2


def test_train_lm_with_a_scheme_trains_that_scheme_and_stores_it_in_float16(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = _tiny_train_lm(tmp_path, monkeypatch, "run.npz")
    monkeypatch.setattr(tool, "SCHEME_LEN", 6)
    monkeypatch.setattr(sys, "argv", ["train_lm.py", "--scheme", "alibi", "--seed", "2"])
    monkeypatch.setattr(tool._cli, "DATA", tmp_path)
    tool.main()
    run = load(tmp_path / "scheme_alibi_seed2.npz")
    assert (run.config.scheme, run.config.seq_len, run.config.seed) == ("alibi", 6, 2)
    assert run.info["command"] == "python tools/train_lm.py --scheme alibi --seed 2"
    with np.load(tmp_path / "scheme_alibi_seed2.npz") as data:
        assert data["w_attn"].dtype == np.float16


def test_train_lm_shifted_trains_a_longer_table_at_moved_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = _tiny_train_lm(tmp_path, monkeypatch, "run.npz")
    monkeypatch.setattr(tool, "SCHEME_LEN", 6)
    monkeypatch.setattr(tool, "SHIFTED_ROWS", 18)
    monkeypatch.setattr(sys, "argv", ["train_lm.py", "--scheme", "learned", "--shifted"])
    monkeypatch.setattr(tool._cli, "DATA", tmp_path)
    tool.main()
    run = load(tmp_path / "scheme_shifted_learned_seed0.npz")
    assert (run.config.seq_len, run.config.max_start, run.model.max_seq_len) == (6, 18, 24)
    assert run.info["command"] == "python tools/train_lm.py --scheme learned --shifted --seed 0"


def test_train_lm_interpolated_fine_tunes_the_stored_rotary_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--interpolated starts from the stored rotary run of the seed (here a tiny one),
    interpolated by 4 at 4 times its length, and measures its held-out loss from step 0."""
    tool = _tiny_train_lm(tmp_path, monkeypatch, "run.npz")
    tiny = dataclasses.replace(tool.CONFIG, scheme="rotary", seq_len=6, seed=1)
    stored = _stored(init_model(tiny), tiny)
    monkeypatch.setattr(tool, "stored_scheme_run", lambda scheme, seed: stored)
    monkeypatch.setattr(sys, "argv", ["train_lm.py", "--scheme", "rotary", "--interpolated",
                                      "--seed", "1"])  # fmt: skip
    monkeypatch.setattr(tool._cli, "DATA", tmp_path)
    tool.main()
    run = load(tmp_path / "scheme_interpolated_rotary_seed1.npz")
    assert (run.config.seq_len, run.config.rotary_interpolation) == (24, 4.0)
    assert run.held_out_steps.tolist() == list(range(0, 201, 20))
    assert run.info["command"] == (
        "python tools/train_lm.py --scheme rotary --interpolated --seed 1"
    )


def test_ctrl_c_while_train_lm_trains_leaves_the_stored_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = tmp_path / "run.npz"
    stored.write_bytes(b"the run stored before")
    tool = _tiny_train_lm(tmp_path, monkeypatch, "run.npz")
    steps: list[int] = []

    def ctrl_c(model: GPT, *windows: object) -> float:  # called by gpt.train after a step
        steps.append(len(steps))
        raise KeyboardInterrupt

    monkeypatch.setattr(tool, "evaluate", ctrl_c)
    monkeypatch.setattr(tool, "HELD_OUT_EVERY", 1)
    with pytest.raises(KeyboardInterrupt):
        tool.main()
    assert steps == [0]
    assert stored.read_bytes() == b"the run stored before"
    assert list(tmp_path.iterdir()) == [stored]


def test_a_float64_model_round_trips_exactly_and_another_dtype_than_its_config_is_refused(
    tmp_path: Path,
) -> None:
    """A float64 model saved under a float32 config came back float32, its digits lost."""
    wide = dataclasses.replace(ONE_BLOCK, dtype="float64")
    model = init_model(wide)
    model.w_fc += 1e-12  # digits float32 does not hold
    save(tmp_path / "run.npz", _stored(model, wide))
    back = load(tmp_path / "run.npz").model
    for name, array in model.parameters().items():
        assert back.parameters()[name].dtype == np.float64
        np.testing.assert_array_equal(back.parameters()[name], array, err_msg=name)
    with pytest.raises(ValueError, match=r"dtype 'float64' \(the config's 'float32'\)"):
        save(tmp_path / "narrow.npz", _stored(model, ONE_BLOCK))
    assert not (tmp_path / "narrow.npz").exists()


def test_load_reads_the_file_save_wrote_for_a_path_without_npz(tmp_path: Path) -> None:
    """save("run") wrote run.npz, and load("run") looked for run and did not find it."""
    save(tmp_path / "run", _stored(init_model(ONE_BLOCK), ONE_BLOCK))
    assert load(tmp_path / "run").config == ONE_BLOCK
    assert load(str(tmp_path / "run")).config == ONE_BLOCK


def _run_file(tmp_path: Path) -> bytes:
    save(tmp_path / "run.npz", _stored(init_model(ONE_BLOCK), ONE_BLOCK))
    return (tmp_path / "run.npz").read_bytes()


def _with_header(tmp_path: Path, header: str) -> Path:
    with np.load(tmp_path / "run.npz") as data:
        arrays = dict(data)
    arrays["header"] = np.array(header)
    path = tmp_path / f"edited{len(list(tmp_path.glob('edited*')))}.npz"
    np.savez(path, **arrays)
    return path


def test_a_file_that_is_not_a_stored_run_is_refused_naming_it(tmp_path: Path) -> None:
    """A .npy, an empty file, a truncated one, a flipped byte in the weights and malformed headers
    raised TypeError, EOFError, BadZipFile, JSONDecodeError, KeyError and AttributeError where
    a ValueError was promised."""
    raw = _run_file(tmp_path)
    np.save(tmp_path / "one.npy", np.zeros(3))
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "cut.npz").write_bytes(raw[: len(raw) // 2])
    flipped = bytearray(raw)
    flipped[raw.index(b"w_fc.npy") + 200] ^= 0xFF
    (tmp_path / "flipped.npz").write_bytes(bytes(flipped))
    cases = [
        (
            tmp_path / "one.npy",
            r"not a \.npz file \(a path without \.npz is read as .*one\.npy\.npz",
        ),
        (tmp_path / "empty.npz", "it is empty"),
        (tmp_path / "cut.npz", "File is not a zip file"),
        (tmp_path / "flipped.npz", "Bad CRC-32 for file 'w_fc.npy'"),
        (_with_header(tmp_path, "{not json"), "its header is not JSON"),
        (_with_header(tmp_path, json.dumps({"info": {}})), "its header lacks 'config'"),
        (_with_header(tmp_path, json.dumps({"config": "x", "info": {}})), "its header's config"),
        (
            _with_header(tmp_path, json.dumps({"config": {"bogus": 1}, "info": {}})),
            "its header's config .*bogus",
        ),
    ]
    for path, message in cases:
        with pytest.raises(ValueError, match=f"{re.escape(str(path))}: .*{message}"):
            load(path)
    with (tmp_path / "one.npy").open("rb") as file:
        with pytest.raises(ValueError, match=r"one\.npy: not a stored run: it holds one array"):
            load(file)


def test_load_checks_the_arrays_against_the_header_before_allocating(tmp_path: Path) -> None:
    """A 2 KB file whose header claims a model of 4 GiB made load allocate that model before it
    read one array. Each array's name, shape and dtype is checked first, from the file's
    headers, without reading the arrays or making the model."""
    _run_file(tmp_path)
    huge = dataclasses.asdict(dataclasses.replace(ONE_BLOCK, vocab_size=2**27))
    path = _with_header(tmp_path, json.dumps({"config": huge, "info": {}}))
    assert path.stat().st_size < 20_000
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"token_embeddings must have shape \(134217728, 8\)"):
            load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024
    with np.load(tmp_path / "run.npz") as data:
        arrays = dict(data)
    arrays["w_fc"] = arrays["w_fc"].astype(np.int64)
    np.savez(tmp_path / "ints.npz", **arrays)
    with pytest.raises(ValueError, match=r"w_fc must be floating point, got int64"):
        load(tmp_path / "ints.npz")


def test_a_stored_scheme_run_is_the_scheme_and_seed_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """stored_scheme_run("alibi") returned whatever run sat under that file name."""
    _run_file(tmp_path)  # a learned run, seed 0

    def the_learned_run(name: str, seed: int, what: str, read: Any) -> Any:
        with (tmp_path / "run.npz").open("rb") as file:
            return read(file)

    monkeypatch.setattr(gpt_runs, "read_stored", the_learned_run)
    with pytest.raises(ValueError, match=r"the stored alibi run for seed 0 holds a 'learned' run"):
        stored_scheme_run("alibi")
    with pytest.raises(ValueError, match=r"the stored learned run for seed 2 holds seed 0's"):
        stored_scheme_run("learned", seed=2)
    with pytest.raises(ValueError, match=r"the stored run for seed 1 holds seed 0's"):
        stored_run(seed=1)
    with pytest.raises(ValueError, match=r"control 'shifted' for seed 0 holds another control's"):
        stored_scheme_run("learned", control="shifted")
