"""Store a chapter's outputs in one canonical form: `./dev execute` runs this after executing.

Re-running a chapter then changes its file only where its results changed:

- per-run timing metadata (`execution` in each cell's metadata) is dropped;
- consecutive stream outputs of one name are merged into one (the kernel splits a cell's
  prints into several outputs at points that vary from run to run);
- `language_info` keeps only the language name (not the Python version that ran it).

nbval merges streams the same way before it compares, so it still passes strictly. Each chapter is
written whole or not at all (``tools/_notebook_file.py``).

Usage: python tools/store_outputs.py book/NN_chapter.ipynb ...
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import nbformat

if __package__:  # imported, as tools.store_outputs
    from tools._notebook_file import write_notebook
else:  # run as a script, `python tools/store_outputs.py`: imports look in tools/ first
    from _notebook_file import write_notebook  # type: ignore[no-redef]


def merged_streams(outputs: list[Any]) -> list[Any]:
    """``outputs`` with each run of consecutive same-name stream outputs joined into one."""
    merged: list[Any] = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            output.get("output_type") == "stream"
            and previous is not None
            and previous.get("output_type") == "stream"
            and previous.get("name") == output.get("name")
        ):
            previous["text"] += output["text"]
        else:
            merged.append(output)
    return merged


def canonical(nb: Any) -> Any:
    """``nb`` (an nbformat notebook) in the stored form, changed in place and returned."""
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = merged_streams(cell.outputs)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def main(paths: list[str]) -> None:
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        write_notebook(canonical(nb), Path(path))


if __name__ == "__main__":
    main(sys.argv[1:])
