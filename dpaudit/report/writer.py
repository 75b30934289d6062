"""``write_report``: one HTML (self-contained) or Markdown (+ PNG files) page.

Sections, each present when its data is given:

1. **Audit**: claimed epsilon, certified lower bound, method, trials, the verdict (violation,
   consistent, or inconclusive with advisory trial counts), the GDP number labelled as an
   estimate assuming mu-GDP, and the attack's ROC against the region the claim allows (Kairouz,
   Oh, Viswanath 2015).
2. **Accountants**: epsilon(delta) against the number of compositions for RDP, zCDP, PLD and
   the exact curve where known (table + plot); a notion that gives subsampling no amplification
   is marked "(ignores sampling)".
3. **Renyi divergence**: analytic bounds against empirical estimates with their intervals on
   the noisy-GD instance of Chourasia, Ye, Shokri 2021 (table + plot).

The format follows the file suffix (``.html``/``.htm`` or ``.md``) unless ``fmt`` is given.
HTML embeds each plot as a ``data:image/png;base64`` URI and uses inline CSS only, so the single
file can be mailed or attached to a CI run. Markdown writes ``<stem>_files/<plot>.png`` next to
the page and links them relatively.
"""

from __future__ import annotations

import base64
import datetime
import html
import math
import os
from pathlib import Path

from dpaudit.audit.verdict import GDP_LABEL, VERDICTS, advice_lines, verdict_of
from dpaudit.report import plots

__all__ = ["write_report", "render_report"]

_FORMATS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md"}

_CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1150px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;
margin-top:1.6em}table{border-collapse:collapse;margin:.8em 0;font-size:.92em}th,td{border:1px solid #ccc;
padding:.25em .6em;text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}.ok{color:#176e2c;font-weight:600}
.bad{color:#b00020;font-weight:600}.unk{color:#8a5a00;font-weight:600}.note{color:#555;font-size:.9em}img{max-width:100%;border:1px solid #eee}
code{background:#f4f4f4;padding:0 .2em}"""


def _f(x, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return x
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def _audit_dict(audit) -> dict:
    if audit is None:
        return None
    if isinstance(audit, dict):
        return audit
    if hasattr(audit, "to_dict"):
        return audit.to_dict()
    raise ValueError(f"audit must be an AuditResult or its to_dict(), got {type(audit).__name__}")


def _renyi_rows(renyi):
    if renyi is None:
        return None
    rows = renyi.get("rows") if isinstance(renyi, dict) else renyi
    rows = [dict(r) for r in rows]
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
        self.fmt, self.parts = fmt, []

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

    def image(self, name: str, png: bytes, alt: str, images: dict, rel_dir: str):
        if self.fmt == "html":
            b64 = base64.b64encode(png).decode("ascii")
            self.parts.append(f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">')
        else:
            images[name] = png
            self.parts.append(f"![{alt}]({rel_dir}/{name})\n")

    def render(self, title: str) -> str:
        if self.fmt == "html":
            return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>\n"
                    + "\n".join(self.parts) + "\n</body></html>\n")
        return "\n".join(self.parts)


def render_report(*, audit=None, renyi=None, accountants=None, fmt: str = "html", title: str | None = None,
                  image_dir: str = "report_files") -> tuple[str, dict]:
    """Build the report text and its images: returns ``(text, {file name: PNG bytes})``.

    For ``fmt="html"`` the images are embedded and the dict is empty; for ``"md"`` the text links
    ``image_dir/<name>`` and the dict holds the files to write there.
    """
    if fmt not in ("html", "md"):
        raise ValueError(f"fmt must be 'html' or 'md', got {fmt!r}")
    audit_d = _audit_dict(audit)
    rows = _renyi_rows(renyi)
    acc = _check_accountants(accountants)
    if audit_d is None and rows is None and acc is None:
        raise ValueError("nothing to report: give at least one of audit, renyi, accountants")
    plots.require_matplotlib()
    import dpaudit

    title = title or "dpaudit report"
    doc, images = _Doc(fmt), {}
    doc.h(1, title)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    doc.p(f"Generated by dpaudit {dpaudit.__version__} on {stamp}. Upper bounds (accountants, theorems) are "
          "rounded up; the audit's epsilon is a lower bound valid at the stated confidence.", "note")

    if audit_d is not None:
        doc.h(2, "Audit: is the claimed budget contradicted?")
        verdict, certified = _verdict_of(audit_d)
        doc.verdict(verdict, _VERDICT_TEXT[verdict])
        conf = float(audit_d.get("confidence", 0.95))
        bound_label = (f"epsilon lower bound ({conf:.0%} confidence)" if certified
                       else f"GDP number ({GDP_LABEL}; NOT a bound)")
        doc.table(["quantity", "value"], [
            ["claimed epsilon", _f(audit_d.get("epsilon_claimed"))],
            ["delta", _f(audit_d.get("delta"))],
            [bound_label, _f(audit_d.get("epsilon_lower"))],
            ["method", str(audit_d.get("method"))],
            ["trials per neighbouring input", f"{int(audit_d.get('trials', 0)):,}"],
            ["verdict", verdict],
        ] + _gdp_row(audit_d))
        if verdict == "inconclusive":
            eps_c = audit_d.get("epsilon_claimed")
            for line in advice_lines((audit_d.get("details") or {}).get("advice"),
                                     float(eps_c) if eps_c is not None else math.inf):
                doc.p(line, "note")
        doc.p("A lower bound says: with the stated confidence, the mechanism is NOT (epsilon', delta)-DP for any "
              "epsilon' below it. It does not say the mechanism is private: a small lower bound can come from a weak "
              "attack or too few trials, and a bound of 0 (inconclusive) says nothing at all. The GDP number is an "
              f"{GDP_LABEL}: it is never a bound and never sets the verdict.", "note")
        if (audit_d.get("details") or {}).get("roc"):
            doc.image("roc.png", plots.roc_figure(audit_d), "attack ROC against the claimed DP region", images,
                      image_dir)
        else:
            doc.p("No ROC data in this audit result (details['roc'] missing).", "note")

    if acc is not None:
        doc.h(2, f"Accountants compared: epsilon at delta = {acc['delta']:.0e}")
        doc.p(f"Mechanism per step: {acc.get('mechanism', '?')}. Each accountant composes it T times; smaller is "
              "tighter, and every curve is a valid upper bound. The exact curve (when shown) is the true epsilon.")
        labels = list(acc["curves"])
        ignoring = set(acc.get("ignores_sampling") or ())
        header = [f"{lab} (ignores sampling)" if lab in ignoring else lab for lab in labels]
        doc.table(["steps T"] + header, [[str(t)] + [_f(acc["curves"][lab][i], 5) for lab in labels]
                                         for i, t in enumerate(acc["steps"])])
        for lab, note in (acc.get("notes") or {}).items():
            doc.p(f"{lab}: {note}", "note")
        doc.image("accountants.png", plots.accountants_figure(acc), "epsilon against steps per accountant", images,
                  image_dir)

    if rows is not None:
        doc.h(2, "Renyi divergence: analytic vs empirical")
        first = rows[0]
        doc.p("Noisy gradient descent releasing only its last iterate, on the squared-loss instance of Chourasia, "
              "Ye, Shokri (2021). The estimate comes from "
              f"{first.get('trials', '?')} runs per neighbouring dataset ({first.get('method', 'estimator')}); "
              "the exact value should fall inside its interval, between the Theorem 2 lower bound and the "
              "Theorem 1 upper bound.")
        keys = [k for k in ("exact", "theorem1", "theorem2", "composition") if all(k in r for r in rows)]
        names = {"exact": "exact", "theorem1": "Thm 1 (upper)", "theorem2": "Thm 2 (lower)",
                 "composition": "composition"}
        doc.table(["steps K", "alpha", "estimate", "interval"] + [names[k] for k in keys],
                  [[str(r["steps"]), _f(r["alpha"]), _f(r["estimate"]), f"[{_f(r['lower'])}, {_f(r['upper'])}]"]
                   + [_f(r[k]) for k in keys] for r in rows], left=2)
        doc.image("renyi.png", plots.renyi_figure(rows), "Renyi divergence against steps", images, image_dir)
    return doc.render(title), images


_VERDICT_TEXT = {
    "violation": "VIOLATION: the audit certifies more privacy loss than claimed",
    "consistent": "Consistent: the audit certifies some privacy loss, not more than claimed",
    "inconclusive": "Inconclusive: the audit certified nothing (lower bound 0), so it had no power to test the claim; "
                    "this is not evidence that the claim holds",
}


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


def write_report(path, *, audit=None, renyi=None, accountants=None, fmt: str | None = None,
                 title: str | None = None) -> Path:
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
                                 image_dir=image_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    if images:
        (path.parent / image_dir).mkdir(exist_ok=True)
        for name, png in images.items():
            (path.parent / image_dir / name).write_bytes(png)
    path.write_text(text, encoding="utf-8")
    return path
