"""gptembed.gpt2_weights reads a position table exactly from safetensors files the tests write
byte by byte (the format's own layout: length, JSON header, data), and refuses what is not one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gptembed.gpt2_weights import position_table


def _write(path: Path, tensors: dict[str, tuple[str, list[int], bytes]], pad: int = 0) -> Path:
    """A safetensors file of ``tensors`` (name: dtype, shape, bytes), in order, as the format
    lays it out; ``pad`` spaces end the header, as the library pads it to 8 bytes."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    data = b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    text = json.dumps(header).encode() + b" " * pad
    path.write_bytes(len(text).to_bytes(8, "little") + text + data)
    return path


TABLE = np.random.default_rng(0).normal(0, 0.02, (16, 8)).astype(np.float32)
OTHER = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("name", ["wpe.weight", "transformer.wpe.weight"])
def test_reads_the_table_exactly_among_other_tensors(tmp_path: Path, name: str) -> None:
    path = _write(
        tmp_path / "model.safetensors",
        {"wte.weight": ("F32", [2, 3], OTHER.tobytes()), name: ("F32", [16, 8], TABLE.tobytes())},
        pad=5,
    )
    table = position_table(path)
    assert table.dtype == np.float32 and table.shape == (16, 8)
    np.testing.assert_array_equal(table, TABLE)
    table[0, 0] = 1.0  # a new array, not a view of the file's bytes


def test_half_bfloat_and_double_tables_come_back_as_float32(tmp_path: Path) -> None:
    half = TABLE.astype(np.float16)
    bf16 = (TABLE.view(np.uint32) >> 16).astype(np.uint16)  # float32's top half
    for dtype, raw, expected in (
        ("F16", half.tobytes(), half.astype(np.float32)),
        ("BF16", bf16.tobytes(), (bf16.astype(np.uint32) << 16).view(np.float32)),
        ("F64", TABLE.astype(np.float64).tobytes(), TABLE),
    ):
        path = _write(tmp_path / f"{dtype}.safetensors", {"wpe.weight": (dtype, [16, 8], raw)})
        np.testing.assert_array_equal(position_table(path), expected, err_msg=dtype)
    # bfloat16 keeps float32's range and about 3 digits
    np.testing.assert_allclose(position_table(tmp_path / "BF16.safetensors"), TABLE, rtol=1e-2)


def _refused(path: Path, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        position_table(path)


def test_refuses_what_is_not_a_safetensors_file(tmp_path: Path) -> None:
    short = tmp_path / "short"
    short.write_bytes(b"\x01\x02")
    _refused(short, "fewer than 8")
    huge = tmp_path / "huge"
    huge.write_bytes((2**40).to_bytes(8, "little") + b"{}")
    _refused(huge, "header length 1,099,511,627,776 is not between 2 and 2 bytes")
    npy = tmp_path / "table.npy"
    np.save(npy, TABLE)
    _refused(npy, "header length")
    garbage = tmp_path / "garbage"
    garbage.write_bytes((4).to_bytes(8, "little") + b"\xff{[x")
    _refused(garbage, "not JSON")
    array = tmp_path / "array"
    array.write_bytes((2).to_bytes(8, "little") + b"[]")
    _refused(array, "not a JSON object")


def test_refuses_a_file_without_a_usable_table(tmp_path: Path) -> None:
    other = _write(tmp_path / "a", {"wte.weight": ("F32", [2, 3], OTHER.tobytes())})
    _refused(other, r"no position table named wpe\.weight or .*its tensors: wte\.weight")
    ints = _write(tmp_path / "b", {"wpe.weight": ("I32", [2, 3], OTHER.tobytes())})
    _refused(ints, "dtype 'I32'; a position table is one of F64, F32, F16, BF16")
    flat = _write(tmp_path / "c", {"wpe.weight": ("F32", [6], OTHER.tobytes())})
    _refused(flat, r"shape \[6\], not \(positions, width\)")
    wrong = _write(tmp_path / "d", {"wpe.weight": ("F32", [3, 3], OTHER.tobytes())})
    _refused(wrong, r"does not hold 3 x 3 F32 values \(36 bytes\)")
    cut = _write(tmp_path / "e", {"wpe.weight": ("F32", [16, 8], TABLE.tobytes())})
    cut.write_bytes(cut.read_bytes()[:-4])  # a download that stopped short
    _refused(cut, "inside the file's 508 data bytes")
