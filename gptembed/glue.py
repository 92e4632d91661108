"""Hand a value computed in a chapter to the book's prose, so text and code cannot drift.

In the book, markdown cites a glued value with ``{glue:text}`name``` and myst-nb pastes it. A
reader running a downloaded chapter in plain Jupyter may not have myst-nb: there ``glue`` only
shows the value when asked to, and the chapter still runs top to bottom.
"""

from __future__ import annotations

from ._checks import check_bool


def glue(name: str, value: object, display: bool = False) -> None:
    """Record ``value`` under ``name`` for the page's prose; show it in the cell if ``display``.

    Raises:
        TypeError: ``display`` is not a bool.
    """
    display = check_bool("display", display)
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        if display:
            from IPython.display import display as show

            show(value)
        return
    myst_glue(name, value, display=display)
