"""``write_report``: one HTML (self-contained) or Markdown (+ PNG files) page.

The page answers, in this order: does the claim hold, how sure are we, what was tested, what next.

1. **Verdict banner**: red *violation*, green *consistent*, grey *inconclusive* (an audit that
   certified nothing is never shown as green), with the verdict in the words of
   :func:`dpaudit.audit.protocol.verdict.explain` (the cause of a violation, its one-sentence next step) and
   the two findings when the audit has them (the implementation and the mathematical mechanism).
2. **Gap summary**: the certified lower bound, the tightest upper bound dpaudit computes for the
   audited mechanism (exact epsilon or the PLD interval; :mod:`dpaudit.report.summary`) and the
   claim, in order with the relation between them, e.g.
   ``certified lower 1.99 <= PLD [7.04, 7.05] <= claim (RDP) 7.9``, and a one-line reading.
3. **What was audited**: algorithm and hyper-parameters, neighbouring relation, where the claim
   comes from, canary, attack, statistic, trials, seed, confidence.
4. **What next**: after a violation, what to check; for an inconclusive audit, the advisory trial
   counts and what else would give it power.
5. **Evidence**: in plain words, what the attack guessed, how often it was right on each input and
   why those counts bound epsilon (:func:`dpaudit.report.summary.evidence_text`); a log-log zoom on
   the certified point against the region the claim allows (Kairouz, Oh, Viswanath 2015), with its
   axes explained, plus the linear-axis curve when it shows anything; the certified numbers.
   **Estimates, not bounds** (the GDP number, the attack statistics) follow in a collapsed part
   (HTML ``<details>``), apart from the bounds.
6. **Accountants**: epsilon(delta) against the number of compositions for RDP, zCDP, PLD and the
   exact curve where known (table + plot); a notion that gives subsampling no amplification is
   labelled so.
7. **Linear-instance check**: analytic Renyi bounds against empirical estimates on the noisy-GD
   squared-loss instance of Chourasia, Ye, Shokri 2021 (independent of the audited algorithm).

Every number is written by :mod:`dpaudit.core.display` (3 significant digits; bounds rounded in their
direction). ``audit`` may be a list of results (each with its own sections, e.g. ``dpaudit demo``).
The format follows the file suffix (``.html``/``.htm`` or ``.md``) unless ``fmt`` is given.
HTML embeds each plot as a ``data:image/svg+xml;base64`` URI (vector; shown at the size of a 110-dpi PNG) and uses
inline CSS and SVG only, so the single file can be mailed or attached to a CI run. Markdown writes ``<stem>_files/<plot>.png``
next to the page and links them relatively.
"""

from __future__ import annotations

import base64
import datetime
import html
import math
import os
import re
from pathlib import Path

from dpaudit.audit.protocol.verdict import GDP_LABEL, VERDICTS, advice_lines, explain, verdict_of
from dpaudit.core.display import bound_text, number_text, percent_text
from dpaudit.core.threads import blas_limited
from dpaudit.report import plots
from dpaudit.report.summary import (
    audited_rows,
    delta_text,
    evidence_text,
    gap_summary,
    input_names,
    tightest_upper,
)

__all__ = ["write_report", "render_report"]

_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md"}

_CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1150px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;
margin-top:1.6em}table{border-collapse:collapse;margin:.8em 0;font-size:.92em}th,td{border:1px solid #ccc;
padding:.25em .6em;text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}.ok{color:#176e2c;font-weight:600}
.bad{color:#b00020;font-weight:600}.unk{color:#555;font-weight:600}.note{color:#555;font-size:.9em}img{max-width:100%;border:1px solid #eee}
code{background:#f4f4f4;padding:0 .2em}
.banner{border-radius:8px;padding:.9em 1.3em;margin:1em 0 .6em;color:#fff}.banner .word{font-size:2.1em;font-weight:800;
letter-spacing:.06em;line-height:1.1;text-transform:uppercase}.banner .line{font-size:1.08em;margin-top:.25em}
.v-violation{background:#b00020}.v-consistent{background:#176e2c}.v-inconclusive{background:#6b6b6b}
.gap{font-size:1.25em;font-weight:700;font-family:ui-monospace,Menlo,Consolas,monospace;margin:.5em 0 .2em}
.reading{font-size:1.02em;margin:.2em 0 .6em}.warn{background:#fff4e5;border-left:4px solid #c77700;padding:.4em .8em}
ul.next li{margin:.25em 0}.caption{color:#333;font-size:.92em;max-width:60em}
.banner ul.findings{margin:.4em 0 0;padding-left:1.2em;font-size:.98em}.evidence{max-width:60em}
details.estimates{border:1px solid #ddd;border-radius:6px;padding:.3em .9em;margin:1em 0}
details.estimates summary{cursor:pointer;font-weight:600}
table.facts td.l{font-weight:600;white-space:nowrap}table.facts td{text-align:left}"""


def _hosts_many_canaries(optimizer_name) -> bool:
    """Whether the optimizer named in an audit declares room for many canaries in one run (the
    one-run audit applies to it)."""
    from dpaudit.optimizers import optimizer_class  # (here: a report of a mechanism audit does not import them)

    try:
        return optimizer_class(optimizer_name).max_canaries > 1
    except ValueError:  # not a registered optimizer (e.g. a user's own object)
        return False


def _f(x) -> str:
    """A number that is not a bound, as every number of the report (:func:`dpaudit.core.display.number_text`)."""
    return number_text(x)


def _lo(x) -> str:
    """A lower bound (rounded down)."""
    return bound_text(x, up=False)


def _up(x) -> str:
    """An upper bound or a claim (rounded up)."""
    return bound_text(x, up=True)


def _audit_dict(audit) -> dict | None:
    if audit is None:
        return None
    if isinstance(audit, dict):
        return audit
    if hasattr(audit, "to_dict"):
        return audit.to_dict()
    raise ValueError(f"audit must be an AuditResult or its to_dict(), or a list of them, got {type(audit).__name__}")


def _audit_list(audit) -> list[tuple[str | None, dict | None]]:
    """``[(heading, audit dict)]``: one result (no heading), or a list of results or of ``(heading, result)``."""
    if audit is None:
        return []
    if isinstance(audit, (list, tuple)) and not (len(audit) == 2 and isinstance(audit[0], str)):
        out = []
        for i, item in enumerate(audit):
            name, res = item if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) else (None, item)
            out.append((name or f"Audit {i + 1}", _audit_dict(res)))
        if not out:
            raise ValueError("audit must not be an empty list")
        return out
    if isinstance(audit, tuple):
        return [(audit[0], _audit_dict(audit[1]))]
    return [(None, _audit_dict(audit))]


def _renyi_rows(renyi):
    if renyi is None:
        return None
    rows = renyi.get("rows") if isinstance(renyi, dict) else renyi
    rows = [dict(r) for r in rows]  # type: ignore[union-attr]  # a dict without "rows": TypeError here, as always
    if not rows or any(k not in r for r in rows for k in ("steps", "alpha", "estimate", "lower", "upper")):
        raise ValueError("renyi must be a non-empty list of rows with keys steps, alpha, estimate, lower, upper "
                         "(see dpaudit.report.renyi_table)")
    return rows


def _check_accountants(acc):
    if acc is None:
        return None
    if not isinstance(acc, dict) or not {"steps", "curves", "delta"} <= set(acc):
        raise ValueError("accountants must be the dict returned by dpaudit.report.compare_accountants")
    return acc


class _Doc:
    """Minimal builder emitting either HTML or Markdown."""

    def __init__(self, fmt: str):
        self.fmt = fmt
        self.parts: list[str] = []

    def h(self, level: int, text: str):
        self.parts.append(f"<h{level}>{html.escape(text)}</h{level}>" if self.fmt == "html"
                          else f"{'#' * level} {text}\n")

    def p(self, text: str, cls: str | None = None):
        if self.fmt == "html":
            c = f' class="{cls}"' if cls else ""
            self.parts.append(f"<p{c}>{html.escape(text)}</p>")
        else:
            self.parts.append(("*" + text + "*" if cls == "note" else text) + "\n")

    def table(self, header, rows, left=1):
        if self.fmt == "html":
            th = "".join(f'<th class="l">{html.escape(str(h))}</th>' if i < left else f"<th>{html.escape(str(h))}</th>"
                         for i, h in enumerate(header))
            body = "".join("<tr>" + "".join(f'<td class="l">{html.escape(str(v))}</td>' if i < left
                                            else f"<td>{html.escape(str(v))}</td>" for i, v in enumerate(r)) + "</tr>"
                           for r in rows)
            self.parts.append(f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>")
        else:
            esc = lambda v: str(v).replace("|", "\\|")  # noqa: E731
            lines = ["| " + " | ".join(esc(h) for h in header) + " |",
                     "|" + "|".join(":---" if i < left else "---:" for i in range(len(header))) + "|"]
            lines += ["| " + " | ".join(esc(v) for v in r) + " |" for r in rows]
            self.parts.append("\n".join(lines) + "\n")

    def verdict(self, verdict: str, text: str):
        if self.fmt == "html":
            cls = {"violation": "bad", "consistent": "ok"}.get(verdict, "unk")
            self.parts.append(f'<p class="{cls}">{html.escape(text)}</p>')
        else:
            self.parts.append(f"**{text}**\n")

    def banner(self, verdict: str, line: str, findings=(), anchor: str = "verdict"):
        word = {"violation": "VIOLATION", "consistent": "Consistent", "inconclusive": "Inconclusive"}[verdict]
        if self.fmt == "html":  # shown in capitals by the CSS
            items = "".join(f"<li>{html.escape(f)}</li>" for f in findings)
            self.parts.append(f'<div class="banner v-{verdict}" id="{anchor}"><div class="word">{word}</div>'
                              f'<div class="line">{html.escape(line)}</div>'
                              + (f'<ul class="findings">{items}</ul>' if items else "") + "</div>")
        else:
            self.parts.append(f"> **{word.upper()}**: {line}\n" + "".join(f">\n> * {f}\n" for f in findings))

    def collapsible(self, summary: str):
        """Open a part shown collapsed (HTML ``<details>``; a heading in Markdown); :meth:`end_collapsible` closes it."""
        if self.fmt == "html":
            self.parts.append(f'<details class="estimates"><summary>{html.escape(summary)}</summary>')
        else:
            self.parts.append(f"#### {summary}\n")

    def end_collapsible(self):
        if self.fmt == "html":
            self.parts.append("</details>")

    def gap(self, text: str, reading: str, svg: str | None):
        if self.fmt == "html":
            self.parts.append(f'<div class="gap" id="gap">{html.escape(text)}</div>')
            if svg:
                self.parts.append(svg)
            self.parts.append(f'<p class="reading">{html.escape(reading)}</p>')
        else:
            self.parts.append(f"**`{text}`**\n\n{reading}\n")

    def warn(self, text: str):
        if self.fmt == "html":
            self.parts.append(f'<p class="warn">{html.escape(text)}</p>')
        else:
            self.parts.append(f"> **Warning:** {text}\n")

    def items(self, lines, cls: str = "next"):
        if self.fmt == "html":
            self.parts.append(f'<ul class="{cls}">' + "".join(f"<li>{html.escape(x)}</li>" for x in lines) + "</ul>")
        else:
            self.parts.append("\n".join(f"* {x}" for x in lines) + "\n")

    def facts(self, rows):
        if self.fmt == "html":
            body = "".join(f'<tr><td class="l">{html.escape(k)}</td><td>{html.escape(v)}</td></tr>' for k, v in rows)
            self.parts.append(f'<table class="facts"><tbody>{body}</tbody></table>')
        else:
            self.table(["", ""], rows)

    def image(self, name: str, draw, alt: str, images: dict, rel_dir: str):
        """A figure, ``draw(fmt)`` giving its bytes. HTML embeds it as SVG, shown at the size of the PNG it replaces
        (:data:`~dpaudit.report.plots.DPI` pixels an inch): the same drawing, vector, about a third cheaper to make
        than a PNG (no rasterising, no PNG encoding) and sharp at any zoom. Markdown links a PNG file ``name``."""
        if self.fmt == "html":
            svg = draw("svg")
            b64 = base64.b64encode(svg).decode("ascii")
            width = _svg_width(svg)
            size = f' width="{width}"' if width else ""
            self.parts.append(f'<img alt="{html.escape(alt)}"{size} src="data:image/svg+xml;base64,{b64}">')
        else:
            images[name] = draw("png")
            self.parts.append(f"![{alt}]({rel_dir}/{name})\n")

    def render(self, title: str) -> str:
        if self.fmt == "html":
            return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>\n"
                    + "\n".join(self.parts) + "\n</body></html>\n")
        return "\n".join(self.parts)


def _svg_width(svg: bytes) -> int | None:
    """The width in pixels at :data:`~dpaudit.report.plots.DPI` of an SVG that matplotlib wrote (its width is in
    points), or None."""
    m = re.search(rb'<svg[^>]*?\swidth="([0-9.]+)pt"', svg[:4000])
    return None if m is None else round(float(m.group(1)) * plots.DPI / 72.0)


@blas_limited
def render_report(*, audit=None, renyi=None, accountants=None, fmt: str = "html", title: str | None = None,
                  image_dir: str = "report_files", mechanism=None, steps: int | None = None,
                  upper: dict | None = None) -> tuple[str, dict]:
    """Build the report text and its images: returns ``(text, {file name: PNG bytes})``.

    For ``fmt="html"`` the images are embedded and the dict is empty; for ``"md"`` the text links
    ``image_dir/<name>`` and the dict holds the files to write there. ``audit`` is one result (or its
    ``to_dict()``), or a list of them -- each item a result or a ``(heading, result)`` pair -- written one after
    the other, each with its verdict. ``mechanism`` (composed ``steps`` times, default 1) is the audited
    mechanism for the gap summary's tightest upper bound; by default it is derived from an optimizer audit.
    ``upper`` gives that bound directly (``{"kind": "...", "lower": ..., "upper": ...}``).
    """
    if fmt not in ("html", "md"):
        raise ValueError(f"fmt must be 'html' or 'md', got {fmt!r}")
    audits = _audit_list(audit)
    rows = _renyi_rows(renyi)
    acc = _check_accountants(accountants)
    if not audits and rows is None and acc is None:
        raise ValueError("nothing to report: give at least one of audit, renyi, accountants")
    plots.require_matplotlib()
    import dpaudit

    title = title or "dpaudit report"
    doc = _Doc(fmt)
    images: dict = {}
    doc.h(1, title)
    for i, (heading, audit_d) in enumerate(audits):
        if heading is not None:
            doc.h(2, heading)
        _audit_section(doc, audit_d, images, image_dir, mechanism=mechanism, steps=steps, upper=upper,
                       level=2 if heading is None else 3, key="" if i == 0 else f"-{i + 1}")
    if acc is not None:
        _accountants_section(doc, acc, images, image_dir)
    if rows is not None:
        _renyi_section(doc, rows, images, image_dir)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    doc.p(f"Generated by dpaudit {dpaudit.__version__} on {stamp}. Upper bounds (accountants, theorems) are "
          "rounded up, lower bounds down (3 significant digits); the audit's epsilon is a lower bound valid at the "
          "stated confidence.", "note")
    return doc.render(title), images


def _verdict_words(verdict: str, audit_d: dict, certified: bool) -> tuple[str, list]:
    """The banner's line and findings: :func:`~dpaudit.audit.protocol.verdict.explain`'s words."""
    if not certified:
        return ("This result comes from the GDP estimate (assuming mu-GDP), which is never a certified bound: no "
                "verdict.", [])
    ex = explain(verdict, float(_num(audit_d.get("epsilon_lower"))), float(_num(audit_d.get("epsilon_claimed"))),
                 audit_d.get("details") or {})
    conf = _num(audit_d.get("confidence"))
    line = ex["line"] + (f" ({conf:.0%} confidence.)" if math.isfinite(conf) else "")
    return line, ex["findings"][:2]


def _gap_svg(gap: dict) -> str | None:
    """A number line with the certified lower bound, the tightest upper bound and the claim (HTML only). Each label
    has a row of its own (claim on top, the proved bound under it, the computed bound below the axis), so labels never
    overlap however close the numbers are; the claim's marker starts below the proved bound's row."""
    v = gap["values"]
    lower, claim, tight = v["lower"], v["claim"], v["tight"]
    pts = [x for x in (lower, claim) if math.isfinite(x)]
    if tight is not None:
        pts += [x for x in (tight["lower"], tight["upper"]) if math.isfinite(x)]
    top = max(pts + [0.0]) * 1.12
    if not math.isfinite(top) or top <= 1e-9:
        return None
    W, H, L, R, AXIS = 760, 112, 20, 740, 52

    def x(val):
        return L + (R - L) * min(max(val, 0.0), top) / top

    def anchor(px):
        return "start" if px < L + 70 else ("end" if px > R - 70 else "middle")

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" role="img" '
           'aria-label="certified lower bound, tightest upper bound and claim on one epsilon axis">',
           f'<line x1="{L}" y1="{AXIS}" x2="{R}" y2="{AXIS}" stroke="#999" stroke-width="1.5"/>']
    for t in _nice_ticks(top):
        out.append(f'<line x1="{x(t):.1f}" y1="{AXIS - 4}" x2="{x(t):.1f}" y2="{AXIS + 4}" stroke="#999"/>'
                   f'<text x="{x(t):.1f}" y="{AXIS + 18}" font-size="11" text-anchor="middle" fill="#666">'
                   f'{_f(t)}</text>')
    if math.isfinite(lower):
        out.append(f'<rect x="{x(0):.1f}" y="{AXIS - 6}" width="{max(x(lower) - x(0), 0):.1f}" height="12" '
                   'fill="#1f77b4" opacity="0.8"/>')
    lx = x(lower if math.isfinite(lower) else 0.0)
    out.append(f'<text x="{lx:.1f}" y="34" font-size="12" text-anchor="{anchor(lx)}" '
               f'fill="#1f77b4">proved &#8805; {_lo(lower)}</text>')
    if tight is not None and math.isfinite(tight["upper"]):
        a, b = x(tight["lower"]), x(tight["upper"])
        out.append(f'<rect x="{a - 2:.1f}" y="{AXIS - 9}" width="{max(b - a, 0) + 4:.1f}" height="18" fill="#2ca02c"/>'
                   f'<text x="{(a + b) / 2:.1f}" y="{AXIS + 40}" font-size="12" text-anchor="{anchor((a + b) / 2)}" '
                   f'fill="#2ca02c">{html.escape(tight["kind"])} &#8804; {_up(tight["upper"])}</text>')
    if math.isfinite(claim):
        out.append(f'<line x1="{x(claim):.1f}" y1="39" x2="{x(claim):.1f}" y2="{AXIS + 8}" stroke="#000" '
                   f'stroke-width="3"/><text x="{x(claim):.1f}" y="16" font-size="12" '
                   f'text-anchor="{anchor(x(claim))}">claim {_up(claim)}</text>')
    out.append("</svg>")
    return "".join(out)


def _nice_ticks(top: float) -> list[float]:
    raw = top / 5.0
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [i * step for i in range(0, int(top / step) + 1)]


def _audit_section(doc, audit_d, images, image_dir, *, mechanism=None, steps=None, upper=None, level=2, key=""):
    verdict, certified = _verdict_of(audit_d)
    line, findings = _verdict_words(verdict, audit_d, certified)
    doc.banner("inconclusive" if not certified else verdict, line, findings, anchor=f"verdict{key}")
    _proved_section(doc, audit_d, certified, verdict, mechanism=mechanism, steps=steps, upper=upper, level=level)
    doc.h(level, "What was audited")
    doc.facts(audited_rows(audit_d, mechanism=mechanism, steps=steps))
    _next_steps_section(doc, audit_d, verdict, certified, level)
    _evidence_section(doc, audit_d, images, image_dir, verdict, certified, level, key)
    _estimates_section(doc, audit_d, level)


def _proved_section(doc, audit_d, certified, verdict, *, mechanism, steps, upper, level=2):
    """"Proved, computed, claimed": the certified bound, the tightest upper bound dpaudit computes, the claim."""
    tight = upper
    if tight is None:
        try:
            # the report shows 3 significant digits: the PLD interval on the coarsest grid that resolves them
            tight = tightest_upper(audit_d, mechanism=mechanism, steps=steps, digits=3)
        except (ValueError, TypeError, ArithmeticError) as exc:
            doc.p(f"Tightest upper bound not computed: {exc}", "note")
    doc.h(level, "Proved, computed, claimed")
    if certified:
        gap = gap_summary({**audit_d, "verdict": verdict}, tight)
        doc.gap(gap["text"], gap["reading"], _gap_svg(gap) if doc.fmt == "html" else None)
        for w in gap["warnings"]:
            doc.warn(w)
        parts = ["certified lower: what the audit proves at its confidence (a lower bound on the true epsilon)"]
        if tight is not None:
            what = ("the exact epsilon of the mechanism as modelled (closed form)" if tight["kind"] == "exact" else
                    "the true epsilon of the mechanism as modelled lies in this interval (PLD accountant, pessimistic "
                    "and optimistic discretisations)" if tight["kind"] == "PLD" else tight["kind"])
            parts.append(f"{tight['kind']}: {what}; {tight.get('mechanism', '')}"
                         + (f" composed {tight['steps']} times" if tight.get("steps", 1) != 1 else ""))
        else:
            parts.append("no tighter upper bound is computed here: dpaudit derives one for optimizers that add "
                         "Gaussian noise; for other mechanisms pass mechanism= (or upper=) to write_report")
        parts.append("claim: what the algorithm states (its accountant or theorem), the number the audit tests")
        doc.p("Which is which: " + "; ".join(parts) + ".", "note")
    else:
        doc.p(f"Nothing certified: this result's number is a GDP estimate ({GDP_LABEL}), not a lower bound, so it "
              "is not set against the claim.", "note")


def _next_steps_section(doc, audit_d, verdict, certified, level=2):
    """What to check after a violation, or what would give an inconclusive audit its power: the checks
    :func:`~dpaudit.audit.protocol.verdict.explain` chooses by the evidence (leak, winning attack, scenario)."""
    eps_c = _num(audit_d.get("epsilon_claimed"))
    details = audit_d.get("details") or {}
    if verdict == "violation" and certified:
        doc.h(level, "What to check next")
        ex = explain(verdict, float(_num(audit_d.get("epsilon_lower"))), float(eps_c), details)
        doc.p("A certified violation means an attacker can tell the two neighbouring inputs apart better than the "
              "claim allows. " + " ".join(w[0].upper() + w[1:] + "." for w in ex["why"]) + " Check:")
        doc.items([c[0].upper() + c[1:] + "." for c in ex["next"]])
    elif verdict == "inconclusive":
        doc.h(level, "What would give this audit power")
        lines = [line.replace("advisory: ", "", 1) for line in advice_lines(details.get("advice"), eps_c)]
        if lines:
            doc.p("Advisory numbers (point estimates from this audit's own runs; never a bound, never a verdict):",
                  "note")
        ex = explain(verdict, 0.0, float(eps_c), details)
        hints = [h for h in ex["next"] if "one-run" not in h or _hosts_many_canaries(details.get("optimizer"))]
        doc.items(lines + [h[0].upper() + h[1:] + "." for h in hints])


def _evidence_section(doc, audit_d, images, image_dir, verdict, certified, level=2, key=""):
    """Where the bound comes from: in plain words (what the attack guessed, how often it was right, why that bounds
    epsilon), the figure with its axes explained, and the certified numbers."""
    doc.h(level, "Evidence: where the bound comes from")
    for para in evidence_text(audit_d):
        doc.p(para, "evidence")
    if (audit_d.get("details") or {}).get("roc"):
        linear = plots.linear_panel_useful(audit_d)
        doc.image(f"roc{key}.png", lambda fmt: plots.roc_figure(audit_d, linear=linear, fmt=fmt),
                  "log-log zoom on the certified point against the region the claim allows", images, image_dir)
        doc.p(_figure_caption(audit_d), "caption")
        if not linear:
            doc.p(f"The linear-axis view of the whole curve is left out: the certified point sits at a rate below "
                  f"{plots.LINEAR_PANEL_MIN_RATE:g}, which a linear axis cannot tell apart from 0.", "note")
    else:
        doc.p("No ROC data in this audit result (details['roc'] missing): one-run audits count correct guesses "
              "instead of tracing a curve.", "note")
    conf = float(_num(audit_d.get("confidence")))
    bound_label = (f"certified epsilon lower bound ({conf:.0%} confidence)" if certified
                   else f"GDP number ({GDP_LABEL}; NOT a bound)")
    doc.table(["quantity", "value"], [
        ["claimed epsilon", _up(audit_d.get("epsilon_claimed"))],
        ["delta", delta_text(audit_d.get("delta"))[len("delta = "):]],
        [bound_label, _lo(audit_d.get("epsilon_lower")) if certified else _f(audit_d.get("epsilon_lower"))],
        ["verdict", verdict],
    ] + _test_rows(audit_d))
    doc.p("A lower bound says: with the stated confidence, the mechanism is NOT (epsilon', delta)-DP for any "
          "epsilon' below it. It does not say the mechanism is private: a small lower bound can come from a weak "
          "attack or too few trials, and a bound of 0 (inconclusive) says nothing at all.", "note")


def _figure_caption(audit_d) -> str:
    """How to read the evidence figure: its axes, in the words of the guess the bound rests on."""
    a, b, _ = input_names(audit_d)
    side = plots.chosen_view(audit_d)["side"]
    guess, rare_on, often_on = (b, a, b) if side == "fpr" else (a, b, a)
    return (f"How to read it: both axes count the guess \"{guess}\". Across: how often the test makes it on runs of "
            f"{rare_on}, where it is wrong; up: how often on runs of {often_on}, where it is right (log scales). Each "
            "point of the blue curve is one threshold of the attack's score. The green region is everything a "
            "mechanism that meets the claim can reach (up is at most e^epsilon times across, plus delta): a point "
            "above it would contradict the claim. The star is the chosen threshold with both rates at their worst "
            "case at the audit's confidence; the certified lower bound is the epsilon whose boundary (red dashed) "
            "passes through the star. On log-log axes these boundaries run parallel to random guessing (grey "
            "dotted), higher for larger epsilon. Why the blue curve may cross the red line: it and the hollow circle "
            "are point estimates (what the runs showed, not what they prove); with few errors counted they are "
            "optimistic, so only the star counts.")


def _estimates_section(doc, audit_d, level=2):
    """Estimates, not bounds: the GDP number and the attack statistics, collapsed (they never set the verdict)."""
    gdp = _gdp_row(audit_d)
    st = (audit_d.get("details") or {}).get("attack_statistics")
    stats = isinstance(st, dict) and isinstance(st.get("auroc"), dict)
    if not gdp and not stats:
        return
    doc.collapsible("Estimates, not bounds: " + ", ".join(
        x for x, on in (("the GDP number", gdp), ("the attack's statistics", stats)) if on)
        + " (they never set the verdict)")
    if gdp:
        doc.table(["estimate", "value"], gdp)
        doc.p(f"The GDP number is an {GDP_LABEL}: it is a lower bound only when the mechanism's trade-off curve is "
              "exactly Gaussian, and can exceed the true epsilon otherwise (e.g. on Laplace noise). It is never a "
              "bound and never sets the verdict.", "note")
    if stats:
        _attack_statistics_section(doc, audit_d, level + 1)
    doc.end_collapsible()


def _attack_statistics_section(doc, audit_d, level=3):
    """TPR at fixed low FPRs, AUROC and best accuracy with their intervals (descriptive; never the verdict)."""
    st = audit_d["details"]["attack_statistics"]  # a dict: checked by the caller
    conf = float(_num(st.get("confidence", 0.95)))

    def iv(x):
        return f"[{_lo(x[0])}, {_up(x[1])}]"

    rows = [["AUROC", _f(st["auroc"]["value"]), iv(st["auroc"]["interval"]), "distribution-free (McDiarmid)"]]
    for r in st.get("tpr_at_fpr") or []:
        rows.append([f"TPR at FPR {_f(r['fpr_level'])} (FPR reached {_f(r['fpr'])} {iv(r['fpr_interval'])})",
                     _f(r["tpr"]), iv(r["tpr_interval"]), "exact (Clopper-Pearson)"])
    acc = st.get("accuracy")
    if isinstance(acc, dict):
        rows.append(["best balanced accuracy", _f(acc["value"]), iv(acc["interval"]), "exact (Clopper-Pearson)"])
    doc.h(level, "Attack statistics")
    doc.table(["statistic (evaluation runs)", "value", f"{conf:.0%} interval", "interval"], rows)
    doc.p("How good the attack is, measured on the evaluation runs with thresholds fixed on the selection runs. "
          "These are descriptive statistics: they never set the lower bound, the verdict or an exit code.", "note")


def _one_run_rows(audit_d) -> list:
    """The one-run test that certified the bound, and the Gaussian-family f-DP number (an estimate)."""
    rec = (audit_d.get("details") or {}).get("one_run_bound")
    if not isinstance(rec, dict):
        return []
    rows = [["one-run test (certified)", f"{rec.get('description', rec.get('test'))}; chosen by "
                                         f"{rec.get('chosen_by', 'n/a')}"]]
    g = rec.get("gdp_family")
    if isinstance(g, dict):
        rows.append(["one-run f-DP, Gaussian family (NOT a bound: estimate assuming mu-GDP)",
                     f"{_f(g.get('epsilon'))} (certified only: not mu-GDP for mu <= {_lo(g.get('mu_lower'))})"])
    return rows


def _test_rows(audit_d) -> list:
    """The chosen test in the words of :func:`~dpaudit.report.summary.evidence_text`: its rule and, for each input,
    how often it guessed the second one (with the worst case that enters the bound)."""
    test = (audit_d.get("details") or {}).get("threshold_test") or {}
    if not test or not test.get("n0"):
        return _one_run_rows(audit_d)
    a, b, _ = input_names(audit_d)
    n0, n1, k_fp, k_fn = int(test["n0"]), int(test["n1"]), int(test["k_fp"]), int(test["k_fn"])
    word = {">": "above", ">=": "at or above", "<": "below", "<=": "at or below"}.get(str(test.get("orientation")),
                                                                                      str(test.get("orientation")))
    rows = [["chosen test", f"guess \"{b}\" when the score is {word} {_f(test.get('threshold'))}"],
            [f"runs of {a} guessed \"{b}\" (false alarms)",
             f"{k_fp:,} of {n0:,} ({percent_text(k_fp / n0)}; at most {percent_text(test.get('fpr_upper'))})"],
            [f"runs of {b} guessed \"{b}\" (hits)",
             f"{n1 - k_fn:,} of {n1:,} ({percent_text((n1 - k_fn) / n1)}; at least {percent_text(1.0 - _num(test.get('fnr_upper')))})"]]
    return rows


def _accountants_section(doc, acc, images, image_dir):
    doc.h(2, f"Accountants compared: epsilon at {delta_text(acc['delta'])}")
    doc.p(f"Mechanism per step: {acc.get('mechanism', '?')}. Each accountant composes it T times; smaller is "
          "tighter, and every curve is a valid upper bound. The exact curve (when shown) is the true epsilon.")
    labels = list(acc["curves"])
    ignoring = set(acc.get("ignores_sampling") or ())
    header = [f"{lab} (ignores sampling)" if lab in ignoring else lab for lab in labels]
    doc.table(["steps T"] + header, [[f"{int(t):,}"] + [_up(acc["curves"][lab][i]) for lab in labels]
                                     for i, t in enumerate(acc["steps"])])
    for lab in labels:
        if lab in ignoring:
            doc.p(f"{lab}: no amplification by sampling in this notion (it has no subsampling theorem): its numbers "
                  "are those of the unsampled mechanism, so they are much larger than RDP's or PLD's and say nothing "
                  "alarming about the algorithm.", "note")
    for lab, note in (acc.get("notes") or {}).items():
        if lab not in ignoring:
            doc.p(f"{lab}: {note}", "note")
    doc.image("accountants.png", lambda fmt: plots.accountants_figure(acc, fmt), "epsilon against steps per accountant",
              images, image_dir)


def _renyi_section(doc, rows, images, image_dir):
    doc.h(2, "Linear-instance check: Renyi divergence of noisy GD, analytic vs empirical")
    first = rows[0]
    doc.p("This section checks the Renyi-divergence theorems on a fixed instance; it is NOT an audit of the "
          "algorithm above. Noisy gradient descent releasing only its last iterate runs on the squared-loss "
          "instance of Chourasia, Ye, Shokri (2021). The estimate comes from "
          f"{first.get('trials', '?')} runs per neighbouring dataset ({first.get('method', 'estimator')}); "
          "the exact value should fall inside its interval, between the Theorem 2 lower bound and the "
          "Theorem 1 upper bound.")
    keys = [k for k in ("exact", "theorem1", "theorem2", "composition") if all(k in r for r in rows)]
    names = {"exact": "exact", "theorem1": "Thm 1 (upper)", "theorem2": "Thm 2 (lower)",
             "composition": "composition"}
    doc.table(["steps K", "alpha", "estimate", "interval"] + [names[k] for k in keys],
              [[str(r["steps"]), f"{float(r['alpha']):g}", _f(r["estimate"]), f"[{_lo(r['lower'])}, {_up(r['upper'])}]"]
               + [_RENYI_ROUND[k](r[k]) for k in keys] for r in rows], left=2)
    doc.image("renyi.png", lambda fmt: plots.renyi_figure(rows, fmt), "Renyi divergence against steps", images,
              image_dir)


#: how each analytic column of the Renyi table is rounded: upper bounds up, the lower bound down, the exact value to
#: nearest
_RENYI_ROUND = {"exact": _f, "theorem1": _up, "theorem2": _lo, "composition": _up}


def _verdict_of(audit_d) -> tuple[str, bool]:
    """(verdict, whether epsilon_lower is certified). Results written before verdicts existed carry
    the GDP estimate in epsilon_lower when their method starts with "gdp": never a verdict then."""
    certified = not str(audit_d.get("method", "")).startswith("gdp")
    if not certified:
        return "inconclusive", False
    v = audit_d.get("verdict")
    if v in VERDICTS:
        return v, True
    return verdict_of(_num(audit_d.get("epsilon_lower")), _num(audit_d.get("epsilon_claimed")),
                      bool(audit_d.get("violation"))), True


def _num(x) -> float:
    if x is None:
        return math.nan
    return float(x)  # "inf"/"nan" strings from to_dict() parse


def _gdp_row(audit_d) -> list:
    gdp = (audit_d.get("details") or {}).get("gdp") or {}
    eps = gdp.get("epsilon")
    if eps is None or str(audit_d.get("method", "")).startswith("gdp"):
        return []
    return [[f"GDP estimate (NOT a bound: {GDP_LABEL}; never sets the verdict)", _f(eps)]]


@blas_limited
def write_report(path, *, audit=None, renyi=None, accountants=None, fmt: str | None = None,
                 title: str | None = None, mechanism=None, steps: int | None = None,
                 upper: dict | None = None) -> Path:
    """Write a report to ``path`` (``.html`` self-contained, or ``.md`` + PNG files); return the path.

    Parameters
    ----------
    audit : AuditResult or dict, optional
        An audit result (its ``details['roc']`` gives the ROC plot).
    renyi : list of dict, optional
        Rows as produced by :func:`dpaudit.report.renyi_table`.
    accountants : dict, optional
        As produced by :func:`dpaudit.report.compare_accountants`.
    fmt : {"html", "md"}, optional
        Overrides the format implied by the suffix.
    title : str, optional
    mechanism : Mechanism, optional
        The audited mechanism, for the gap summary's tightest upper bound (exact epsilon or PLD
        interval) when the audit is of a black-box sampler; composed ``steps`` times (default 1).
        Derived automatically for optimizer audits with Gaussian noise.
    upper : dict, optional
        The tightest upper bound given directly: ``{"kind": "PLD", "lower": ..., "upper": ...}``.

    Raises
    ------
    ValueError
        Unknown suffix/format or no section to write.
    ReportDependencyError
        matplotlib is not installed (``pip install "dpaudit[plot]"``).
    """
    path = Path(os.fspath(path))
    if fmt is None:
        fmt = _FORMATS.get(path.suffix.lower())
        if fmt is None:
            raise ValueError(f"path must end in .html or .md (or pass fmt=), got {path.name!r}")
    image_dir = f"{path.stem}_files"
    text, images = render_report(audit=audit, renyi=renyi, accountants=accountants, fmt=fmt, title=title,
                                 image_dir=image_dir, mechanism=mechanism, steps=steps, upper=upper)
    path.parent.mkdir(parents=True, exist_ok=True)
    if images:
        (path.parent / image_dir).mkdir(exist_ok=True)
        for name, png in images.items():
            (path.parent / image_dir / name).write_bytes(png)
    path.write_text(text, encoding="utf-8")
    return path
