"""What a report's figures cost (issue 26, item 8: "the report no more than ~1.5x the audit's time").

Timings live in ``benchmarks/report_cost.py``; here, the *causes* of the cost, each against something that fails
when it comes back:

* every figure is drawn once (``Figure.draw`` counted): a constrained-layout figure is laid out once and saved as
  laid out, the accountants' figure is cropped to a box measured without a draw -- and the PNG bytes decode to the
  very pixels matplotlib's own two-draw paths give (``savefig`` with the layout engine; ``bbox_inches="tight"``);
* log axes carry no unlabelled minor ticks; a title placed at ``y=1`` is where matplotlib's automatic placement
  puts it;
* what is drawn stays inside the figure and no two drawn labels overlap, now that nothing is cropped (the Renyi
  figure's long title is wrapped to its width, for 1, 2 and 3 panels);
* the report of a mechanism audit does not import the optimizers package (checked in a fresh interpreter).
"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402

import dpaudit  # noqa: E402
from dpaudit.report import compare_accountants, plots  # noqa: E402
from tests.support.figures import drawn_texts, overlapping, texts_outside  # noqa: E402


@pytest.fixture(scope="module")
def audits():
    mech = dpaudit.Laplace(1.0)
    return {name: dpaudit.audit_mechanism(getattr(mech, name), 0.0, 1.0, epsilon=1.0, trials=2000, seed=1).to_dict()
            for name in ("sample", "sample_textbook")}


@pytest.fixture(scope="module")
def accountants():
    return compare_accountants(dpaudit.PoissonSampled(dpaudit.Gaussian(1.0), 0.1), [1, 10, 100, 1000], delta=1e-5)


def renyi_rows(alphas):
    rows = []
    for k in (1, 10, 100):
        for a in alphas:
            rows.append({"steps": k, "alpha": a, "estimate": 0.01 * k * a, "lower": 0.005 * k * a,
                         "upper": 0.02 * k * a, "exact": 0.01 * k * a, "theorem1": 0.03 * k * a,
                         "theorem2": 0.004 * k * a, "composition": 0.05 * k * a, "confidence": 0.95})
    return rows


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)))


class DrawCounter:
    def __init__(self, monkeypatch):
        self.count = 0
        real = Figure.draw

        def draw(fig, renderer):
            self.count += 1
            return real(fig, renderer)

        monkeypatch.setattr(Figure, "draw", draw)


@pytest.mark.parametrize("linear", [True, False])
def test_roc_figure_is_drawn_once_and_saved_as_laid_out(audits, monkeypatch, linear):
    for audit in audits.values():
        counter = DrawCounter(monkeypatch)
        png = plots.roc_figure(audit, linear=linear)
        assert counter.count == 1
        monkeypatch.undo()
        fig = plots.draw_roc(audit, linear)
        FigureCanvasAgg(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=plots.DPI)  # matplotlib's own way: a draw to lay out, a draw to save
        ours, theirs = _pixels(png), _pixels(buf.getvalue())
        w, h = fig.get_size_inches() * plots.DPI
        assert ours.shape[:2] == (round(h), round(w))  # the whole figure, not a crop
        assert ours.shape == theirs.shape and np.array_equal(ours, theirs)


def test_accountants_figure_is_drawn_once_and_cropped_as_tight_would(accountants, monkeypatch):
    counter = DrawCounter(monkeypatch)
    png = plots.accountants_figure(accountants)
    assert counter.count == 1
    monkeypatch.undo()
    fig = plots.draw_accountants(accountants)
    FigureCanvasAgg(fig)
    counter = DrawCounter(monkeypatch)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=plots.DPI, bbox_inches="tight")
    assert counter.count == 2  # what the crop used to cost
    ours, theirs = _pixels(png), _pixels(buf.getvalue())
    assert ours.shape == theirs.shape and np.array_equal(ours, theirs)
    assert ours.shape[1] > fig.get_size_inches()[0] * plots.DPI  # the legend right of the axes is kept


@pytest.mark.parametrize("alphas", [[2.0], [2.0, 5.0], [2.0, 5.0, 10.0]])
def test_renyi_figure_is_drawn_once_with_its_title_inside(monkeypatch, alphas):
    counter = DrawCounter(monkeypatch)
    captured = {}
    real = plots._png

    def keep(fig, fmt="png"):
        captured["fig"] = fig
        return real(fig, fmt)

    monkeypatch.setattr(plots, "_png", keep)
    plots.renyi_figure(renyi_rows(alphas))
    assert counter.count == 1
    monkeypatch.undo()
    fig = captured["fig"]
    assert "\n" in fig.get_suptitle() or len(alphas) == 3  # wrapped where one line would not fit
    texts, width, height = drawn_texts(fig, plots.DPI)
    assert texts_outside(texts, width, height) == []
    assert overlapping(texts) == []


@pytest.mark.parametrize("linear", [True, False])
def test_roc_labels_inside_the_figure_and_apart(audits, linear):
    for audit in audits.values():
        texts, width, height = drawn_texts(plots.draw_roc(audit, linear), plots.DPI)
        assert len(texts) > 15  # tick labels, axis labels, title, legend entries
        assert texts_outside(texts, width, height) == []
        assert overlapping(texts) == []
        assert plots.text_overlaps(plots.draw_roc(audit, linear)) == []


def test_accountants_labels_apart(accountants):
    texts, _, _ = drawn_texts(plots.draw_accountants(accountants), plots.DPI)
    assert overlapping(texts) == []


def test_the_overlap_check_sees_an_overlap():
    fig = Figure(figsize=(3, 2), layout="constrained")
    ax = fig.add_subplot()
    ax.text(0.5, 0.5, "one label")
    ax.text(0.52, 0.5, "another label")
    texts, _, _ = drawn_texts(fig, plots.DPI)
    assert ("one label", "another label") in overlapping(texts)
    fig.suptitle("a title far wider than a three-inch figure can hold on one single line of ten-point text")
    texts, width, height = drawn_texts(fig, plots.DPI)
    assert [s for s, _ in texts_outside(texts, width, height)] == [fig.get_suptitle()]


def test_log_axes_have_no_minor_ticks(audits, accountants):
    figs = [plots.draw_roc(a, lin) for a in audits.values() for lin in (True, False)]
    figs.append(plots.draw_accountants(accountants))
    logs = 0
    for fig in figs:
        FigureCanvasAgg(fig).draw()
        for ax in fig.axes:
            for axis, scale in ((ax.xaxis, ax.get_xscale()), (ax.yaxis, ax.get_yscale())):
                if scale == "log":
                    logs += 1
                    assert len(axis.get_minorticklocs()) == 0
                    assert len(axis.get_majorticklocs()) >= 2
    assert logs >= 5


def test_a_title_at_y1_sits_where_matplotlib_would_place_it():
    boxes = []
    for fixed in (False, True):
        fig = Figure(figsize=(5, 4))
        ax = fig.add_subplot()
        ax.set_xscale("log")
        ax.set_xlim(1e-4, 1)
        if fixed:
            plots._title(ax, "Zoom on the certified point (log-log)")
        else:
            ax.set_title("Zoom on the certified point (log-log)", fontsize=10)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        boxes.append(tuple(ax.title.get_window_extent(canvas.get_renderer()).extents))
    assert boxes[0] == boxes[1]


def test_report_of_a_mechanism_audit_does_not_import_the_optimizers(tmp_path):
    code = f"""
import sys
import dpaudit
from dpaudit.report import write_report
res = dpaudit.audit_mechanism(dpaudit.Laplace(1.0).sample_textbook, 0.0, 1.0, epsilon=1.0, trials=500, seed=1)
path = write_report({str(tmp_path / "r.html")!r}, audit=res, mechanism=dpaudit.Laplace(1.0))
assert "exact" in path.read_text()
print(sorted(m for m in sys.modules if m.startswith(("dpaudit.optimizers", "dpaudit.accounting.pld",
                                                     "dpaudit.accounting.matrix_mechanism"))))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_html_embeds_each_figure_as_svg_drawn_once_at_the_png_size(audits, monkeypatch):
    import base64
    import re

    from dpaudit.report.writer import render_report

    counter = DrawCounter(monkeypatch)
    text, images = render_report(audit=[(name, a) for name, a in audits.items()], mechanism=dpaudit.Laplace(1.0))
    assert counter.count == 2 and images == {}  # one figure per audit, each drawn once; nothing beside the page
    monkeypatch.undo()
    found = re.findall(r'<img alt="[^"]*" width="(\d+)" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(found) == 2
    for (width, b64), audit in zip(found, audits.values()):
        svg = base64.b64decode(b64)
        assert svg.startswith(b"<?xml") and b"</svg>" in svg[-100:]
        png = _pixels(plots.roc_figure(audit))  # the PNG it replaces (and Markdown's file): same width on screen
        assert int(width) == png.shape[1]
    md, files = render_report(audit=[(name, a) for name, a in audits.items()], mechanism=dpaudit.Laplace(1.0),
                              fmt="md")
    assert sorted(files) == ["roc-2.png", "roc.png"] and all(f.startswith(b"\x89PNG") for f in files.values())
