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
from dpaudit.core.display import bound_text

__all__ = ["VERDICTS", "GDP_LABEL", "verdict_of", "verdict_text", "advice_lines", "explain", "scenario_of",
           "SCENARIOS", "CHECKS", "POWER_HINTS", "ACTIONS"]

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
        return (f"VIOLATION: the certified lower bound {_lo(epsilon_lower)} exceeds the claimed epsilon "
                f"{_up(epsilon_claimed)}")
    if verdict == "consistent":
        return (f"consistent: the audit certified epsilon >= {_lo(epsilon_lower)}, not more than the claimed "
                f"{_up(epsilon_claimed)}")
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


# -- what a verdict means and what to do next, chosen by the evidence ---------------------------------------
#: who produced the outputs: a mechanism (a sampler), an optimizer of dpaudit, the user's training loop, a library
SCENARIOS = ("mechanism", "optimizer", "training", "library")

#: what to check after a violation, by leak and scenario (most common first)
CHECKS = {
    ("floating-point", "mechanism"): (
        "the sampler adds real-valued noise in floating point (x + noise in doubles): the low bits of its outputs "
        "depend on x (Mironov 2012); snap the output to a grid after clamping (Mironov's snapping mechanism), or "
        "draw exact discrete noise on a grid -- dpaudit's own Laplace.sample and Gaussian.sample do",
        "statistic='auto-real' audits the mathematical mechanism only (the outputs read as real numbers)",
    ),
    ("floating-point", "library"): (
        "the library's sampler adds floating-point noise whose low bits depend on the input (Mironov 2012): use "
        "its secure or snapping option if it has one, and report the leak to its maintainers",
        "statistic='auto-real' audits the mathematical mechanism only",
    ),
    ("distribution", "mechanism"): (
        "noise calibrated to the wrong sensitivity: the inputs differ by more than the sensitivity the noise is "
        "scaled to (replace-one neighbours double the sensitivity of a sum)",
        "a noise scale given as a variance instead of a standard deviation, or a Laplace scale as epsilon",
        "a vector output whose coordinates each spend the budget (the epsilons of the coordinates add up)",
        "one budget charged for two releases (every release composes)",
    ),
    ("distribution", "library"): (
        "the claim read from the library's parameters does not describe its output: check the documented "
        "epsilon, the neighbouring relation it assumes (add/remove or replace-one) and the sensitivity it bounds",
        "the library's input bounds (clamping) differ from the ones the claim assumes",
    ),
    ("distribution", "optimizer"): (
        "noise calibrated to the wrong sensitivity or neighbouring relation (replace-one neighbours double the "
        "sensitivity of a sum)",
        "a noise scale given as a variance instead of a standard deviation",
        "noise added before clipping, or clipping of the batch instead of each example",
        "subsampling claimed but not performed (or at another rate)",
        "one budget charged for two releases (every release composes)",
    ),
}
CHECKS[("distribution", "training")] = CHECKS[("distribution", "optimizer")]
CHECKS[("floating-point", "optimizer")] = CHECKS[("floating-point", "mechanism")]
CHECKS[("floating-point", "training")] = CHECKS[("floating-point", "mechanism")]
#: the last check of every violation
FLUKE = ("a rare fluke: a claim that holds is flagged with probability at most 1 - confidence; re-run with other "
         "seeds (the same seed gives the same result)")

#: what can give an audit without power its power (besides the advisory trial counts)
POWER_HINTS = {
    "mechanism": ("more trials (the advisory count above); a lower confidence certifies more from the same runs, "
                  "at the price of more false alarms",
                  "a stronger attack: a neighbouring pair the mechanism reacts to more (pairs=statdp_pairs(n)), or a "
                  "statistic closer to the likelihood ratio"),
    "optimizer": ("more trials (the advisory count above)",
                  "a stronger attack: a canary the optimizer reacts to more (white-box gradient canary)",
                  "for dp-gd / dp-sgd, method='one-run' with many canaries certifies from a single training run"),
    "training": ("more canaries (one run) or more trainings (many runs): the advisory count above",
                 "a score closer to the likelihood ratio of the canary (e.g. the canary coordinate's movement)"),
    "library": ("more trials (the advisory count above)",
                "a neighbouring pair at the edge of the library's input bounds"),
}


def scenario_of(details: dict) -> str:
    """Who produced the audited outputs, read from a result's ``details``: an optimizer of dpaudit, the user's
    training loop (``audit_training`` / ``audit_one_run``), a mechanism library's adapter, or a mechanism."""
    if not isinstance(details, dict):
        return "mechanism"
    if details.get("library"):
        return "library"
    if details.get("optimizer"):
        return "optimizer"
    if "trainings" in details:
        return "training"
    return "mechanism"


def _lo(x: float) -> str:
    """A certified lower bound as printed: rounded down (:func:`dpaudit.core.display.bound_text`)."""
    return bound_text(x, up=False)


def _up(x: float) -> str:
    """A claim as printed: rounded up."""
    return bound_text(x, up=True)


#: the one-sentence next step of a verdict, by leak and scenario (the full list is ``explain()["next"]``)
ACTIONS = {
    ("floating-point", "mechanism"): "Fix: snap the output to a grid, or draw discrete noise; statistic='auto-real' "
                                     "audits the mathematics only.",
    ("floating-point", "library"): "Fix: use the library's secure (snapping) mode if it has one, and report the leak "
                                   "to its maintainers; statistic='auto-real' audits the mathematics only.",
    ("distribution", "mechanism"): "Check: the sensitivity and the noise scale the claim assumes (the checks below).",
    ("distribution", "optimizer"): "Check: the noise calibration, the clipping and the sampling against the claim "
                                   "(the checks below).",
    ("distribution", "library"): "Check: the claim read from the library (its epsilon, its neighbouring relation, its "
                                 "input bounds).",
    "inconclusive": "Next: more trials or a stronger attack (the advisory numbers say how many).",
}
ACTIONS[("floating-point", "optimizer")] = ACTIONS[("floating-point", "mechanism")]
ACTIONS[("floating-point", "training")] = ACTIONS[("floating-point", "mechanism")]
ACTIONS[("distribution", "training")] = ACTIONS[("distribution", "optimizer")]


def _findings_of(details: dict) -> dict:
    return {f["name"]: f for f in details.get("findings") or () if isinstance(f, dict)}


def explain(verdict: str, epsilon_lower: float, epsilon_claimed: float, details: dict) -> dict:
    """What an audit found, why, and what to do next, in words chosen by the evidence: the verdict, the two findings
    when the contest had a bit-level family (the implementation and the mathematical mechanism), the winning attack
    and its leak kind, and the scenario (:func:`scenario_of`). Returns ``{"headline", "findings", "why", "next",
    "leak", "scenario"}`` (lists of sentences where plural); every surface (summary, report, CLI, pytest) prints it."""
    details = details if isinstance(details, dict) else {}
    scenario = scenario_of(details)
    attack = details["attack"] if isinstance(details.get("attack"), dict) else {}
    found = _findings_of(details)
    impl, math_ = found.get("implementation"), found.get("mathematical")
    leak = details.get("cause") or attack.get("leak", "distribution")
    family = attack.get("family", "the attack")
    # what certified the bound, in words: the winning attack family, or the statistic fixed in advance (optimizer and
    # training audits, a user's callable) -- never "the attack (the attack)"
    stat = details.get("statistic")
    attacker = (f"the attack {family} ({attack.get('description', '')})" if attack.get("family")
                else f"the statistic fixed in advance ({stat})" if stat else "the audit's statistic")
    out: dict = {"verdict": verdict, "scenario": scenario, "leak": leak if verdict == "violation" else None,
                 "findings": [], "why": [], "next": []}
    if impl is not None and math_ is not None:
        out["findings"] = [
            f"implementation (every attack, bits of floats included; winner: {impl['family']}): epsilon >= "
            f"{_lo(impl['epsilon_lower'])}",
            f"mathematical mechanism (outputs read as real numbers; winner: {math_['family']}): epsilon >= "
            f"{_lo(math_['epsilon_lower'])}",
            "both hold together at the stated confidence (each at half its failure probability)"]
    if verdict == "violation":
        if leak == "floating-point":
            head = (f"VIOLATION through floating-point representation (Mironov 2012): {_lo(epsilon_lower)} > "
                    f"{_up(epsilon_claimed)}.")
            if math_ is not None:
                state = "consistent" if math_["epsilon_lower"] > 0 else "not contradicted"
                head += (f" The mathematical mechanism is {state}: {_lo(math_['epsilon_lower'])} <= "
                         f"{_up(epsilon_claimed)}.")
            out["why"].append(f"the winning attack ({family}) reads the binary representation of the outputs: outputs "
                              "reachable from one input are not reachable from the other")
        else:
            head = (f"VIOLATION: the certified lower bound {_lo(epsilon_lower)} exceeds the claimed epsilon "
                    f"{_up(epsilon_claimed)}.")
            if math_ is not None:
                head += (f" The mathematical mechanism itself leaks: {_lo(math_['epsilon_lower'])} > "
                         f"{_up(epsilon_claimed)}.")
            out["why"].append(f"{attacker} tells the two inputs apart more often than the claim allows")
        out["next"] = list(CHECKS.get((leak, scenario), CHECKS[("distribution", "mechanism")])) + [FLUKE]
        out["action"] = ACTIONS.get((leak, scenario), ACTIONS[("distribution", "mechanism")])
    elif verdict == "consistent":
        head = (f"consistent: the audit certified epsilon >= {_lo(epsilon_lower)}, not more than the claimed "
                f"{_up(epsilon_claimed)}.")
        if math_ is not None and impl is not None:
            head += (f" The implementation ({_lo(impl['epsilon_lower'])}) and the mathematical mechanism "
                     f"({_lo(math_['epsilon_lower'])}) are both within the claim.")
        out["why"].append(f"{attacker} certified some privacy loss, and not more than claimed")
        out["next"] = ["this is evidence at the audit's power, not a proof: compare the bound with the ceiling of a "
                       "threshold audit at these trials (details['advice']) to see how much more an audit could show"]
    else:
        head = ("inconclusive: the audit certified nothing (lower bound 0); it had no power to test the claim -- "
                "this is not evidence that the claim holds.")
        out["next"] = list(POWER_HINTS.get(scenario, POWER_HINTS["mechanism"]))
        out["action"] = ACTIONS["inconclusive"]
    out["headline"] = head
    out.setdefault("action", "")
    out["line"] = f"{head} {out['action']}".strip()
    return out
