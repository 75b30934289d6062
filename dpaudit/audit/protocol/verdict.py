"""Verdicts of an audit, labels of estimates, and advisory numbers for audits without power.

An audit has three possible outcomes (``AuditResult.verdict``):

* ``"violation"``: the *certified* lower bound exceeds the claim (``violation`` is True). On a
  mechanism that meets its claim this happens with probability at most ``1 - confidence``.
* ``"consistent"``: the certified bound is positive but does not exceed the claim: the audit
  detected privacy loss, and not more than claimed.
* ``"inconclusive"``: the certified bound is 0, so the audit had no power to contradict (or
  support) the claim; nothing follows from it.

Only certified bounds set a verdict. The GDP number of Dong, Roth, Su (2019) -- mu from the
error rates through the trade-off curve G_mu (their Def. 2.7 / eq. 2.4), then epsilon through
their Cor. 2.13 -- is an *estimate, assuming mu-GDP*: it is a lower bound only when the
mechanism's trade-off curve is exactly Gaussian (Nasr et al. 2023, arXiv:2302.07956),
and can exceed the true epsilon otherwise (e.g. on Laplace or randomized response). It is
always labelled with :data:`GDP_LABEL` and never sets ``violation``, the verdict or an exit code.

Advisory numbers for audits without power are computed in :mod:`dpaudit.audit.stats.power`;
:func:`advice_lines` turns them into words.
"""

from __future__ import annotations

import math

from dpaudit.audit.stats.power import DEFAULT_TARGET_FRACTION, MAX_ADVICE_TRIALS

__all__ = ["VERDICTS", "GDP_LABEL", "verdict_of", "verdict_text", "advice_lines"]

VERDICTS = ("violation", "consistent", "inconclusive")
#: label carried by every printed GDP number (summary, report, CLI, JSON)
GDP_LABEL = "estimate, assuming mu-GDP"


def verdict_of(epsilon_lower: float, epsilon_claimed: float, violation: bool | None = None) -> str:
    """``"violation"`` / ``"consistent"`` / ``"inconclusive"`` from a *certified* lower bound."""
    lower = float(epsilon_lower)
    if violation is None:
        violation = lower > float(epsilon_claimed)
    if violation:
        return "violation"
    return "consistent" if lower > 0.0 else "inconclusive"


def verdict_text(verdict: str, epsilon_lower: float, epsilon_claimed: float) -> str:
    """One line explaining a verdict."""
    if verdict == "violation":
        return (f"VIOLATION: the certified lower bound {epsilon_lower:.4g} exceeds the claimed epsilon "
                f"{epsilon_claimed:.4g}")
    if verdict == "consistent":
        return (f"consistent: the audit certified epsilon >= {epsilon_lower:.4g}, not more than the claimed "
                f"{epsilon_claimed:.4g}")
    return ("inconclusive: the audit certified nothing (lower bound 0); it had no power to test the claim "
            "-- this is not evidence that the claim holds")


def _n(x) -> str:
    return f"{int(x):,}"


def advice_lines(advice: dict | None, epsilon_claimed: float) -> list[str]:
    """Human-readable lines of an advice dict (each says it is advisory)."""
    if not advice:
        return []
    lines = []
    frac = advice.get("target_fraction", DEFAULT_TARGET_FRACTION)
    if "canaries" in advice:  # one-run
        lines.append(f"with {_n(advice['canaries'])} canaries and {_n(advice['guesses'])} guesses the bound is at most "
                     f"{advice['ceiling']:.4g} (all guesses right)")
        pos = advice.get("canaries_for_positive")
        if pos is None:
            lines.append("no number of canaries up to 1,000,000 gives a positive bound at the observed precision "
                         f"({advice['correct']}/{advice['guesses']} right): use a stronger attack, or "
                         "method='threshold' with many training runs")
        else:
            tgt = advice.get("canaries_for_target")
            lines.append(f"about {_n(pos)} canaries would likely give a positive bound at the observed precision"
                         + (f"; {_n(tgt)} would reach {frac:.0%} of the claim" if tgt else ""))
        return [f"advisory: {x}" for x in lines]
    test = advice.get("test")
    if test is not None:
        pos = advice.get("trials_for_positive")
        rates = f"best test seen: FPR {test['fpr']:.3g}, FNR {test['fnr']:.3g}"
        if not test.get("significant", True):
            low = advice.get("trials_at_least")
            at_least = (f"at least about {_n(low)}" if low is not None and low > advice["trials"]
                        else f"more than the {_n(advice['trials'])}")
            need = (f"even if the attack were as good as these runs allow, a positive bound needs {at_least} "
                    "trials per input" if low is not None else
                    f"not even {MAX_ADVICE_TRIALS:.0e} trials would give a positive bound if the attack were as good "
                    "as these runs allow")
            lines.append(f"no significant signal in these {_n(advice['trials'])} trials (advantage z = {test['z']:.2f} < "
                         f"{test['z_needed']:.2f}; {rates}), so no trial count can be promised; {need}; a stronger "
                         "attack (another canary or statistic) may need far fewer")
        elif pos is None:
            lines.append(f"no number of trials up to {MAX_ADVICE_TRIALS:.0e} gives this attack a positive bound "
                         f"({rates}; FPR + FNR leaves no margin): it needs a stronger attack, not more trials")
        else:
            tgt = advice.get("trials_for_target")
            if tgt is not None:
                reach = f"; about {_n(tgt)} would reach {frac:.0%} of the claim"
            else:
                reach = (f"; {frac:.0%} of the claim is out of reach for this test (about {test['limit']:.3g} "
                         "at any number of trials)")
            lines.append(f"about {_n(pos)} trials per input would likely certify a positive bound ({rates}){reach}")
    if "ceiling" in advice and math.isfinite(epsilon_claimed):
        line = (f"ceiling: with {_n(advice['trials'])} trials no threshold audit certifies more than about "
                f"{advice['ceiling']:.3g} against a mechanism exactly at the claim ({epsilon_claimed:.4g})")
        tc = advice.get("trials_for_ceiling_target")
        if advice["ceiling"] <= frac * epsilon_claimed:
            line += (f"; even a perfect attack needs about {_n(tc)} trials to certify {frac:.0%} of it" if tc is not None
                     else f"; no threshold audit with up to {MAX_ADVICE_TRIALS:.0e} trials certifies {frac:.0%} of it")
        elif tc is not None:
            line += (f" (a perfect attack would certify {frac:.0%} of it from about {_n(tc)} trials: a powerless audit "
                     "points to a weak attack or a mechanism far more private than claimed)")
        lines.append(line)
    return [f"advisory: {x}" for x in lines]
