"""Hand a value computed in a chapter to the book's prose, so text and code cannot drift.

In the book, markdown cites a glued value with ``{glue:text}`name``` and myst-nb pastes it. A
reader running a downloaded chapter in plain Jupyter may not have myst-nb: there ``glue`` only
shows the value when asked to, and the chapter still runs top to bottom.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._checks import check_bool, check_int


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


def value_range(values: Iterable[float], digits: int = 2) -> str:
    """``"a to b"``: the smallest and the largest of ``values`` with ``digits`` decimals, for a
    sentence that states a result over several seeds or runs.

    >>> value_range([1.4781, 1.4642, 1.4683])
    '1.46 to 1.48'

    Raises:
        TypeError, ValueError: ``digits`` is not an integer >= 0.
        ValueError: no values.
    """
    digits = check_int("digits", digits, minimum=0)
    numbers = [float(v) for v in values]
    if not numbers:
        raise ValueError("value_range needs at least one value, got none")
    return f"{min(numbers):.{digits}f} to {max(numbers):.{digits}f}"
