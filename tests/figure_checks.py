"""What the figure tests check of any figure: its size on opaque white, legible text, labels."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

from gptembed._figures import DIAGRAM_WIDTH, FIGSIZE, MIN_TEXT_PX, smallest_text_px


def assert_fixed_opaque(fig: Figure, size: tuple[float, float]) -> None:
    """A figure of its own (not pyplot's), ``size`` inches, on opaque white."""
    assert type(fig) is Figure
    np.testing.assert_allclose(fig.get_size_inches(), size)
    assert to_rgba(fig.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)


def assert_legible_figure(fig: Figure, name: str) -> None:
    """Text at least MIN_TEXT_PX as the page shows it, and no wider than the page: a figure of
    several panels wraps them into rows rather than shrink them to a strip (the learner measured
    labels 5 px tall on two multi-panel heat maps)."""
    assert smallest_text_px(fig) >= MIN_TEXT_PX, name
    assert fig.get_size_inches()[0] <= FIGSIZE[0], name


def assert_legible_diagram(fig: Figure, name: str) -> None:
    """Text at least MIN_TEXT_PX as displayed, no label outside the figure (a PNG saved with a
    tight box would grow past the page and shrink), page width at most, opaque white."""
    assert smallest_text_px(fig) >= MIN_TEXT_PX
    width, height = fig.get_size_inches()
    box = fig.get_tightbbox()  # inches, laid out (smallest_text_px drew it)
    assert width <= DIAGRAM_WIDTH
    assert box.x0 >= -0.01 and box.y0 >= -0.01, (name, box)
    assert box.x1 <= width + 0.01 and box.y1 <= height + 0.01, (name, box, width, height)
    assert to_rgba(fig.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)


def images_by_label(fig: Figure) -> dict[str, AxesImage]:
    """Every image of the figure, by its label."""
    return {image.get_label(): image for ax in fig.axes for image in ax.get_images()}


def texts_of(fig: Figure) -> list[str]:
    """The text of every text artist on the figure's axes."""
    return [text.get_text() for ax in fig.axes for text in ax.texts]
