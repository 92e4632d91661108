"""The repository's tools, importable from its root (``from tools import install_cell``).

Each module is also a script, run from the root as ``python tools/NAME.py`` (``./dev`` does);
none of them is part of the package or its wheel.
"""
