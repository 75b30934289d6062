"""Shared reporting for proof checks: a table of comparisons and the worst margin.

Every check builds rows ``(case, bound, exact, margin)`` where ``margin = bound - exact`` for
an upper bound (must be >= -tol) and reports them with :func:`report`.
"""

from __future__ import annotations

import math


def report(title: str, header: list[str], rows: list[list], margins: list[float], *, tol: float = 0.0,
           note: str = "") -> int:
    """Print a table and the worst margin; return 0 when every margin >= -tol, else 1."""
    print(f"== {title}")
    if note:
        print(note)
    widths = [max(len(str(h)), *(len(_fmt(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(header)]
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(_fmt(v).rjust(w) for v, w in zip(r, widths)))
    worst = min(margins) if margins else math.inf
    ok = all(m >= -tol for m in margins)
    print(f"compared {len(margins)} cases; worst margin {worst:.3e} (tolerance {tol:g}); "
          f"{'OK' if ok else 'VIOLATION'}")
    return 0 if ok else 1


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.10g}"
    return str(v)
