"""The report's figures, drawn with matplotlib (optional extra) into PNG bytes.

matplotlib is imported only when a figure is drawn, through its object-oriented API
(``matplotlib.figure.Figure`` + the Agg canvas): no pyplot state, no GUI backend, nothing changed
for the caller. Every figure has labelled axes with units, a legend, and log scales when the
plotted values span more than ``DECADES`` decades.
"""

from __future__ import annotations

import io
import math

import numpy as np

__all__ = ["ReportDependencyError", "require_matplotlib", "accountants_figure", "renyi_figure", "roc_figure",
           "DECADES"]

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


def _png(fig) -> bytes:
    _, Canvas = require_matplotlib()
    Canvas(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def _spans_decades(values) -> bool:
    v = np.asarray([x for x in values if x is not None and math.isfinite(x) and x > 0], dtype=float)
    return v.size >= 2 and v.max() / v.min() > 10**DECADES


def accountants_figure(data: dict) -> bytes:
    """epsilon(delta) against the number of compositions, one line per accountant."""
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
        shown = f"{label} (no amplification by sampling)" if label in ignoring else label
        ax.plot(np.asarray(steps)[finite], y[finite], label=shown, **kw)
    if _spans_decades(steps):
        ax.set_xscale("log")
    if _spans_decades(all_y):
        ax.set_yscale("log")
    ax.set_xlabel("number of compositions T (mechanism runs)")
    ax.set_ylabel(f"epsilon at delta = {data['delta']:.0e} (nats; upper bound)")
    ax.set_title(f"Accountants compared: {data['mechanism']}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(title="accountant", fontsize=9)
    return _png(fig)


def renyi_figure(rows: list[dict]) -> bytes:
    """Analytic curves and empirical estimates (with intervals) of D_alpha against steps, per alpha."""
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
        if _spans_decades(all_y + est[est > 0].tolist()):
            ax.set_yscale("log")
        ax.set_xlabel("noisy GD steps K")
        ax.set_ylabel("Renyi divergence D_alpha (nats)")
        ax.set_title(f"alpha = {a:g}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8, loc="best")
    fig.suptitle("Last iterate of noisy GD: analytic bounds vs empirical Renyi divergence", fontsize=11)
    return _png(fig)


def roc_figure(audit: dict) -> bytes:
    """The attack's empirical ROC against the region an (epsilon, delta)-DP mechanism allows.

    Two panels: linear axes, and a log FPR axis where large-epsilon evidence lives.
    """
    from dpaudit.report.data import dp_region_tpr

    Figure, _ = require_matplotlib()
    roc = (audit.get("details") or {}).get("roc") or {}
    eps_c, delta = _num(audit.get("epsilon_claimed")), _num(audit.get("delta"))
    eps_l = _num(audit.get("epsilon_lower"))
    fig = Figure(figsize=(11.0, 4.4))
    axes = fig.subplots(1, 2)
    fpr_emp = np.asarray(roc.get("fpr", []), dtype=float)
    tpr_emp = np.asarray(roc.get("tpr", []), dtype=float)
    test = (audit.get("details") or {}).get("threshold_test") or {}
    for ax, logx in zip(axes, (False, True)):
        grid = np.geomspace(1e-6, 1.0, 400) if logx else np.linspace(0.0, 1.0, 400)
        if math.isfinite(eps_c):
            bound = dp_region_tpr(grid, eps_c, delta)
            ax.fill_between(grid, 0, bound, color="tab:green", alpha=0.15,
                            label=f"allowed by the claim ({eps_c:.3g}, {delta:.0e})-DP")
            ax.plot(grid, bound, color="tab:green", linewidth=1.5)
        if math.isfinite(eps_l) and eps_l > 0:
            ax.plot(grid, dp_region_tpr(grid, eps_l, delta), color="tab:red", linestyle="--", linewidth=1.2,
                    label=(f"boundary at the audit's lower bound epsilon = {eps_l:.3g}"
                           if not str(audit.get("method", "")).startswith("gdp")
                           else f"boundary at the GDP estimate {eps_l:.3g} (assuming mu-GDP; not a bound)"))
        if fpr_emp.size:
            keep = fpr_emp > 0 if logx else np.ones_like(fpr_emp, dtype=bool)
            ax.plot(fpr_emp[keep], tpr_emp[keep], color="tab:blue", marker=".", markersize=3, linewidth=1.2,
                    label=f"attack ROC (evaluation samples, orientation {roc.get('orientation', '?')})")
        if "fpr_upper" in test and "fnr_upper" in test:
            ax.plot([test["fpr_upper"]], [1 - test["fnr_upper"]], marker="*", markersize=12, color="tab:purple",
                    linestyle="none", label="certified corner (Clopper-Pearson FPR+, 1 - FNR+)")
        ax.plot(grid, grid, color="grey", linewidth=0.8, linestyle=":", label="random guessing (TPR = FPR)")
        if logx:
            ax.set_xscale("log")
            ax.set_xlim(1e-5, 1.0)
        else:
            ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("false-positive rate (fraction of runs on x flagged)" + (" (log scale)" if logx else ""))
        ax.set_ylabel("true-positive rate (fraction of runs on x' flagged)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7.5, loc="lower right")
    fig.suptitle("Distinguishing attack vs the claimed DP region: points above the green region contradict the claim",
                 fontsize=10)
    return _png(fig)


def _num(x) -> float:
    if x is None:
        return math.nan
    if isinstance(x, str):
        return float(x)  # "inf" / "nan" strings from to_dict()
    return float(x)
