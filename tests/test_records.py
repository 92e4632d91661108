"""Record streams: the format, the targets, the loss floors, and the id <-> text mapping."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from gptembed._checks import check_record_format
from gptembed.records import (
    DIGITS,
    LETTERS,
    PUNCTUATION,
    VOCAB_SIZE,
    decode,
    loss_floor,
    make_records,
)


def test_records_follow_the_format_and_targets_are_the_next_character() -> None:
    inputs, targets = make_records(4, 13, "AA-99;", seed=3)
    assert inputs.shape == targets.shape == (4, 13)
    np.testing.assert_array_equal(inputs[:, 1:], targets[:, :-1])
    for row in inputs:
        text = decode(row)
        for t, ch in enumerate(text):
            field = "AA-99;"[t % 6]
            if field == "A":
                assert ch.isalpha()
            elif field == "9":
                assert ch.isdigit()
            else:
                assert ch == field


def test_random_offset_starts_inside_records() -> None:
    inputs, _ = make_records(200, 6, "A9-", seed=0, random_offset=True)
    firsts = {decode(row)[0] for row in inputs}
    assert "-" in firsts and any(c.isdigit() for c in firsts) and any(c.isalpha() for c in firsts)


def test_loss_floor_by_hand() -> None:
    # With positions: the next field is a letter, letter, '-', digit, digit, ';' in turn.
    expected = (2 * math.log(26) + 2 * math.log(10)) / 6
    assert loss_floor("AA-99;", 6, use_positions=True) == pytest.approx(expected)
    # Without: after a letter, half letters half '-'; after a digit, half digits half ';'.
    after_letter = math.log(2) + 0.5 * math.log(26)
    after_digit = math.log(2) + 0.5 * math.log(10)
    no_pos = (2 * after_letter + math.log(10) + 2 * after_digit + math.log(26)) / 6
    assert loss_floor("AA-99;", 6, use_positions=False) == pytest.approx(no_pos)


def test_an_ids_character_is_its_place_in_the_alphabet() -> None:
    alphabet = LETTERS + DIGITS + PUNCTUATION
    assert len(alphabet) == VOCAB_SIZE == 42
    assert decode(np.arange(VOCAB_SIZE)) == alphabet
    assert decode(np.array([[0, 1], [2, 3]], dtype=np.uint8)) == "ABCD"
    assert decode([]) == ""


@pytest.mark.parametrize(
    ("ids", "error", "message"),
    [
        ([-1], ValueError, r"^id -1 at index \(0,\) is out of range: ids must be in \[0, 42\)$"),
        ([0, 42], ValueError, r"^id 42 at index \(1,\) is out of range: ids must be in \[0, 42\)$"),
        ([1.0], TypeError, r"^ids must be integers in \[0, 42\), got dtype float64$"),
        ([True], TypeError, r"^ids must be integers in \[0, 42\), got dtype bool$"),
    ],
)
def test_decode_refuses_ids_outside_the_alphabet(ids: list, error: type, message: str) -> None:
    """decode([-1]) once returned '#', the alphabet's last character, without a word."""
    with pytest.raises(error, match=message):
        decode(ids)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: make_records(0, 5), ValueError, r"n_sequences must be an integer >= 1, got 0"),
        (lambda: make_records(2, 0), ValueError, r"seq_len must be an integer >= 1, got 0"),
        (lambda: make_records(2, 5, "A-x"), ValueError, r"character 'x' at index 2 is not"),
        (lambda: check_record_format("A-x", "-"), ValueError, r"literal from '-'"),
        (lambda: loss_floor("", 5, True), ValueError, r"at least 1 character, got ''"),
        (lambda: loss_floor("A9", 0, True), ValueError, r"seq_len must be an integer >= 1"),
    ],
)
def test_bad_input_names_the_value_and_the_range(
    call: Callable[[], object], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("value", ["no", 1, None, np.float64(0.0)])
def test_bool_arguments_must_be_bools(value: object) -> None:
    """random_offset="no" once counted as True (a truthy string), and so did use_positions=1."""
    with pytest.raises(TypeError, match=r"^random_offset must be True or False, got"):
        make_records(2, 5, random_offset=value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^use_positions must be True or False, got"):
        loss_floor("A9", 5, value)  # type: ignore[arg-type]


def test_numpy_bools_are_bools() -> None:
    assert loss_floor("A9", 5, np.bool_(True)) == loss_floor("A9", 5, True)
    first, _ = make_records(2, 5, random_offset=np.bool_(True), seed=3)
    np.testing.assert_array_equal(first, make_records(2, 5, random_offset=True, seed=3)[0])


@pytest.mark.parametrize(
    ("seed", "error", "message"),
    [
        (-1, ValueError, r"^seed must be an integer >= 0, got -1$"),
        (1.5, TypeError, r"^seed must be an integer >= 0, got 1.5 of type float$"),
        (True, TypeError, r"^seed must be an integer >= 0, got True of type bool$"),
    ],
)
def test_bad_seeds_are_refused(seed: object, error: type, message: str) -> None:
    """numpy's own errors once came from deep inside SeedSequence; True was taken as seed 1."""
    with pytest.raises(error, match=message):
        make_records(2, 5, seed=seed)  # type: ignore[arg-type]
