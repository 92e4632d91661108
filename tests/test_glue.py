"""The book's glue: a value handed to the prose, shown in the cell only when asked."""

from __future__ import annotations

import pytest

from gptembed.glue import glue, value_range


@pytest.mark.parametrize("display", ["no", 1, None])
def test_display_must_be_a_bool(display: object) -> None:
    """display="no" once showed the value: a truthy string counted as True."""
    with pytest.raises(TypeError, match=r"^display must be True or False, got"):
        glue("name", 3, display=display)  # type: ignore[arg-type]


def test_value_range_states_the_smallest_and_largest() -> None:
    assert value_range(x / 8 for x in (3, 1, 2)) == "0.12 to 0.38"
    assert value_range([2.0], digits=3) == "2.000"  # not "2.000 to 2.000"
    assert value_range([0.04, -0.04], digits=1) == "0.0"  # no "-0.0"
    assert value_range([-0.06, 0.04], digits=1) == "-0.1 to 0.0"
    with pytest.raises(ValueError, match="at least one value, got none"):
        value_range([])
    with pytest.raises(ValueError, match=r"digits must be an integer >= 0, got -1"):
        value_range([1.0], digits=-1)
