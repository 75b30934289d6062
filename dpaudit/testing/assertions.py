"""Assertion helpers to call inside your own pytest tests.

``assert_audit_consistent`` runs :func:`dpaudit.audit.audit_mechanism` on a pair of
neighbouring inputs and fails, with a message saying what went wrong, when the audit's
certified lower bound on epsilon exceeds the claimed epsilon (verdict "violation"; with
``require_power=True`` also when the audit is "inconclusive", i.e. certified nothing). ``assert_accountant_sound`` checks an
accountant (or a :class:`~dpaudit.accounting.claim.PrivacyClaim`) against three facts that any
valid upper bound satisfies: it is internally consistent, it is at least the exact epsilon
where that is known in closed form, and it is at least an audit's lower bound.

Both are *statistical* only through the audit: a mechanism that satisfies its claim fails
with probability at most ``1 - confidence`` (default 1%); the pytest plugin fixes the seed
per test (a hash of its node id) so a failure reproduces exactly.

References
----------
Kairouz, Oh, Viswanath (2015), the (epsilon, delta) hypothesis-testing region used by the
audit; Balle & Wang (2018), Thm. 8, the exact Gaussian epsilon(delta); the exact Laplace
curve delta(e) = max(0, 1 - exp((e - epsilon)/2)) (e.g. Balle et al. 2018, "Privacy
amplification by subsampling", Table of privacy profiles).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.exact import exact_epsilon
from dpaudit.audit import audit_mechanism
from dpaudit.audit.protocol.verdict import advice_lines
from dpaudit.core.defaults import no_pure_dp
from dpaudit.core.describe import describe_object, describe_value
from dpaudit.core.validation import check_count, check_delta, check_epsilon, check_nonnegative
from dpaudit.testing._config import active_config

#: ``exact_epsilon`` lives in :mod:`dpaudit.accounting.exact` (the exact accountant); re-exported here
#: for compatibility
__all__ = ["assert_audit_consistent", "assert_accountant_sound", "exact_epsilon", "mechanism_sampler"]

#: what a violation comes from, in the words of the failure message (``AuditResult.cause``)
_CAUSES = {
    "floating-point": "FLOATING-POINT representation of the outputs, not the noise scale: the winning attack reads "
                      "their bits, and some outputs can only come from one of the two inputs (Mironov 2012); the bound "
                      "is valid for the code as written",
    "distribution": "the mechanism's output distribution: the two inputs are told apart more often than the claim "
                    "allows",
}

# frames of this module are hidden from pytest's failure output (the failing line of YOUR test is shown)
__tracebackhide__ = True


def _fmt(v) -> str:
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:.6g}"
    return str(v)


def _short(a) -> str:
    return describe_value(a)  # never raises, whatever the user passed (ragged tuples, objects)


def _resolve(trials, confidence, seed):
    """The settings in force and where they came from (a text saying, for each, whether the call, the pytest
    plugin or the defaults set it). A seed left to chance is drawn here (as ``seed=None`` would, from the
    operating system's entropy) so that a failure can say which seed reproduces it."""
    cfg = active_config()
    merged = cfg.merged(trials=trials, confidence=confidence, seed=seed)
    explicit = [n for n, v in (("trials", trials), ("confidence", confidence), ("seed", seed)) if v is not None]
    parts = [p for p in cfg.source.split(", ") if p and p != "defaults"
             and not (seed is not None and p == "seed from the test id")]
    if merged.seed is None:
        merged = merged.merged(seed=int(np.random.SeedSequence().entropy))  # type: ignore[arg-type]  # fresh: an int
        parts.append("seed drawn fresh")
    where = (", ".join(parts) or "defaults") + (f"; {', '.join(explicit)} from the call" if explicit else "")
    return merged, where


def _rerun(cfg, seed_given: bool) -> str:
    """How to repeat this audit, in the words of the context: the call's own ``seed=`` when it gave one, the
    pytest option under the plugin, the keyword outside."""
    if seed_given:
        return f"the call's seed={cfg.seed} repeats this audit exactly"
    if cfg.under_pytest:
        return f"re-run with --dpaudit-seed {cfg.seed} (or @pytest.mark.dpaudit(seed={cfg.seed})) to repeat this audit"
    return f"pass seed={cfg.seed} to repeat this audit exactly"


def _another_seed(cfg) -> str:
    other = int(cfg.seed) + 1 if cfg.seed is not None else 1
    if cfg.under_pytest:
        return f"--dpaudit-seed {other}"
    return f"seed={other}"


def mechanism_sampler(mechanism):
    """A ``sampler(x, rng, size)`` drawing from a dpaudit mechanism (``mechanism.sample``)."""

    def sampler(x, rng, size):
        return mechanism.sample(x, rng, size)

    sampler.__name__ = f"sampler[{type(mechanism).__name__}]"
    sampler.mechanism = mechanism  # type: ignore[attr-defined]  # a function attribute: lets the audit see which mechanism it is (e.g. no pure-DP guarantee)
    return sampler


def _as_sampler(sampler):
    if callable(sampler) and not hasattr(sampler, "sample"):
        return sampler
    if hasattr(sampler, "sample"):
        return mechanism_sampler(sampler)
    raise ValueError(f"sampler must be a callable sampler(x, rng, size) or a mechanism with .sample, got {describe_value(sampler)}")


def assert_audit_consistent(sampler, x, x_prime, epsilon, delta=None, *, trials=None, confidence=None, seed=None,
                            statistic=None, require_power: bool = False):
    """Fail if an audit of ``sampler`` on ``(x, x_prime)`` contradicts (epsilon, delta)-DP.

    Parameters
    ----------
    sampler : callable or mechanism
        ``sampler(x, rng, size)`` returns ``size`` outputs of the mechanism on input ``x``
        (``rng`` a ``numpy.random.Generator``); a dpaudit mechanism (anything with
        ``.sample(value, rng, size)``) is accepted too.
    x, x_prime : array-like
        Neighbouring inputs (datasets, or query values of a worst-case pair).
    epsilon, delta : float
        The claim to check: epsilon >= 0, delta in [0, 1). ``delta`` not given means a pure-DP
        claim (0) -- except for a dpaudit mechanism with no pure-DP guarantee (a Gaussian),
        for which it must be given: a silent pure-DP default would fail a correct mechanism.
    trials, confidence, seed : optional
        Audit settings; ``None`` takes them from the pytest plugin (marker, then
        ``--dpaudit-*`` options) or the defaults (20,000 trials, confidence 0.99).
    statistic : callable, "auto", "auto-real" or family names, optional
        Passed to :func:`dpaudit.audit.audit_mechanism`. Default: ``"auto"`` (every attack,
        including the bit-level one that catches textbook floating-point noise) for a sampler,
        ``"auto-real"`` (outputs read as real numbers) for a dpaudit mechanism object, which
        describes the mathematical mechanism.
    require_power : bool
        Also fail when the audit is *inconclusive* (it certified nothing, so it could not have
        caught a violation); the message gives the advisory trial counts. Default False: an
        inconclusive audit passes, and its ``verdict`` says so.

    Returns
    -------
    AuditResult
        The audit, when it does not contradict the claim; ``result.verdict`` is ``"consistent"``
        or ``"inconclusive"``.

    Raises
    ------
    AssertionError
        When the audit's certified lower bound on epsilon exceeds the claimed epsilon (verdict
        "violation"); the message states the verdict, the claim, the lower bound, the method,
        the trials and seed, and likely causes. The GDP estimate never triggers it.
    """

    epsilon = check_epsilon("epsilon", epsilon)
    if delta is None:

        desc = no_pure_dp(sampler)
        if desc is not None:
            raise ValueError(f"delta must be given for {desc}: it has no pure-DP guarantee, so the default pure-DP "
                             "claim (delta = 0) would fail even a correct mechanism; pass the delta of its claim, "
                             "e.g. delta=1e-5")
        delta = 0.0
    delta = check_nonnegative("delta", delta)
    if not delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    cfg, where = _resolve(trials, confidence, seed)
    if statistic is None:
        # a dpaudit mechanism object describes the mathematical mechanism (its .sample is a simulation aid):
        # read its outputs as real numbers; a user's sampler is audited as written, bit-level attack included
        statistic = "auto-real" if hasattr(sampler, "sample") else "auto"
    result = audit_mechanism(_as_sampler(sampler), x, x_prime, epsilon=epsilon, delta=delta, trials=cfg.trials,
                             confidence=cfg.confidence, statistic=statistic, seed=cfg.seed)
    if result.violation:
        raise AssertionError(_violation_message(result, cfg, where, x, x_prime, what="claimed"))
    if require_power and result.verdict == "inconclusive":
        raise AssertionError(_inconclusive_message(result, cfg, where, x, x_prime))
    return result


def _seed_line(cfg, where: str) -> str:
    return "  re-run:".ljust(16) + _rerun(cfg, "seed from the call" in where)


def _inconclusive_message(result, cfg, where, x, x_prime) -> str:
    ex = result.explain()
    more = ("@pytest.mark.dpaudit(trials=...) or --dpaudit-trials" if cfg.under_pytest
            else f"trials=..., now {int(result.trials):,}")
    lines = [
        "dpaudit: the audit is inconclusive: it certified nothing (lower bound 0), so it had no power to test the "
        "claim (require_power=True).",
        "  verdict:".ljust(16) + "inconclusive",
        "  claimed:".ljust(16) + f"epsilon = {_fmt(float(result.epsilon_claimed))} at delta = {_fmt(float(result.delta))}",
        "  method:".ljust(16) + str(result.method),
        "  trials:".ljust(16) + f"{int(result.trials):,} per dataset, seed {cfg.seed} ({where})",
        _seed_line(cfg, where),
        "  inputs:".ljust(16) + f"x = {_short(x)}, x_prime = {_short(x_prime)}",
    ]
    lines += ["  " + line for line in advice_lines(result.details.get("advice"), float(result.epsilon_claimed))]
    lines.append(f"Raise the trials ({more}), use a sharper statistic, or choose neighbouring inputs that differ more"
                 + (": " + "; ".join(ex["next"][1:]) if len(ex["next"]) > 1 else "") + ".")
    return "\n".join(lines)


def _attack_line(result) -> str:
    attack = result.details.get("attack")
    if not isinstance(attack, dict) or not attack.get("family"):
        return ""
    return f"{attack['family']} ({attack.get('description', '')})"


def _violation_message(result, cfg, where, x, x_prime, *, what: str) -> str:
    """The failure message: the verdict in :func:`~dpaudit.audit.protocol.verdict.explain`'s words (both findings
    and the cause when the audit has them), the numbers, how to repeat the audit, and what to check."""
    conf = float(result.confidence)
    ex = result.explain()
    cause = result.cause or "distribution"
    lines = [
        "dpaudit: the audit contradicts the " + what + " privacy budget.",
        ex["line"],
        "  verdict:".ljust(16) + "violation (the certified lower bound exceeds the claim)",
        "  cause:".ljust(16) + _CAUSES.get(cause, cause),
        *["  finding:".ljust(16) + f for f in ex["findings"]],
        "  claimed:".ljust(16) + f"epsilon = {_fmt(float(result.epsilon_claimed))} at delta = {_fmt(float(result.delta))}",
        "  lower bound:".ljust(16) + f"epsilon >= {_fmt(float(result.epsilon_lower))} "
                                      f"(valid with confidence {conf:.4g})",
        "  method:".ljust(16) + str(result.method),
        *(["  attack:".ljust(16) + _attack_line(result)] if _attack_line(result) else []),
        "  trials:".ljust(16) + f"{int(result.trials):,} per dataset, seed {cfg.seed} ({where})",
        _seed_line(cfg, where),
        "  inputs:".ljust(16) + f"x = {_short(x)}, x_prime = {_short(x_prime)}",
    ]
    if result.gdp_estimate is not None:
        lines.append("  estimate:".ljust(16) + f"GDP epsilon {_fmt(float(result.gdp_estimate))} (estimate, assuming "
                                                 "mu-GDP; not a bound, not what failed this check)")
    lines += [
        f"With confidence {conf:.4g} the mechanism is NOT ({_fmt(float(result.epsilon_claimed))}, "
        f"{_fmt(float(result.delta))})-DP on these neighbouring inputs: it lets an attacker tell them apart "
        "better than the claim allows.",
        "Why: " + "; ".join(ex["why"]) + "." if ex["why"] else "",
        "Common causes: " + "; ".join(ex["next"][:-1]) + ".",
        f"A mechanism that meets its claim fails this check with probability at most {1 - conf:.2g}; re-run with "
        f"another seed ({_another_seed(cfg)}) to tell a rare fluke from a bug.",
    ]
    return "\n".join(line for line in lines if line)


def _llr_sampler(mechanism, count: int):
    """Sampler of the summed log-likelihood-ratio statistic of ``count`` draws (post-processing),
    and the neighbouring query values it is audited on, from the mechanism's own
    :meth:`~dpaudit.mechanisms.base.Mechanism.likelihood_ratio_test`; ``None`` without one.

    The sum over the ``count`` releases of the per-release log-likelihood ratio is a
    post-processing of the composed output, so an audit of it is an audit of the composition.
    """
    method = getattr(mechanism, "likelihood_ratio_test", None)
    test = method() if callable(method) else None
    if test is None:
        return None
    x, x_prime, llr = test

    def sampler(value, rng, size):
        draws = mechanism.sample(value, rng, (int(size), count)) if count > 1 else mechanism.sample(value, rng, int(size))
        draws = np.asarray(draws, dtype=float).reshape(int(size), count)
        return llr(draws).sum(axis=1)

    return sampler, x, x_prime


def assert_accountant_sound(accountant, mechanism=None, *, delta=1e-5, count=1, sampler=None, x=None, x_prime=None,
                            exact=None, audit=True, trials=None, confidence=None, seed=None, rtol=1e-9):
    """Fail if ``accountant``'s epsilon(delta) cannot be a valid upper bound.

    ``accountant`` is anything with ``epsilon(delta)`` and ``delta(epsilon)`` (a dpaudit
    accountant that has already composed the mechanism ``count`` times, or a ``PrivacyClaim``).
    Checks, in order:

    1. ``epsilon(delta)`` is a number >= 0 (``inf`` allowed, NaN not) and non-increasing in delta
       on ``{delta/10, delta, min(10 delta, 0.5)}``;
    2. round trip: ``delta(epsilon(delta)) <= delta`` (relative slack ``1e-6``);
    3. ``epsilon(delta) >= exact`` (``exact`` given, or :func:`exact_epsilon` of ``mechanism``);
    4. an audit does not contradict it: if ``sampler`` (with ``x``, ``x_prime``) is given it is
       audited; otherwise a ``mechanism`` with a ``likelihood_ratio_test()`` (Gaussian, Laplace)
       is audited on its neighbouring values through the summed log-likelihood ratio over
       ``count`` releases. ``audit=False`` skips this.

    Returns a dict of what was measured (``epsilon``, ``exact``, ``audit`` result or None).
    Raises AssertionError with a message naming the failed check.
    """
    delta = check_delta("delta", delta)
    count = check_count("count", count, minimum=1)
    label = getattr(accountant, "source", None) or type(accountant).__name__
    eps = float(accountant.epsilon(delta))
    if math.isnan(eps) or eps < 0:
        raise AssertionError(f"dpaudit: {label}.epsilon({delta:g}) = {eps!r}; an upper bound must be a number >= 0 "
                             "(inf when no guarantee exists).")
    grid = [delta / 10.0, delta, min(10.0 * delta, 0.5)]
    values = [float(accountant.epsilon(d)) for d in grid]
    for (d1, e1), (d2, e2) in zip(zip(grid, values), zip(grid[1:], values[1:])):
        if e2 > e1 * (1 + rtol) + rtol:
            raise AssertionError(f"dpaudit: {label}.epsilon is increasing in delta: epsilon({d1:g}) = {_fmt(e1)} "
                                 f"< epsilon({d2:g}) = {_fmt(e2)}; a privacy curve can only decrease in delta.")
    if math.isfinite(eps):
        back = float(accountant.delta(eps))
        if back > delta * (1 + 1e-6) + 1e-300:
            raise AssertionError(f"dpaudit: {label} is inconsistent: epsilon({delta:g}) = {_fmt(eps)} but "
                                 f"delta({_fmt(eps)}) = {back:.6g} > {delta:g}; epsilon(delta) and delta(epsilon) "
                                 "must describe the same curve.")
    if exact is None and mechanism is not None:
        exact = exact_epsilon(mechanism, delta, count)
    if exact is not None and eps < float(exact) * (1 - rtol) - rtol:
        raise AssertionError(f"dpaudit: {label}.epsilon({delta:g}) = {_fmt(eps)} is below the exact value "
                             f"{_fmt(float(exact))} of {_describe(mechanism)} composed {count} time(s): the accountant "
                             "under-reports the privacy loss (not a valid upper bound).")
    result = None
    if audit and math.isfinite(eps):
        if sampler is not None:
            if x is None or x_prime is None:
                raise ValueError("x and x_prime must be given with sampler")
            s, xa, xb = _as_sampler(sampler), x, x_prime
        else:
            s, xa, xb = (_llr_sampler(mechanism, count) if mechanism is not None else None) or (None, None, None)
        if s is not None:

            cfg, where = _resolve(trials, confidence, seed)
            # the accountant describes the mathematical mechanism: read outputs as real numbers (no
            # bit-level attack on the floating-point sampler, whose leak is not the accountant's)
            result = audit_mechanism(s, xa, xb, epsilon=eps, delta=delta, trials=cfg.trials,
                                     confidence=cfg.confidence, seed=cfg.seed, statistic="auto-real")
            if result.violation:
                raise AssertionError(_violation_message(result, cfg, where, xa, xb,
                                                        what=f"accountant's ({label})"))
    return {"epsilon": eps, "exact": exact, "audit": result}


def _describe(mechanism) -> str:
    return describe_object(mechanism)
