"""Writing a chapter whole or not at all: what the tools that rewrite one in place share
(``store_outputs.py``, ``install_cell.py --write``)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any


def write_notebook(nb: Any, path: Path) -> None:
    """Replace the chapter at ``path`` with ``nb`` (an nbformat notebook), as ``nbformat.write``
    would write it, in one step.

    The text goes to a new file in the same folder, flushed to the disk, which then takes
    ``path``'s permissions and replaces it (``os.replace``, atomic within a file system): a write
    cut short by a full disk, Ctrl-C or a kill leaves the chapter as it was, with the author's
    edits in it (a kill may leave the hidden ``.tmp`` file).
    """
    import nbformat

    text = nbformat.writes(nb)
    data = (text if text.endswith("\n") else text + "\n").encode("utf8")
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        with open(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        shutil.copymode(path, temp)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
