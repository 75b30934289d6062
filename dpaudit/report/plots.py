"""The report's figures, drawn with matplotlib (optional extra) into PNG bytes.

matplotlib is imported only when a figure is drawn, through its object-oriented API
(``matplotlib.figure.Figure`` + the Agg canvas): no pyplot state, no GUI backend, nothing changed
for the caller. Every figure has labelled axes with units, a legend, and log scales when the
plotted values span more than ``DECADES`` decades.
"""

from __future__ import annotations

import io
import math
import textwrap

import numpy as np

from dpaudit.core.display import bound_text
from dpaudit.report.data import dp_region_tpr
from dpaudit.report.summary import certified_side, delta_text, input_names

__all__ = ["ReportDependencyError", "require_matplotlib", "accountants_figure", "renyi_figure", "roc_figure",
           "DECADES", "readable_log_axis", "linear_panel_useful", "LINEAR_PANEL_MIN_RATE", "chosen_view",
           "text_overlaps", "draw_roc", "draw_accountants"]

#: use a log axis when max/min of the (positive) values exceeds 10**DECADES
DECADES = 1.5

_INSTALL_HINT = 'pip install "dpaudit[plot]"  (or: pip install matplotlib)'


class ReportDependencyError(ImportError):
    """matplotlib is needed to draw the report's plots and is not installed."""


def require_matplotlib():
    """Import matplotlib's Figure and Agg canvas, or raise :class:`ReportDependencyError`."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - exercised by monkeypatching in the tests
        raise ReportDependencyError(
            f"dpaudit reports draw their plots with matplotlib, which is not installed ({exc}). "
            f"Install it with: {_INSTALL_HINT}") from exc
    return Figure, FigureCanvasAgg


#: resolution of the report's raster figures (dots per inch)
DPI = 110


def _png(fig, fmt: str = "png") -> bytes:
    """``fig`` saved, drawn once.

    A figure with a layout engine (constrained: the ROC and Renyi figures) is laid out here, once, and saved as laid
    out: the engine is removed first, so ``savefig`` draws it a single time (matplotlib would otherwise draw it twice:
    once, without rendering, to lay it out, then for real). A figure without one (the accountants', whose legend lies
    right of its axes) is saved cropped to what is drawn plus matplotlib's usual pad, the box measured without a
    draw (``bbox_inches="tight"`` would draw it twice).
    """
    import matplotlib

    _, Canvas = require_matplotlib()
    canvas = Canvas(fig)
    fig.set_dpi(DPI)
    engine = fig.get_layout_engine()
    bbox = None
    if engine is not None:
        engine.execute(fig)
        with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
            fig.set_layout_engine(None)  # (None, not "none": a placeholder engine would make savefig lay out again)
    else:
        bbox = fig.get_tightbbox(canvas.get_renderer()).padded(matplotlib.rcParams["savefig.pad_inches"])
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=DPI, bbox_inches=bbox)
    return buf.getvalue()


def _title(ax, text: str) -> None:
    """A 10-point title on top of ``ax``. Nothing is drawn above the report's axes (no top ticks), so the title's
    place is fixed (``y=1``): where matplotlib would put it anyway, without measuring every tick label of the
    axes again at each layout pass and draw to find out."""
    ax.set_title(text, fontsize=10, y=1.0)


def _spans_decades(values) -> bool:
    v = np.asarray([x for x in values if x is not None and math.isfinite(x) and x > 0], dtype=float)
    return v.size >= 2 and v.max() / v.min() > 10**DECADES


def text_overlaps(fig) -> list[tuple[str, str]]:
    """The pairs of visible, non-empty texts of ``fig`` (tick labels, axis labels, titles, legend entries,
    annotations) whose boxes intersect once drawn: an empty list for a figure a reader can read."""
    _, Canvas = require_matplotlib()
    from matplotlib.text import Text

    canvas = Canvas(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    boxes = []
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and t.get_alpha() != 0:
            bb = t.get_window_extent(renderer)
            if bb.width > 0 and bb.height > 0:
                boxes.append((t.get_text(), bb))
    out = []
    for i, (ta, a) in enumerate(boxes):
        for tb, b in boxes[i + 1:]:
            if a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5:
                out.append((ta, tb))
    return out


def accountants_figure(data: dict, fmt: str = "png") -> bytes:
    """epsilon(delta) against the number of compositions, one line per accountant (``fmt``: any format matplotlib
    saves, default png)."""
    return _png(draw_accountants(data), fmt)


def draw_accountants(data: dict):
    """The matplotlib figure of :func:`accountants_figure`."""
    Figure, _ = require_matplotlib()
    fig = Figure(figsize=(7.0, 4.4))
    ax = fig.add_subplot()
    steps = data["steps"]
    styles = {"exact": dict(color="black", linestyle="--", linewidth=2.0, marker=None)}
    all_y = []
    markers = iter(["o", "s", "^", "D", "v", "P"])
    ignoring = set(data.get("ignores_sampling") or ())
    for label, ys in data["curves"].items():
        y = np.asarray(ys, dtype=float)
        finite = np.isfinite(y)
        all_y += y[finite].tolist()
        kw = styles.get(label) or dict(marker=next(markers, "o"), markersize=5, linewidth=1.4, alpha=0.85,
                                       markerfacecolor="none")
        shown = (f"{label}: ignores subsampling (no amplification), so it is far larger" if label in ignoring
                 else ("exact epsilon (closed form)" if label == data.get("exact_label") else label))
        ax.plot(np.asarray(steps)[finite], y[finite], label=shown, **kw)
    if _spans_decades(steps):
        ax.set_xscale("log")
        readable_log_axis(ax, "x", min(steps), max(steps))
    if _spans_decades(all_y):
        ax.set_yscale("log")
        lo, hi = min(v for v in all_y if v > 0), max(all_y)
        ax.set_ylim(lo / 1.15, hi * 1.15)
        readable_log_axis(ax, "y", lo / 1.15, hi * 1.15)
    ax.set_xlabel("number of compositions T (runs of the per-step mechanism)")
    ax.set_ylabel(f"epsilon at delta = {data['delta']:.0e} (upper bound; lower is tighter)")
    _title(ax, f"Per-step mechanism: {data['mechanism']}")
    ax.grid(True, which="major", alpha=0.35)
    ax.legend(title="accountant", fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def renyi_figure(rows: list[dict], fmt: str = "png") -> bytes:
    """Analytic curves and empirical estimates (with intervals) of D_alpha against steps, per alpha (``fmt``: any
    format matplotlib saves, default png)."""
    Figure, _ = require_matplotlib()
    alphas = sorted({r["alpha"] for r in rows})
    fig = Figure(figsize=(4.6 * len(alphas), 4.2), layout="constrained")
    axes = fig.subplots(1, len(alphas), squeeze=False)[0]
    analytic = [("composition", "composition bound (all iterates)", dict(color="tab:red", linestyle=":")),
                ("theorem1", "Theorem 1 upper bound", dict(color="tab:orange", linestyle="-")),
                ("exact", "exact (squared-loss instance)", dict(color="black", linestyle="--")),
                ("theorem2", "Theorem 2 lower bound", dict(color="tab:green", linestyle="-."))]
    for ax, a in zip(axes, alphas):
        sub = sorted((r for r in rows if r["alpha"] == a), key=lambda r: r["steps"])
        steps = np.array([r["steps"] for r in sub], dtype=float)
        all_y = []
        for key, label, kw in analytic:
            if all(key in r for r in sub):
                y = np.array([r[key] for r in sub], dtype=float)
                all_y += y[np.isfinite(y)].tolist()
                ax.plot(steps, y, label=label, linewidth=1.6, **kw)
        est = np.array([r["estimate"] for r in sub], dtype=float)
        lo = np.array([r["lower"] for r in sub], dtype=float)
        hi = np.array([r["upper"] for r in sub], dtype=float)
        top = max(all_y + est[np.isfinite(est)].tolist() + [1e-12]) * 3
        hi_plot = np.where(np.isfinite(hi), hi, top)
        lo_plot = np.maximum(lo, 0.0)
        conf = sub[0].get("confidence", 0.95)
        ax.errorbar(steps, est, yerr=[np.maximum(est - lo_plot, 0), np.maximum(hi_plot - est, 0)], fmt="o",
                    color="tab:blue", capsize=3, markersize=4, label=f"empirical estimate, {conf:.0%} interval")
        if _spans_decades(steps):
            ax.set_xscale("log")
            readable_log_axis(ax, "x", steps.min(), steps.max())
        pos = [v for v in all_y + est[est > 0].tolist() if v > 0]
        if _spans_decades(pos):
            ax.set_yscale("log")
            readable_log_axis(ax, "y", min(pos) / 1.2, max(pos) * 1.2)
        ax.set_xlabel("noisy GD steps K")
        ax.set_ylabel("Renyi divergence D_alpha (nats)")
        _title(ax, f"alpha = {a:g}")
        ax.grid(True, which="major", alpha=0.35)
    axes[0].legend(fontsize=8, loc="best")
    # wrapped to the figure's width (10-point text runs about 0.075 inch a character): saved as laid out, a line
    # wider than the figure would be cut off
    fig.suptitle(textwrap.fill("Linear-instance check (not the audited algorithm): noisy GD's last iterate on the "
                               "squared-loss instance, analytic bounds vs empirical Renyi divergence",
                               width=int((4.6 * len(alphas) - 0.4) / 0.075)), fontsize=10)
    return _png(fig, fmt)


def chosen_view(audit: dict):
    """Which guess the certified bound rests on, and the points of the plot in that view.

    The bound is max{log((1-delta-FNR+)/FPR+), log((1-delta-FPR+)/FNR+)} (Kairouz, Oh, Viswanath
    2015, Thm 2.1; :func:`dpaudit.report.summary.certified_side`). When the first term wins, the evidence is
    the guess of the second input, rare on the first: the view is (x = FPR, y = TPR). Otherwise it is the
    guess of the first input, rare on the second: (x = FNR, y = TNR). The region an (epsilon, delta)-DP
    mechanism allows is the same in both views (y <= min(1, delta + e^eps x, 1 - e^-eps (1 - delta - x))), so
    one drawing serves both; the axes are labelled in the words of the guess.
    """
    details = audit.get("details") or {}
    roc = details.get("roc") or {}
    test = details.get("threshold_test") or {}
    fpr_u, fnr_u = test.get("fpr_upper"), test.get("fnr_upper")
    fpr_e = np.asarray(roc.get("fpr", []), dtype=float)
    tpr_e = np.asarray(roc.get("tpr", []), dtype=float)
    side = certified_side(audit) or "fpr"
    n0, n1 = test.get("n0"), test.get("n1")
    est = None
    if n0 and n1 and "k_fp" in test and "k_fn" in test:
        est = (test["k_fp"] / n0, test["k_fn"] / n1)
    a, b, _ = input_names(audit)
    if side == "fpr":
        corner = None if fpr_u is None else (float(fpr_u), 1.0 - float(fnr_u))  # type: ignore[arg-type]  # both or neither
        point = None if est is None else (est[0], 1.0 - est[1])
        curve = (fpr_e, tpr_e)
        labels = (f'guess "{b}" on runs of {a} (false alarms)', f'guess "{b}" on runs of {b} (hits)')
    else:
        corner = None if fnr_u is None else (float(fnr_u), 1.0 - float(fpr_u))  # type: ignore[arg-type]  # both or neither
        point = None if est is None else (est[1], 1.0 - est[0])
        curve = (1.0 - tpr_e, 1.0 - fpr_e)
        labels = (f'guess "{a}" on runs of {b} (misses)', f'guess "{a}" on runs of {a} (correct)')
    return {"side": side, "corner": corner, "point": point, "curve": curve, "labels": labels}


#: the linear-axis ROC panel is drawn only when the certified point is at least this far from the axis
LINEAR_PANEL_MIN_RATE = 0.02


def linear_panel_useful(audit: dict) -> bool:
    """True when the certified point can be told apart from the axis on linear axes."""
    corner = chosen_view(audit)["corner"]
    return corner is not None and corner[0] >= LINEAR_PANEL_MIN_RATE


def _fmt_tick(v: float) -> str:
    if v >= 1e-3:
        text = f"{v:.6f}".rstrip("0").rstrip(".")
        return text if v < 1000 else f"{v:,.0f}"
    return f"{v:.0e}".replace("e-0", "e-")


def readable_log_axis(ax, which: str, lo: float, hi: float) -> list[float]:
    """Ticks a reader can read on a log axis from ``lo`` to ``hi``: every decade, plus 2 and 5 times
    each decade when the range spans at most four decades, labelled in plain numbers
    (``0.001``, ``0.02``, ``50``; ``1e-5`` below 0.001). Returns the ticks."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    lo, hi = float(lo), float(hi)
    k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    mults = (1, 2, 5) if k1 - k0 <= 4 else (1,)
    step = max(1, math.ceil((k1 - k0 + 1) / 9)) if mults == (1,) else 1
    ticks = [m * 10.0**k for k in range(k0, k1 + 1, step) for m in mults if lo <= m * 10.0**k * (1 + 1e-9)
             and m * 10.0**k <= hi * (1 + 1e-9)]
    if len(ticks) < 2:
        ticks = [lo, hi]
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: _fmt_tick(v)))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())
    return ticks


def _log_limits(values, pad: float = 1.3, floor: float = 1e-12):
    v = np.asarray([x for x in values if x is not None and math.isfinite(x) and x > 0], dtype=float)
    if v.size == 0:
        return 0.1, 1.0
    lo, hi = max(v.min() / pad, floor), v.max() * pad
    if hi / lo < 10:  # widen to a decade around the geometric centre (lo * hi may overflow)
        centre = math.sqrt(lo) * math.sqrt(hi)
        lo, hi = centre / math.sqrt(10) / 1.2, centre * math.sqrt(10) * 1.2
    return lo, hi


def _zoom_panel(ax, audit: dict, view: dict):
    """Log-log panel around the certified point (module docstring of :func:`roc_figure`)."""

    eps_c, delta = _num(audit.get("epsilon_claimed")), _num(audit.get("delta"))
    delta = 0.0 if not math.isfinite(delta) else delta
    eps_l = _num(audit.get("epsilon_lower"))
    conf = _num(audit.get("confidence"))
    corner, point = view["corner"], view["point"]
    xs = [p[0] for p in (corner, point) if p is not None and p[0] > 0]
    x_lo = max(min(xs) / 30.0, 1e-7) if xs else 1e-4
    x_hi = min(1.0, max(xs) * 30.0) if xs else 1.0
    if x_hi / x_lo < 100:
        x_lo = max(x_hi / 100.0, 1e-9)
    grid = np.geomspace(x_lo, x_hi, 400)
    ys = [p[1] for p in (corner, point) if p is not None and p[1] > 0]
    y_lo = max(min(ys) / 20.0, 1e-9) if ys else x_lo
    if math.isfinite(eps_c):
        bound = dp_region_tpr(grid, eps_c, delta)
        ax.fill_between(grid, y_lo, bound, color="tab:green", alpha=0.15, linewidth=0)
        ax.plot(grid, bound, color="tab:green", linewidth=1.8,
                label=f"allowed by the claim: epsilon = {bound_text(eps_c, up=True)}, {delta_text(delta)}")
    if math.isfinite(eps_l) and eps_l > 0:
        ax.plot(grid, dp_region_tpr(grid, eps_l, delta), color="tab:red", linestyle="--", linewidth=1.4,
                label=f"boundary at the certified epsilon = {bound_text(eps_l, up=False)}")
    cx, cy = view["curve"]
    keep = (cx > 0) & (cy > 0) & (cx >= x_lo) & (cx <= x_hi)
    if np.any(keep):
        order = np.argsort(cx[keep])
        ax.plot(cx[keep][order], cy[keep][order], color="tab:blue", linewidth=1.1, marker=".", markersize=3,
                label="the attack, measured (point estimates; not a bound)")
    ax.plot(grid, grid, color="grey", linewidth=0.9, linestyle=":", label="random guessing")
    if point is not None and point[0] > 0 and point[1] > 0:
        ax.plot([point[0]], [point[1]], marker="o", markersize=8, markerfacecolor="none", markeredgecolor="tab:blue",
                linestyle="none", label="the chosen test, measured")
    if corner is not None and corner[0] > 0 and corner[1] > 0:
        if point is not None and point[0] > 0 and point[1] > 0:
            ax.annotate("", xy=corner, xytext=point,
                        arrowprops=dict(arrowstyle="->", color="tab:purple", linewidth=1.0))
        certified = (f": epsilon >= {bound_text(eps_l, up=False)}" if math.isfinite(eps_l) and eps_l > 0 else "")
        ax.plot([corner[0]], [corner[1]], marker="*", markersize=15, color="tab:purple", linestyle="none",
                label=f"certified point, both rates at their {conf:.0%} worst case{certified}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, 1.25)
    readable_log_axis(ax, "x", x_lo, x_hi)
    readable_log_axis(ax, "y", y_lo, 1.0)
    ax.set_xlabel(view["labels"][0] + ", log scale")
    ax.set_ylabel(view["labels"][1] + ", log scale")
    ax.grid(True, which="major", alpha=0.35)
    _title(ax, "Zoom on the certified point (log-log)")


def _linear_panel(ax, audit: dict, view: dict):

    eps_c, delta = _num(audit.get("epsilon_claimed")), _num(audit.get("delta"))
    delta = 0.0 if not math.isfinite(delta) else delta
    eps_l = _num(audit.get("epsilon_lower"))
    grid = np.linspace(0.0, 1.0, 400)
    if math.isfinite(eps_c):
        bound = dp_region_tpr(grid, eps_c, delta)
        ax.fill_between(grid, 0, bound, color="tab:green", alpha=0.15, linewidth=0)
        ax.plot(grid, bound, color="tab:green", linewidth=1.6)
    if math.isfinite(eps_l) and eps_l > 0:
        ax.plot(grid, dp_region_tpr(grid, eps_l, delta), color="tab:red", linestyle="--", linewidth=1.2)
    cx, cy = view["curve"]
    if cx.size:
        order = np.argsort(cx)
        ax.plot(cx[order], cy[order], color="tab:blue", marker=".", markersize=3, linewidth=1.1)
    if view["corner"] is not None:
        ax.plot([view["corner"][0]], [view["corner"][1]], marker="*", markersize=13, color="tab:purple",
                linestyle="none")
    ax.plot(grid, grid, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(view["labels"][0])
    ax.set_ylabel(view["labels"][1])
    ax.grid(True, alpha=0.3)
    _title(ax, "Whole trade-off curve (linear axes)")


def roc_figure(audit: dict, linear: bool | None = None, fmt: str = "png") -> bytes:
    """Where an audit's certified bound comes from, drawn against the region the claim allows.

    Main panel: a log-log zoom around the *certified point* -- the chosen test's error rates
    replaced by their Clopper-Pearson upper confidence bounds -- in the view where the bound
    lives (small FPR: (FPR, TPR); small FNR: (FNR, TNR); see :func:`chosen_view`). On log-log
    axes the boundary y = e^eps x of (eps, delta)-DP is a line parallel to random guessing,
    eps/ln 10 decades above it, so the distance of the star from the diagonal *is* the bound.
    The measured curve and the hollow circle are point estimates and may cross the certified
    boundary without contradicting it. A linear-axis panel of the whole curve is added when
    ``linear`` is True, or (default) when the certified point is far enough from the axis to be
    seen there (:data:`LINEAR_PANEL_MIN_RATE`). ``fmt``: any format matplotlib saves (default png).
    """
    return _png(draw_roc(audit, linear), fmt)


def draw_roc(audit: dict, linear: bool | None = None):
    """The matplotlib figure of :func:`roc_figure`."""
    Figure, _ = require_matplotlib()
    view = chosen_view(audit)
    if linear is None:
        linear = linear_panel_useful(audit)
    fig = Figure(figsize=(12.0, 5.0) if linear else (8.6, 5.4), layout="constrained")
    axes = fig.subplots(1, 2 if linear else 1, squeeze=False)[0]
    _zoom_panel(axes[0], audit, view)
    if linear:
        _linear_panel(axes[1], audit, view)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=8.5, frameon=False)
    return fig


def _num(x) -> float:
    if x is None:
        return math.nan
    if isinstance(x, str):
        return float(x)  # "inf" / "nan" strings from to_dict()
    return float(x)
