"""GPT-2's own position table, read from a ``model.safetensors`` you already have.

The book downloads nothing, so it cannot show GPT-2's trained table itself. A reader who has GPT-2
small's weights (the ``model.safetensors`` of ``openai-community/gpt2`` on the Hugging Face hub,
548 MB) can read its ``wpe`` table here with numpy alone, and run the book's instruments on it::

    from gptembed.gpt2_weights import position_table
    wpe = position_table("model.safetensors")  # (1024, 768), float32

The safetensors format (Hugging Face, https://github.com/huggingface/safetensors) is an 8-byte
little-endian header length ``N``, then ``N`` bytes of JSON naming each tensor's dtype, shape and
byte range, then the bytes. Only the header and the one table are read.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
from numpy.typing import NDArray

_WPE_NAMES = ("wpe.weight", "transformer.wpe.weight")
"""What GPT-2's checkpoints call the position table: the hub's ``model.safetensors`` stores
``wpe.weight``; one saved from ``GPT2LMHeadModel`` stores ``transformer.wpe.weight``."""

_MAX_HEADER = 100 * 2**20
"""The longest header read, in bytes (the safetensors library refuses longer ones too)."""

_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2"}
"""The float dtypes a table may be stored in, as numpy reads their bytes (BF16 as raw bits)."""


def _header(file: Any, size: int, where: str) -> tuple[dict[str, Any], int]:
    """The parsed JSON header of an open safetensors file of ``size`` bytes, and where its data
    starts."""
    prefix = file.read(8)
    if len(prefix) < 8:
        raise ValueError(f"{where} is not a safetensors file: {size} bytes, fewer than 8")
    length = int.from_bytes(prefix, "little")
    if not 2 <= length <= min(_MAX_HEADER, size - 8):
        raise ValueError(
            f"{where} is not a safetensors file: its header length {length:,} is not between 2 "
            f"and {min(_MAX_HEADER, max(size - 8, 2)):,} bytes"
        )
    try:
        header = json.loads(file.read(length))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{where} is not a safetensors file: its header is not JSON") from error
    if not isinstance(header, dict):
        raise ValueError(f"{where} is not a safetensors file: its header is not a JSON object")
    return header, 8 + length


def position_table(path: str | os.PathLike[str]) -> NDArray[np.float32]:
    """GPT-2's learned position table ``wpe``, ``(max_seq_len, D)`` in float32, from ``path``.

    Reads a safetensors file (GPT-2 small's: ``(1024, 768)``) and returns a new array. Tables
    stored in float16, bfloat16 or float64 are converted to float32 (float64 rounds).

    Raises:
        ValueError: ``path`` is not a safetensors file, holds no position table (``wpe.weight``
            or ``transformer.wpe.weight``), or its entry is not a 2-D float tensor whose bytes
            lie in the file.
        OSError: ``path`` cannot be read.
    """
    where = os.fspath(path)
    size = os.path.getsize(where)
    with open(where, "rb") as file:
        header, start = _header(file, size, where)
        name = next((n for n in _WPE_NAMES if n in header), None)
        if name is None:
            tensors = sorted(k for k in header if k != "__metadata__")
            raise ValueError(
                f"{where} holds no position table named {' or '.join(_WPE_NAMES)}; "
                f"its tensors: {', '.join(tensors[:8]) or 'none'}"
                f"{' ...' if len(tensors) > 8 else ''}"
            )
        entry = header[name]
        dtype = entry.get("dtype") if isinstance(entry, dict) else None
        shape = entry.get("shape") if isinstance(entry, dict) else None
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if dtype not in _DTYPES:
            raise ValueError(
                f"{where}: {name} has dtype {dtype!r}; a position table is one of "
                f"{', '.join(_DTYPES)}"
            )
        if not (
            isinstance(shape, list)
            and len(shape) == 2
            and all(isinstance(n, int) and n > 0 for n in shape)
        ):
            raise ValueError(f"{where}: {name} has shape {shape!r}, not (positions, width)")
        itemsize = np.dtype(_DTYPES[dtype]).itemsize
        nbytes = shape[0] * shape[1] * itemsize
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(n, int) for n in offsets)
            and 0 <= offsets[0]
            and offsets[1] - offsets[0] == nbytes
            and start + offsets[1] <= size
        ):
            raise ValueError(
                f"{where}: {name}'s byte range {offsets!r} does not hold {shape[0]} x {shape[1]} "
                f"{dtype} values ({nbytes:,} bytes) inside the file's {size - start:,} data bytes"
            )
        file.seek(start + offsets[0])
        raw = np.frombuffer(file.read(nbytes), dtype=_DTYPES[dtype]).reshape(shape)
    if dtype == "BF16":  # bfloat16 is float32's top half
        return (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.astype(np.float32)
