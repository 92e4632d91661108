"""The book's glue: a value handed to the prose, shown in the cell only when asked."""

from __future__ import annotations

import pytest

from gptembed.glue import glue


@pytest.mark.parametrize("display", ["no", 1, None])
def test_display_must_be_a_bool(display: object) -> None:
    """display="no" once showed the value: a truthy string counted as True."""
    with pytest.raises(TypeError, match=r"^display must be True or False, got"):
        glue("name", 3, display=display)  # type: ignore[arg-type]
