"""What a report says first: what was audited, and the gap between what is proved and what is claimed.

* :func:`audited_rows`: the audited algorithm and its hyper-parameters (steps, sampling rate,
  noise multiplier, clip first), the neighbouring relation, where the claim comes from (RDP / PLD
  accountant, a theorem), the canary, the attack and statistic, trials, seed and confidence.
* :func:`tightest_upper`: the tightest *upper* bound dpaudit can compute for the audited mechanism
  at the audit's delta: the exact epsilon where a closed form exists (Gaussian mechanisms:
  Balle & Wang 2018, Thm. 8), else the PLD accountant's interval (pessimistic and optimistic
  discretisations bracket the true epsilon; Koskela et al. 2021, Meiser & Mohammadi 2018). For
  an optimizer it is computed on the optimizer's per-step mechanism
  (:func:`dpaudit.report.data.optimizer_mechanism`) composed ``steps`` times.
* :func:`gap_summary`: the three numbers in order, with the relation between each pair and a
  one-line reading, e.g. ``lower 1.99 <= PLD [7.04, 7.05] <= claim (RDP) 7.90``.

The certified lower bound is the audit's; the upper numbers are computed for the *model* of the
mechanism (what its claim describes), not measured. So a lower bound above the tightest upper
bound means the implementation does not behave like its model, and a claim below the tightest
upper bound's lower end means the accountant under-reports -- both reported as warnings; only the
audit's certified bound sets the verdict.
"""

from __future__ import annotations

import functools
import math

from dpaudit.accounting.exact import PureDPAccountant, exact_epsilon
from dpaudit.audit.protocol.verdict import verdict_of
from dpaudit.core.display import as_number, bound_text, count_text, number_text, percent_text
from dpaudit.core.validation import UnsupportedMechanismError

__all__ = ["audited_rows", "tightest_upper", "gap_summary", "CLAIM_SOURCES", "NEIGHBOURING_WORDS", "num",
           "directed", "claim_source_text", "claim_source_short", "delta_text", "input_names", "certified_side",
           "evidence_text", "attack_text", "REPORT_GRIDS"]

#: where a claim comes from, in words (PrivacyClaim.source -> text)
CLAIM_SOURCES = {
    "rdp": "RDP accountant (Mironov 2017), converted to (epsilon, delta)",
    "RDPAccountant": "RDP accountant (Mironov 2017), converted to (epsilon, delta)",
    "pld": "privacy-loss-distribution (PLD) accountant",
    "PLDAccountant": "privacy-loss-distribution (PLD) accountant",
    "zcdp": "zCDP budget (Bun & Steinke 2016), converted to (epsilon, delta)",
    "ZCDPAccountant": "zCDP accountant (Bun & Steinke 2016)",
    "tcdp": "tCDP accountant (Bun et al. 2018)",
    "composition": "composition of every iterate (RDP)",
    "langevin-theorem-1": "Theorem 1 of Chourasia, Ye, Shokri (2021), hidden-state noisy GD",
    "rgm-rdp": "Theorem 1 of Hendrikx, Mangold, Bellet (2024), Relative Gaussian mechanism (RDP)",
    "ptr+rgm-rdp": "propose-test-release + Relative Gaussian mechanism (Hendrikx, Mangold, Bellet 2024)",
    "ghazi2024-bias-reduced-sgd": "theorem of the bias-reduced SGD paper (sparse gradients)",
    "none": "no claim (no guarantee)",
}


def claim_source_text(source: str | None) -> str:
    """Where a claim comes from, in words."""
    if not source:
        return "unstated source"
    if source in CLAIM_SOURCES:
        return CLAIM_SOURCES[source]
    if source.startswith("ghazi2024-"):
        return f"a theorem of the sparse-gradients paper ({source[len('ghazi2024-'):]})"
    if source.startswith("langevin-"):
        return f"Chourasia, Ye, Shokri (2021), {source[len('langevin-'):].replace('-', ' ')}"
    if source.startswith("min("):
        return f"the best of several accountants {source[3:]}"
    return source


def claim_source_short(source: str | None) -> str | None:
    """A one-word label of a claim's source for the gap line (RDP, PLD, zCDP, theorem, ...)."""
    if not source:
        return None
    short = {"rdp": "RDP", "RDPAccountant": "RDP", "pld": "PLD", "PLDAccountant": "PLD", "zcdp": "zCDP",
             "ZCDPAccountant": "zCDP", "tcdp": "tCDP", "composition": "composition", "rgm-rdp": "RGM theorem, RDP",
             "ptr+rgm-rdp": "PTR + RGM theorem", "none": "none"}
    if source in short:
        return short[source]
    if source.startswith("min("):
        return "best of accountants"
    return "theorem"

#: neighbouring relation in words
NEIGHBOURING_WORDS = {"add_remove": "add/remove one record", "replace_one": "replace one record"}

#: hyper-parameters shown first, with their names in words
_HP_FIRST = (("steps", "steps T"), ("sample_rate", "sampling rate q"), ("noise_multiplier", "noise multiplier"),
             ("sigma", "noise sigma"), ("clip", "clip norm C"), ("epsilon", "target epsilon"),
             ("delta", "target delta"), ("step_size", "step size"), ("loss", "loss"))


def num(x) -> float:
    """A number from a result dict (``"inf"``/``"nan"`` strings and ``None`` allowed)."""
    return as_number(x)


def _g(x) -> str:
    """A value that is not a bound, as every number of the report is shown (:mod:`dpaudit.core.display`)."""
    return number_text(x)


def directed(x, up: bool, sig: int = 3) -> str:
    """``x`` to ``sig`` significant digits, rounded up (upper bounds, claims) or down (lower bounds),
    so that a displayed bound stays a bound: 7.8993 up is "7.90", 7.0465 down is "7.04". Exact:
    the decimal digits of ``repr(x)`` are rounded, so float(result) is >= x (up) or <= x (down).
    (:func:`dpaudit.core.display.bound_text`, the one rule of every printed bound.)"""
    return bound_text(x, up=up, digits=sig)


def delta_text(delta) -> str:
    """``delta`` in words: ``"delta = 0 (pure DP)"`` or ``"delta = 1e-5"``."""
    d = num(delta)
    if d == 0.0:
        return "delta = 0 (pure DP)"
    if not math.isfinite(d):
        return "delta n/a"
    return "delta = " + f"{d:.3g}".replace("e-0", "e-").replace("e+0", "e+")


def _hp_value(v) -> str:
    """A hyper-parameter as configured (not a measured number: shown exactly, ``0.1`` not ``0.100``)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{v:g}" if isinstance(v, float) else str(v)
    return str(v)


def _hp_text(hp: dict) -> str:
    if not hp:
        return "n/a"
    parts, seen = [], set()
    for key, label in _HP_FIRST:
        if key in hp and hp[key] is not None:
            v = hp[key]
            parts.append(f"{label} {_hp_value(v)}")
            seen.add(key)
    rest = [f"{k} {_hp_value(v)}"
            for k, v in hp.items() if k not in seen and k not in ("neighbouring", "accountant") and v is not None]
    return ", ".join(parts + rest)


def _describe(value) -> str:
    """A short text for an ``attack`` / ``inputs`` detail (a string, or a dict with a name)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("description", "name", "family"):
            if value.get(key):
                extra = {k: v for k, v in value.items() if k not in ("description", "name", "family")
                         and isinstance(v, (str, int, float)) and not isinstance(v, bool)}
                tail = ", ".join(f"{k} {v}" for k, v in list(extra.items())[:4])
                return f"{value[key]}" + (f" ({tail})" if tail else "")
        return ", ".join(f"{k}: {v}" for k, v in list(value.items())[:6])
    return str(value)


def audited_rows(audit: dict, mechanism=None, steps: int | None = None) -> list[tuple[str, str]]:
    """(label, value) rows saying what was audited, from an audit's ``to_dict()`` (and the audited
    ``mechanism``, composed ``steps`` times, when the caller names it)."""
    d = audit.get("details") or {}
    claim = d.get("claim") or {}
    rows = []
    describe = getattr(mechanism, "describe", None)
    if d.get("optimizer"):
        rows.append(("algorithm", f"optimizer {d['optimizer']}"))
        rows.append(("hyper-parameters", _hp_text(d.get("hyperparameters") or {})))
    elif mechanism is not None:
        text = describe() if callable(describe) else repr(mechanism)
        rows.append(("mechanism", text + (f", composed {int(steps)} times" if steps and int(steps) > 1 else "")))
    elif d.get("mechanism"):
        rows.append(("mechanism", _describe(d.get("mechanism"))))
    else:
        rows.append(("mechanism", "a black-box sampler (audit_mechanism; pass mechanism= to the report to name it)"))
    relation = claim.get("neighbouring") or (d.get("hyperparameters") or {}).get("neighbouring") or d.get("neighbouring")
    if relation:
        rows.append(("neighbouring relation", NEIGHBOURING_WORDS.get(relation, str(relation))))
    rel = d["relation"] if isinstance(d.get("relation"), dict) else {}
    if rel.get("claim") and rel.get("claim") != relation:
        rows.append(("claim's relation", NEIGHBOURING_WORDS.get(rel["claim"], str(rel["claim"]))))
    if rel.get("warning"):
        rows.append(("relation warning", str(rel["warning"])))
    eps_c, delta = num(audit.get("epsilon_claimed")), num(audit.get("delta"))
    claim_text = f"epsilon {bound_text(eps_c, up=True)} at {delta_text(delta)}"
    source = claim.get("source")
    if source:
        claim_text += f", from {'the ' if source in CLAIM_SOURCES else ''}{claim_source_text(source)}"
    if claim.get("description"):
        claim_text += f" -- {claim['description']}"
    rows.append(("claim", claim_text))
    if d.get("canary"):
        rows.append(("canary", str(d["canary"])))
    if d.get("inputs") is not None:
        rows.append(("neighbouring inputs", _describe(d.get("inputs"))))
    if d.get("attack") is not None:
        rows.append(("attack", attack_text(d.get("attack"))))
        chosen = d["attack"].get("selected_on") if isinstance(d.get("attack"), dict) else None
        if chosen:
            rows.append(("how the attack was chosen", str(chosen)))
    if d.get("statistic"):
        rows.append(("statistic", str(d["statistic"])))
    trials = audit.get("trials")
    if d.get("m") is not None and str(audit.get("method", "")).startswith("one-run"):
        rows.append(("trials", f"one training run with {int(d['m']):,} canaries"))
    elif trials is not None:
        split = ""
        ns, ne = d.get("n_selection"), d.get("n_evaluation")
        if ns and ne and ns[0]:
            split = f" ({int(ns[0]):,} choose the test, {int(ne[0]):,} certify it)"
        rows.append(("trials", f"{int(trials):,} runs per neighbouring input{split}"))
    seed = d.get("seed")
    rows.append(("seed", "not recorded" if seed is None else str(seed)))
    conf = num(audit.get("confidence"))
    rows.append(("confidence", f"{conf:.4g} (a claim that holds is flagged with probability at most {1 - conf:.2g})"
                 if math.isfinite(conf) else "n/a"))
    rows.append(("method", str(audit.get("method", "n/a"))))
    return rows


def attack_text(attack) -> str:
    """The attack in words: its family and what it reads, and why it won (its predicted epsilon on the selection
    runs beside the next families'); raw numbers and internal fields (tie breaks, ...) are left out."""
    if not isinstance(attack, dict) or not attack.get("family"):
        return _describe(attack)
    fam, desc = str(attack["family"]), attack.get("description")
    text = f"{fam}: {desc}" if desc and desc != fam else fam
    cands = [c for c in attack.get("candidates") or () if isinstance(c, dict) and c.get("family")]
    pred = attack.get("predicted")
    if len(cands) > 1 and pred is not None:
        ranked = sorted((c for c in cands if c["family"] != fam), key=lambda c: -num(c.get("predicted")))
        others = ", ".join(f"{c['family']} {number_text(c.get('predicted'))}" for c in ranked[:3])
        text += (f" -- the best of {len(cands)} attack families on the selection runs (predicted epsilon "
                 f"{number_text(pred)}; next: {others})")
    elif pred is not None:
        text += f" (predicted epsilon on the selection runs {number_text(pred)})"
    return text


def input_names(audit: dict) -> tuple[str, str, str]:
    """The names of the two audited inputs (``x``, ``x'`` for a mechanism; ``D``, ``D'`` for training data) and a
    phrase saying what they are."""
    d = audit.get("details") or {}
    if d.get("optimizer") or "trainings" in d or d.get("canary"):
        canary = d.get("canary")
        return "D", "D'", ("the training data without and with the canary" + (f": {canary}" if canary else ""))
    inputs = d["inputs"] if isinstance(d.get("inputs"), dict) else {}
    if "x" in inputs and "x_prime" in inputs:
        return "x", "x'", f"x = {inputs['x']}, x' = {inputs['x_prime']}"
    return "x", "x'", "the two neighbouring inputs"


def certified_side(audit: dict) -> str | None:
    """Which guess the certified bound rests on: ``"fpr"`` when it is the guess of the second input (its bound is
    log((1 - delta - FNR+) / FPR+), Kairouz, Oh, Viswanath 2015, Thm 2.1), ``"fnr"`` when it is the guess of the
    first (log((1 - delta - FPR+) / FNR+)); None without the worst-case rates."""
    test = (audit.get("details") or {}).get("threshold_test") or {}
    fpr_u, fnr_u = test.get("fpr_upper"), test.get("fnr_upper")
    if fpr_u is None or fnr_u is None:
        return None
    delta = num(audit.get("delta"))
    delta = 0.0 if not math.isfinite(delta) else delta
    tiny = 1e-300
    a = math.log(max(1.0 - delta - float(fnr_u), tiny)) - math.log(max(float(fpr_u), tiny))
    b = math.log(max(1.0 - delta - float(fpr_u), tiny)) - math.log(max(float(fnr_u), tiny))
    return "fpr" if a >= b else "fnr"


_ORIENTATION_WORDS = {">": "above", ">=": "at or above", "<": "below", "<=": "at or below"}


def _counts(test: dict):
    try:
        return int(test["n0"]), int(test["n1"]), int(test["k_fp"]), int(test["k_fn"])
    except (KeyError, TypeError, ValueError):
        return None


def _rate(k: int, n: int) -> str:
    return f"{count_text(k)} of {count_text(n)} ({percent_text(k / n if n else math.nan)})"


def evidence_text(audit: dict) -> list[str]:
    """Where the certified bound comes from, in plain words (paragraphs): what the attack guessed, how often it was
    right on each input, and why those counts bound epsilon -- an (epsilon, delta)-DP mechanism makes every guess at
    most e^epsilon times as often on one input as on the other, plus delta (Kairouz, Oh, Viswanath 2015), so the
    worst-case rates of the telling guess give epsilon >= log((often - delta) / rare). Empty without the counts of a
    threshold test (one-run audits count correct guesses instead)."""
    d = audit.get("details") or {}
    test = d.get("threshold_test") or {}
    counts = _counts(test)
    if counts is None or not counts[0] or not counts[1]:
        return []
    n0, n1, k_fp, k_fn = counts
    a, b, what = input_names(audit)
    attack = d["attack"] if isinstance(d.get("attack"), dict) else {}
    reads = (f"the attack {attack['family']} ({attack.get('description') or attack['family']})" if attack.get("family")
             else f"the score {d['statistic']}" if d.get("statistic") else "the attack's score")
    side_word = _ORIENTATION_WORDS.get(str(test.get("orientation", ">")), str(test.get("orientation")))
    out = [f"What the attack does: {reads} gives every output a score, and the test guesses \"{b}\" when the score "
           f"is {side_word} {number_text(test.get('threshold'))}, \"{a}\" otherwise ({what}). The score and the "
           f"threshold were chosen on selection runs; the counts below are of {count_text(n0)} fresh evaluation runs "
           "per input, drawn independently of them.",
           f"How often it was right: on runs of {b} it guessed \"{b}\" {_rate(n1 - k_fn, n1)}; on runs of {a} it "
           f"guessed \"{a}\" {_rate(n0 - k_fp, n0)}. So it raised a false alarm (\"{b}\" on a run of {a}) "
           f"{percent_text(k_fp / n0)} of the time and missed {percent_text(k_fn / n1)} of the runs of {b}."]
    side = certified_side(audit)
    if side is not None:
        out.append(_why_text(audit, test, side, a, b))
    out += _mathematical_text(audit, a, b)
    return out


def _why_text(audit: dict, test: dict, side: str, a: str, b: str) -> str:
    fpr_u, fnr_u = float(test["fpr_upper"]), float(test["fnr_upper"])
    delta = num(audit.get("delta"))
    delta = 0.0 if not math.isfinite(delta) else delta
    beta = test.get("beta")
    conf = 1.0 - float(beta) if beta is not None else num(audit.get("confidence"))
    guess, often_on, rare_on, often, rare = ((b, b, a, 1.0 - fnr_u, fpr_u) if side == "fpr"
                                             else (a, a, b, 1.0 - fpr_u, fnr_u))
    value = num(test.get("value", audit.get("epsilon_lower")))
    minus = "" if delta == 0.0 else f" - {delta_text(delta)[len('delta = '):]}"
    claim = num(audit.get("epsilon_claimed"))
    if value > 0:
        result = f"epsilon >= {directed(value, up=False)}"
        if math.isfinite(claim):
            result += (f", above the claimed {directed(claim, up=True)}" if value > claim
                       else f", not above the claimed {directed(claim, up=True)}")
    else:
        result = "nothing: the ratio is not above 1, so no epsilon > 0 is certified"
    return (f"Why this bounds epsilon: an (epsilon, delta)-DP mechanism makes every guess at most e^epsilon times as "
            f"often on one input as on the other, plus delta. The telling guess here is \"{guess}\": at "
            f"{percent_text(conf)} confidence it happens on runs of {often_on} at least {percent_text(often)} of the "
            f"time and on runs of {rare_on} at most {percent_text(rare)} (Clopper-Pearson bounds on the counts above). "
            f"So e^epsilon >= ({percent_text(often)}{minus}) / {percent_text(rare)}, which certifies {result}.")


def _mathematical_text(audit: dict, a: str, b: str) -> list[str]:
    found = {f.get("name"): f for f in (audit.get("details") or {}).get("findings") or () if isinstance(f, dict)}
    m = found.get("mathematical")
    if m is None:
        return []
    counts = _counts(m.get("threshold_test") or {})
    tail = ""
    if counts is not None and counts[0] and counts[1]:
        n0, n1, k_fp, k_fn = counts
        tail = (f": it guessed \"{b}\" on {_rate(n1 - k_fn, n1)} runs of {b} and on {_rate(k_fp, n0)} runs of {a}")
    claim = num(audit.get("epsilon_claimed"))
    value = num(m.get("epsilon_lower"))
    state = ("above the claim" if value > claim else "within the claim") if math.isfinite(claim) else ""
    return [f"The mathematical mechanism, on the same runs read as real numbers (the best real-valued attack, "
            f"{m.get('family')}){tail}. It certifies epsilon >= {directed(value, up=False)}"
            + (f", {state}" if state else "") + ". Both findings hold together at the stated confidence: each is "
            "certified at half its failure probability, so the implementation's bound above (every attack, the bits of "
            "the floats included) and this one are not two chances of a false alarm."]


def _mechanism_of(audit: dict):
    """The audited optimizer's per-step mechanism and steps, or (None, None)."""
    d = audit.get("details") or {}
    name, hp = d.get("optimizer"), d.get("hyperparameters")
    if not name or not isinstance(hp, dict):
        return None, None

    if not hp.get("noise_multiplier"):  # only Gaussian-noise optimizers have a per-step mechanism here
        return None, None
    hp = {k: (float(v) if isinstance(v, str) and v in ("inf", "-inf") else v) for k, v in hp.items()}  # JSON
    # (imported here: only an optimizer audit needs them, and the optimizers package costs a report of a mechanism
    # audit a third of a second to import -- the matrix-factorisation strategies and scipy.signal)
    from dpaudit.optimizers import make_optimizer
    from dpaudit.report.data import optimizer_mechanism

    try:
        opt = make_optimizer(name, **hp)
        mech, steps = optimizer_mechanism(opt)
    except (ValueError, TypeError, KeyError):
        return None, None
    return (mech, steps) if mech is not None else (None, None)


#: PLD grids a report tries, coarsest first (:func:`tightest_upper` with ``digits``)
REPORT_GRIDS = (1e-3, 1e-4)


def tightest_upper(audit: dict | None = None, *, mechanism=None, steps: int | None = None,
                   delta: float | None = None, digits: int | None = None) -> dict | None:
    """The tightest upper bound on epsilon dpaudit computes for the audited mechanism (module docstring).

    ``mechanism`` (with ``steps``, default 1) overrides the one derived from the audit's optimizer.
    Returns ``{"kind": "exact" | "PLD", "lower", "upper", "mechanism", "steps", "delta"}`` (and ``"grid"``, the
    PLD's discretisation) or None when no mechanism is known.

    ``digits``: the significant digits the caller displays. ``None`` computes the PLD interval on the PLD
    accountant's default grid; with ``digits`` (the report: 3) it is computed on the coarsest grid of
    :data:`REPORT_GRIDS` whose interval is narrower than a tenth of the last displayed digit. Every grid gives a
    valid interval (the pessimistic end is an upper bound, the optimistic end a lower bound on the true
    epsilon); a coarse one is only wider, and 10 times faster to build (DP-SGD, 100 steps at q = 0.1: 0.6 s
    instead of 12 s, the interval [7.046595, 7.046629] instead of [7.046602, 7.046603], both shown
    "[7.04, 7.05]").
    """
    if delta is None:
        delta = num((audit or {}).get("delta"))
    if mechanism is None and audit is not None:
        mechanism, steps = _mechanism_of(audit)
    if mechanism is None:
        return None
    steps = 1 if steps is None else int(steps)
    describe = getattr(mechanism, "describe", None)
    desc = describe() if callable(describe) else repr(mechanism)
    out = {"mechanism": desc, "steps": steps, "delta": delta}
    if math.isfinite(delta) and delta >= 1.0:  # every mechanism is (0, 1)-DP
        return {**out, "kind": "trivial at delta = 1", "lower": 0.0, "upper": 0.0}
    if not (math.isfinite(delta) and 0.0 < delta < 1.0):
        try:  # basic composition of the pure-DP epsilon, rounded up
            value = PureDPAccountant.quiet().compose(mechanism, steps).total
        except UnsupportedMechanismError:
            value = math.inf
        return {**out, "kind": "pure-DP epsilon", "lower": value, "upper": value}

    exact = exact_epsilon(mechanism, delta, steps)
    if exact is not None:
        return {**out, "kind": "exact", "lower": float(exact), "upper": float(exact)}
    grids = (None,) if digits is None else REPORT_GRIDS
    for grid in grids:
        lo, hi = _pld_interval(mechanism, steps, delta, grid)
        if grid is None or digits is None or _narrow_enough(lo, hi, int(digits)):
            break
    return {**out, "kind": "PLD", "lower": lo, "upper": hi, "grid": grid}


def _narrow_enough(lo: float, hi: float, digits: int) -> bool:
    """Whether [lo, hi] is narrower than a tenth of the last of ``digits`` displayed digits of ``hi``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= 0:
        return math.isinf(hi) or hi <= 0
    last = 10.0 ** (math.floor(math.log10(hi)) - (digits - 1))
    return hi - lo <= 0.1 * last


def _pld_interval(mechanism, steps: int, delta: float, grid=None) -> tuple[float, float]:
    """PLD epsilon interval (on ``grid``, default the accountant's), memoised for hashable (frozen) mechanisms: a
    report and its tests ask for the same one several times."""
    try:
        return _pld_interval_cached(mechanism, steps, delta, grid)
    except TypeError:  # an unhashable mechanism
        return _pld_interval_uncached(mechanism, steps, delta, grid)


def _pld_interval_uncached(mechanism, steps: int, delta: float, grid=None) -> tuple[float, float]:
    from dpaudit.accounting.pld import PLDAccountant  # (only a mechanism without a closed form needs it)

    acc = PLDAccountant() if grid is None else PLDAccountant(grid)
    lo, hi = acc.compose(mechanism, steps).epsilon_interval(delta)
    return float(lo), float(hi)


_pld_interval_cached = functools.lru_cache(maxsize=32)(_pld_interval_uncached)


def _rel(a_hi: float, b_lo: float, a_lo: float | None = None, b_hi: float | None = None) -> str:
    """Relation between two (possibly interval) values in the intended order a <= b."""
    a_lo = a_hi if a_lo is None else a_lo
    b_hi = b_lo if b_hi is None else b_hi
    if a_hi <= b_lo:
        return "<="
    if a_lo > b_hi:
        return ">"
    return "~"


def gap_summary(audit: dict, tight: dict | None = None) -> dict:
    """The certified lower bound, the tightest upper bound and the claim, in order, with a reading.

    Returns ``{"chain": [(label, text)], "relations": [...], "text": one line, "reading": one line,
    "warnings": [...], "values": {...}}``; ``text`` is e.g.
    ``certified lower 1.99 <= PLD [7.04, 7.05] <= claim (RDP) 7.90``.
    """

    lower, claim = num(audit.get("epsilon_lower")), num(audit.get("epsilon_claimed"))
    conf = num(audit.get("confidence"))
    verdict = audit.get("verdict") or verdict_of(lower, claim, bool(audit.get("violation")))
    source = ((audit.get("details") or {}).get("claim") or {}).get("source")
    short = claim_source_short(source)
    claim_label = f"claim ({short})" if short else "claim"
    chain = [("certified lower", directed(lower, up=False))]
    relations, warnings = [], []
    if tight is not None:
        lo_t, hi_t = tight["lower"], tight["upper"]
        t_text = (directed(hi_t, up=True) if lo_t == hi_t
                  else f"[{directed(lo_t, up=False)}, {directed(hi_t, up=True)}]")
        chain.append((tight["kind"], t_text))
        relations.append("<=" if lower <= hi_t else ">")
        relations.append(_rel(hi_t, claim, lo_t, claim))
        chain.append((claim_label, directed(claim, up=True)))
        if lower > hi_t:
            warnings.append(f"The audit certifies more ({directed(lower, up=False)}) than the {tight['kind']} upper "
                            f"bound {directed(hi_t, up=True)} of the modelled mechanism allows: the implementation does not behave "
                            "like its model (check the noise, clipping and sampling it really performs).")
        if claim < lo_t:
            warnings.append(f"The claim {directed(claim, up=True)} is below the {tight['kind']} epsilon "
                            f"{directed(lo_t, up=False)} of the mechanism it describes: the accounting under-reports the privacy "
                            "loss, whatever this audit finds.")
    else:
        relations.append(_rel(lower, claim))
        chain.append((claim_label, directed(claim, up=True)))
    text = chain[0][0] + " " + chain[0][1]
    for rel, (label, value) in zip(relations, chain[1:]):
        text += f"  {rel}  {label} {value}"
    conf_text = f"{conf:.0%} confidence" if math.isfinite(conf) else "the stated confidence"
    if verdict == "violation":
        reading = (f"The audit proves epsilon >= {directed(lower, up=False)} ({conf_text}), above the claimed "
                   f"{directed(claim, up=True)}: "
                   "the claim is false for this implementation on these inputs.")
    elif verdict == "consistent":
        reading = (f"Proved: epsilon >= {directed(lower, up=False)} ({conf_text}); claimed: "
                   f"{directed(claim, up=True)}.")
        if tight is not None and math.isfinite(tight["upper"]) and tight["upper"] > 0:
            reading += (f" The tightest bound dpaudit computes ({tight['kind']}) is {directed(tight['upper'], up=True)}: "
                        f"the attack reaches {min(lower / tight['upper'], 1.0):.0%} of it")
            reading += (f", and the claim is {_g(claim - tight['upper'])} above it." if claim >= tight["upper"]
                        else ".")
        else:
            reading += " No violation; the gap up to the claim is what this attack cannot reach."
    else:
        reading = (f"Nothing proved (lower bound 0): the audit had no power against the claim {directed(claim, up=True)}; "
                   "this is not evidence that the claim holds.")
    return {"chain": chain, "relations": relations, "text": text, "reading": reading, "warnings": warnings,
            "values": {"lower": lower, "claim": claim, "tight": tight}, "verdict": verdict}
