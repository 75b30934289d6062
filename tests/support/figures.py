"""What a matplotlib figure really draws, measured for the report's layout tests (tests/report/): the drawn texts
with their boxes, the ones outside the canvas, and the pairs that overlap. An oracle kept apart from
:func:`dpaudit.report.plots.text_overlaps` (which reads every text object of the figure, drawn or not)."""

from __future__ import annotations


def drawn_texts(fig, dpi: float):
    """(the texts ``fig`` draws -- visible and non-empty -- with their boxes in pixels, canvas width, height) at
    ``dpi``. Only what is drawn counts: a tick outside the view keeps its label object, but is never drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    canvas = FigureCanvasAgg(fig)
    fig.set_dpi(dpi)
    seen = []
    real = Text.draw

    def record(self, renderer):
        if self.get_visible() and self.get_text().strip():
            seen.append(self)
        return real(self, renderer)

    Text.draw = record  # type: ignore[method-assign]
    try:
        canvas.draw()
    finally:
        Text.draw = real  # type: ignore[method-assign]
    renderer = canvas.get_renderer()
    width, height = canvas.get_width_height()
    return [(t.get_text(), t.get_window_extent(renderer)) for t in seen], width, height


def texts_outside(texts, width, height) -> list:
    """The drawn texts (with their rounded boxes) that reach outside the canvas by more than half a pixel."""
    return [(s, tuple(round(v) for v in bb.extents)) for s, bb in texts
            if bb.x0 < -0.5 or bb.y0 < -0.5 or bb.x1 > width + 0.5 or bb.y1 > height + 0.5]


def overlapping(texts) -> list:
    """The pairs of drawn texts whose boxes intersect by more than half a pixel."""
    return [(sa, sb) for i, (sa, a) in enumerate(texts) for sb, b in texts[i + 1:]
            if a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5]
