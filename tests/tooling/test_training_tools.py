"""The command line of `tools/train_lm.py` and `tools/fine_tune_lm.py` (`tools/_cli.py`): what
they are told is checked before they train for minutes (the runs themselves: tests/test_gpt.py
and tests/test_growth.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stored_files import load_tool

TOOLS = ["train_lm", "fine_tune_lm"]


def _no_training(*args: object, **kwargs: object) -> None:
    raise AssertionError("trained before the command line was checked")


def _refused(
    tool_name: str,
    args: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> str:
    """What argparse says when ``tool_name`` run with ``args`` stops, as it must, untrained."""
    tool = load_tool(tool_name, monkeypatch)
    monkeypatch.setattr(tool, "train", _no_training)
    monkeypatch.setattr(sys, "argv", [f"{tool_name}.py", *args])
    with pytest.raises(SystemExit) as exit_:
        tool.main()
    assert exit_.value.code == 2
    return capsys.readouterr().err


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[Path]:
    """A folder in which this process cannot make a file: a read-only one, or, for root (which
    writes in any folder of an ordinary file system), Linux's /sys."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        for candidate in (folder, Path("/sys")):
            try:
                (candidate / "probe").touch()
                (candidate / "probe").unlink()
            except OSError:
                yield candidate
                return
        pytest.skip("no folder here refuses this process a new file")
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("tool_name", TOOLS)
def test_an_out_in_a_folder_that_cannot_be_written_is_refused_before_training(
    tool_name: str,
    unwritable: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    said = _refused(tool_name, ["--out", str(unwritable / "run.npz")], monkeypatch, capsys)
    assert f"--out: cannot write a file in the folder {unwritable}: " in said
    assert not list(unwritable.glob(".run.npz*"))


@pytest.mark.parametrize("tool_name", TOOLS)
@pytest.mark.parametrize("given", ["-1", "-100", "1.5", "one", ""])
def test_a_seed_that_is_not_an_integer_from_0_is_refused_by_argparse(
    tool_name: str,
    given: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    said = _refused(tool_name, ["--seed", given], monkeypatch, capsys)
    assert f"argument --seed: must be an integer >= 0, got {given!r}" in said


def test_fine_tune_lm_takes_the_seed_of_a_stored_model_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    said = _refused("fine_tune_lm", ["--seed", "3"], monkeypatch, capsys)
    assert "argument --seed: invalid choice: 3 (choose from 0, 1, 2)" in said


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--shifted"],
            "--shifted needs --scheme: it makes one of chapter 10's runs beside its five",
        ),
        (["--scheme", "rotary", "--shifted"], "--shifted needs --scheme learned"),
        (["--scheme", "learned", "--interpolated"], "--interpolated needs --scheme rotary"),
        (["--scheme", "alibi", "--scaled"], "--scaled needs --scheme sinusoidal"),
        (
            ["--scheme", "rotary", "--interpolated", "--bos"],
            "one of --bos, --scaled, --interpolated, --shifted at a time, got --bos --interpolated",
        ),
    ],
)
def test_train_lm_refuses_a_flag_without_the_scheme_it_needs(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = load_tool("train_lm", monkeypatch)
    monkeypatch.setattr(tool, "train", _no_training)
    monkeypatch.setattr(sys, "argv", ["train_lm.py", *args])
    with pytest.raises(SystemExit) as exit_:
        tool.main()
    assert exit_.value.code == message


def test_train_lm_interpolated_needs_a_stored_rotary_run_of_the_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tool = load_tool("train_lm", monkeypatch)
    monkeypatch.setattr(tool, "train", _no_training)
    monkeypatch.setattr(sys, "argv", ["train_lm.py", "--scheme", "rotary", "--interpolated",
                                      "--seed", "7"])  # fmt: skip
    with pytest.raises(SystemExit) as exit_:
        tool.main()
    assert exit_.value.code == (
        "--interpolated fine-tunes the stored rotary run: no stored rotary run for seed 7: the "
        "package stores seeds 0, 1 and 2"
    )
