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
    sentence that states a result over several seeds or runs; one number where both read the
    same at ``digits`` decimals (a sentence would otherwise say "2.0 to 2.0"). A value that
    rounds to zero reads 0, not -0.

    >>> value_range([1.4781, 1.4642, 1.4683])
    '1.46 to 1.48'
    >>> value_range([2.001, 1.998])
    '2.00'

    Raises:
        TypeError, ValueError: ``digits`` is not an integer >= 0.
        ValueError: no values.
    """
    digits = check_int("digits", digits, minimum=0)
    numbers = [float(v) for v in values]
    if not numbers:
        raise ValueError("value_range needs at least one value, got none")
    # + 0.0 turns a -0.0 into 0.0; a value that rounds to zero is shown without its sign
    low, high = (f"{round(x, digits) + 0.0:.{digits}f}" for x in (min(numbers), max(numbers)))
    return low if low == high else f"{low} to {high}"
