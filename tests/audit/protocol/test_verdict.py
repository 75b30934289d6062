"""Issue 11, verdicts that mean what they say.

* An estimate (GDP, assuming mu-GDP) never sets ``violation``, the verdict or an exit code, and
  every printed form labels it "estimate, assuming mu-GDP".
* Three-way verdict: violation / consistent / inconclusive (the audit certified nothing).
* Advisory numbers for audits without power: sound on null data (no promise), useful on a weak
  signal (running the suggested trials does certify), never changing ``epsilon_lower``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.audit import AuditResult, audit_mechanism, audit_optimizer
from dpaudit.audit.protocol.verdict import GDP_LABEL, MAX_ADVICE_TRIALS, VERDICTS, advice_lines, verdict_of
from dpaudit.audit.stats.binomial import cp_upper
from dpaudit.audit.stats.error_rates import epsilon_lower_from_rates
from dpaudit.audit.stats.one_run import one_run_epsilon_lower
from dpaudit.audit.stats.power import POWER_Z, one_run_advice, threshold_ceiling, trials_needed

BETA = 0.05


def laplace(x, rng, size):
    return x + rng.laplace(0.0, 1.0, size)


def randomized_response(x, rng, size):
    """epsilon = 1 randomized response on a bit."""
    keep = rng.random(size) < math.e / (1.0 + math.e)
    return np.where(keep, x, 1.0 - x).astype(float)


def gaussian_shift(shift):
    def sampler(x, rng, size):
        return shift * x + rng.normal(0.0, 1.0, size)
    return sampler


def identical(x, rng, size):
    return rng.normal(0.0, 1.0, size)


def _limit(R, beta=BETA):
    """Binomial(R, beta) upper limit: mean + 3 sd."""
    return R * beta + 3.0 * math.sqrt(R * beta * (1.0 - beta))


# ---------------------------------------------------------------------------------------------
# GDP estimates never decide anything
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,sampler", [("laplace", laplace), ("randomized response", randomized_response)])
def test_gdp_method_violation_is_sound_on_correct_mechanisms(name, sampler):
    """Correct epsilon = 1 mechanisms audited with method="gdp" at delta = 1e-5: the fraction of
    audits with violation=True must be a binomial(beta) fluke count. The old code set violation
    from the GDP estimate (which exceeds 1 here, its assumption being false) in every audit."""
    R = 100
    results = [audit_mechanism(sampler, 0.0, 1.0, statistic="auto-real", epsilon=1.0, delta=1e-5, trials=2_000, seed=5_000 + s,
                               method="gdp") for s in range(R)]
    hits = sum(r.violation for r in results)
    assert hits <= _limit(R), (name, hits)
    # the estimate itself does overshoot (documents why it must not decide): mean well above the true 1
    est = [r.gdp_estimate for r in results]
    assert np.mean(est) > 2.0, (name, np.mean(est))
    # and the verdict follows the certified bound only
    for r in results:
        assert r.epsilon_lower <= r.gdp_estimate
        assert r.verdict == verdict_of(r.epsilon_lower, r.epsilon_claimed)
        assert (r.verdict == "violation") == (r.epsilon_lower > 1.0)


def test_gdp_method_keeps_certified_bound_and_names_the_estimate():
    kw = dict(epsilon=1.0, delta=1e-5, trials=4_000, seed=11, statistic="auto-real")
    t = audit_mechanism(laplace, 0.0, 1.0, **kw)
    g = audit_mechanism(laplace, 0.0, 1.0, method="gdp", **kw)
    assert g.epsilon_lower == t.epsilon_lower and g.violation == t.violation
    assert g.gdp_estimate == t.gdp_estimate == t.details["gdp"]["epsilon"] > 1.0
    assert g.details["requested_method"] == "gdp" and "gdp_estimate" in g.method
    d = g.to_dict()
    assert d["gdp_estimate"] == g.gdp_estimate and GDP_LABEL in d["gdp_estimate_label"]
    assert d["epsilon_lower"] == t.epsilon_lower and d["verdict"] in VERDICTS


def _gdp_lines(text):
    return [line for line in text.splitlines() if "GDP" in line and any(c.isdigit() for c in line)]


def test_every_printed_form_labels_the_estimate(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from dpaudit.report import write_report

    r = audit_mechanism(laplace, 0.0, 1.0, statistic="auto-real", epsilon=1.0, delta=1e-5, trials=3_000, seed=1, method="gdp")
    # summary
    lines = _gdp_lines(r.summary())
    assert lines and all(GDP_LABEL in line and "not a bound" in line for line in lines)
    # JSON
    d = json.loads(json.dumps(r.to_dict()))
    assert GDP_LABEL in d["gdp_estimate_label"] and d["details"]["gdp"]["label"] == GDP_LABEL
    # HTML and Markdown reports
    for name in ("r.html", "r.md"):
        text = write_report(tmp_path / name, audit=r).read_text()
        assert f"GDP estimate (NOT a bound: {GDP_LABEL}" in text
        assert text.count("GDP estimate") == text.count(f"GDP estimate (NOT a bound: {GDP_LABEL}")
    # the pytest helper's failure message (a broken mechanism: the GDP line is labelled too)
    from dpaudit.testing import assert_audit_consistent

    def broken(x, rng, size):
        return x + rng.laplace(0.0, 0.25, size)

    with pytest.raises(AssertionError) as info:
        assert_audit_consistent(broken, 0.0, 1.0, statistic="auto-real", epsilon=1.0, delta=1e-5, trials=4_000, seed=3)
    msg = str(info.value)
    assert "verdict:" in msg and "violation" in msg
    assert all(GDP_LABEL in line for line in _gdp_lines(msg))


def _laplace_result(method="gdp"):
    """A correct epsilon = 1 Laplace audit whose GDP estimate exceeds the claim (old code: violation)."""
    r = audit_mechanism(laplace, 0.0, 1.0, statistic="auto-real", epsilon=1.0, delta=1e-5, trials=3_000, seed=2, method=method)
    assert r.gdp_estimate > 1.0 >= r.epsilon_lower
    r.details.update({"optimizer": "laplace", "claim": {"description": "Laplace(1), 1-DP"},
                      "canary": "x = 0 vs x' = 1"})
    return r


def test_cli_gdp_estimate_never_sets_the_exit_code_and_is_labelled(monkeypatch, capsys):
    import dpaudit.audit.optimizer as opt_mod
    from dpaudit.cli import main

    monkeypatch.setattr(opt_mod, "audit_optimizer", lambda *a, **k: _laplace_result())
    assert main(["audit", "dp-gd", "--method", "gdp", "--trials", "300"]) == 0
    out = capsys.readouterr().out
    assert all(GDP_LABEL in line for line in _gdp_lines(out)) and _gdp_lines(out)
    assert main(["audit", "dp-gd", "--method", "gdp", "--trials", "300", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["violation"] is False and d["verdict"] != "violation" and GDP_LABEL in d["gdp_estimate_label"]


def test_optimizer_gdp_method_keeps_the_certified_bound():
    kw = dict(trials=2_000, seed=4, steps=10, noise_multiplier=2.0)
    t = audit_optimizer("dp-gd", **kw)
    g = audit_optimizer("dp-gd", method="gdp", **kw)
    assert g.epsilon_lower == t.epsilon_lower and g.violation == t.violation
    assert g.gdp_estimate == t.gdp_estimate and g.gdp_estimate > g.epsilon_lower


# ---------------------------------------------------------------------------------------------
# three-way verdict
# ---------------------------------------------------------------------------------------------
def test_verdict_is_three_way_and_everywhere(tmp_path):
    assert verdict_of(2.0, 1.0) == "violation"
    assert verdict_of(0.5, 1.0) == "consistent"
    assert verdict_of(0.0, 1.0) == "inconclusive"
    assert verdict_of(0.0, 0.0) == "inconclusive"
    assert verdict_of(3.0, math.inf) == "consistent"
    null = audit_mechanism(identical, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=2_000, seed=0)
    assert null.epsilon_lower == 0.0 and null.verdict == "inconclusive" and not null.violation
    s = null.summary()
    assert "inconclusive" in s and "consistent" not in s and "advisory" in s
    assert null.to_dict()["verdict"] == "inconclusive"
    pos = audit_mechanism(laplace, 0.0, 1.0, statistic="auto-real", epsilon=1.0, trials=4_000, seed=0)
    assert pos.verdict == "consistent" and "consistent" in pos.summary()
    bad = audit_mechanism(laplace, 0.0, 3.0, statistic="auto-real", epsilon=1.0, trials=4_000, seed=0)
    assert bad.verdict == "violation" and bad.violation and "VIOLATION" in bad.summary()
    # the report: a powerless audit is not shown as green "consistent"
    pytest.importorskip("matplotlib")
    from dpaudit.report import write_report

    html = write_report(tmp_path / "n.html", audit=null).read_text()
    assert "Inconclusive" in html and 'class="ok"' not in html and "Consistent" not in html
    assert "advisory" in html
    legacy = dict(null.to_dict())
    legacy.pop("verdict")
    assert "Inconclusive" in write_report(tmp_path / "l.html", audit=legacy).read_text()


def test_legacy_gdp_result_dict_is_never_a_verdict(tmp_path):
    """A result written by the old code (method "gdp ...", epsilon_lower = the estimate) is shown as
    an estimate in a report, never as a certified bound or a violation."""
    pytest.importorskip("matplotlib")
    from dpaudit.report import write_report

    d = audit_mechanism(laplace, 0.0, 1.0, statistic="auto-real", epsilon=1.0, delta=1e-5, trials=2_000, seed=2).to_dict()
    d.update({"method": "gdp (estimate assuming mu-GDP)", "epsilon_lower": 4.0, "violation": True})
    d.pop("verdict")
    text = write_report(tmp_path / "g.md", audit=d).read_text()
    assert "VIOLATION" not in text and f"GDP number ({GDP_LABEL}; NOT a bound)" in text


def test_pytest_helper_reports_inconclusive_only_when_asked():
    from dpaudit.testing import assert_audit_consistent

    r = assert_audit_consistent(identical, 0.0, 1.0, epsilon=1.0, trials=2_000, seed=1)
    assert r.verdict == "inconclusive"
    with pytest.raises(AssertionError, match="inconclusive") as info:
        assert_audit_consistent(identical, 0.0, 1.0, epsilon=1.0, trials=2_000, seed=1, require_power=True)
    assert "advisory" in str(info.value)
    ok = assert_audit_consistent(laplace, 0.0, 1.0, statistic="auto-real", epsilon=1.0, trials=4_000, seed=1, require_power=True)
    assert ok.verdict == "consistent"


# ---------------------------------------------------------------------------------------------
# advice: sound, and useful
# ---------------------------------------------------------------------------------------------
def test_advice_promises_nothing_on_null_data():
    """Identical output laws: a trial suggestion is made in at most ~beta of the audits (the
    significance gate), and epsilon_lower is untouched by the advice."""
    R = 120
    suggested = 0
    for s in range(R):
        r = audit_mechanism(identical, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=2_000, seed=9_000 + s)
        a = r.details["advice"]
        suggested += a["trials_for_positive"] is not None
        assert a["test"]["significant"] == (a["test"]["z"] >= a["test"]["z_needed"])
        if not a["test"]["significant"]:
            assert a["trials_for_positive"] is None and "trials_at_least" in a
            assert any("no significant signal" in line for line in advice_lines(a, 1.0))
    assert suggested <= _limit(R), suggested


def test_advice_on_weak_signal_is_followed_by_a_positive_bound():
    """A weak Gaussian shift: the 2,000-trial audit certifies nothing; running the suggested number
    of trials certifies a positive bound in most repetitions (it aims at ~90%)."""
    sampler = gaussian_shift(0.12)
    r = audit_mechanism(sampler, 0.0, 1.0, statistic="auto-real", epsilon=1.0, delta=1e-5, trials=4_000, seed=21)
    assert r.verdict == "inconclusive"
    n = r.details["advice"]["trials_for_positive"]
    assert n is not None and 4_000 < n < 2_000_000
    assert any("trials per input would likely certify a positive bound" in line for line in r.summary().splitlines())
    hits = sum(audit_mechanism(sampler, 0.0, 1.0, statistic="auto-real", epsilon=1.0, delta=1e-5, trials=n, seed=300 + s).epsilon_lower > 0
               for s in range(6))
    assert hits >= 4, (n, hits)


def _bound(p0, p1, n, level, delta):
    k0 = math.ceil(p0 * n + POWER_Z * math.sqrt(n * p0 * (1 - p0)))
    k1 = math.ceil(p1 * n + POWER_Z * math.sqrt(n * p1 * (1 - p1)))
    return epsilon_lower_from_rates(cp_upper(min(k0, n), n, level), cp_upper(min(k1, n), n, level), delta)


@settings(max_examples=60, deadline=None)
@given(p0=st.floats(1e-6, 0.999), p1=st.floats(1e-6, 0.999), share=st.floats(0.1, 1.0))
def test_trials_needed_is_what_it_says(p0, p1, share):
    delta = 1e-5
    stages = [(share, BETA / 2)]
    n = trials_needed(p0, p1, delta=delta, stages=stages)
    if p0 + p1 >= 1.0 - delta:  # no margin at all: never a suggestion
        assert n is None
    if n is None:
        return
    assert n <= MAX_ADVICE_TRIALS
    m = max(int(math.floor(share * n)), 1)
    assert _bound(p0, p1, m, BETA / 2, delta) > 0.0
    # twice the trials also works (the answer is from a suffix of the grid, not a lucky point)
    m2 = max(int(math.floor(share * 2 * n)), 1)
    if 2 * n <= MAX_ADVICE_TRIALS:
        assert _bound(p0, p1, m2, BETA / 2, delta) > 0.0


def test_trials_needed_reference_values():
    # rates 0.3 / 0.3 at delta 1e-5: positive from a few hundred trials; 0.49 / 0.49 needs ~10^5
    a = trials_needed(0.3, 0.3, delta=1e-5, stages=[(1.0, BETA / 2)])
    b = trials_needed(0.49, 0.49, delta=1e-5, stages=[(1.0, BETA / 2)])
    assert 50 < a < 2_000 and 10**4 < b < 10**6 and a < b
    assert trials_needed(0.5, 0.5, delta=1e-5, stages=[(1.0, BETA / 2)]) is None


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.01, 30.0), logn=st.floats(1.0, 8.0), delta=st.sampled_from([0.0, 1e-8, 1e-5, 1e-2]),
       level=st.sampled_from([0.025, 0.005, 0.0005]))
def test_ceiling_never_exceeds_the_claim(eps, logn, delta, level):
    """Against a mechanism exactly at the claim, no threshold audit's (expected) bound exceeds it."""
    c = threshold_ceiling(eps, delta, int(10**logn), level)
    assert 0.0 <= c <= eps * (1 + 1e-12) + 1e-12


def test_ceiling_reference_values():
    # huge claim: the ceiling is the zero-error bound log((1 - delta - p)/p), p = 1 - level^(1/n) (closed form)
    n, level, delta = 10_000, 0.025, 1e-5
    p = -math.expm1(math.log(level) / n)
    assert threshold_ceiling(60.0, delta, n, level) == pytest.approx(math.log((1 - delta - p) / p), rel=1e-9)
    # the ceiling approaches the claim with many trials (pure 1-DP: about 0.9 at 10^4)
    assert 0.85 < threshold_ceiling(1.0, 0.0, 10_000, level) < 1.0
    assert threshold_ceiling(1.0, 0.0, 10**7, level) > 0.99
    assert threshold_ceiling(math.inf, delta, n, level) == math.inf


def test_one_run_advice():
    a = one_run_advice(m=200, r=20, v=11, epsilon=2.0, delta=1e-5, confidence=0.95)
    assert a["ceiling"] == one_run_epsilon_lower(m=200, r=20, v=20, delta=1e-5, confidence=0.95)
    pos = a["canaries_for_positive"]
    assert pos is None or pos > 200
    lines = advice_lines(a, 2.0)
    assert lines and all(line.startswith("advisory:") for line in lines)
    # precision 0.9 is a strong signal: a positive bound at some canary count
    b = one_run_advice(m=100, r=10, v=9, epsilon=2.0, delta=1e-5, confidence=0.95)
    assert b["canaries_for_positive"] is not None


def test_inconclusive_one_run_audit_carries_advice():
    r = audit_mechanism(identical, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=400, seed=2, method="one-run")
    assert r.verdict == "inconclusive" and "advice" in r.details
    assert any(line.strip().startswith("advisory:") for line in r.summary().splitlines())


def test_advice_never_changes_the_bound():
    """The advice is computed from the same samples but the bound and verdict are those of the test."""
    r = audit_mechanism(laplace, 0.0, 1.0, statistic="auto-real", epsilon=1.0, trials=3_000, seed=8)
    tt = r.details["threshold_test"]
    assert r.epsilon_lower == pytest.approx(max(0.0, tt["value"]), rel=1e-14, abs=0.0) and "advice" in r.details
    assert r.epsilon_lower <= tt["value"]
    d = AuditResult(**{k: getattr(r, k) for k in ("epsilon_lower", "epsilon_claimed", "delta", "confidence",
                                                  "violation", "method", "trials")}, details={})
    assert d.verdict == r.verdict and d.summary().splitlines()[:4] == r.summary().splitlines()[:4]


# ---------------------------------------------------------------------------------------------
# pure DP through audit_optimizer (delta = 0 is never silently replaced)
# ---------------------------------------------------------------------------------------------
def test_audit_optimizer_delta_zero_refused_without_a_pure_claim():
    with pytest.raises(ValueError, match="delta"):
        audit_optimizer("dp-gd", trials=200, delta=0.0, steps=3)
    with pytest.raises(ValueError, match="pure-DP"):
        audit_optimizer("projection", trials=200, delta=0)


def test_audit_optimizer_delta_zero_with_a_pure_claim_audits_pure_dp():
    from dpaudit.accounting.claim import PrivacyClaim
    from dpaudit.optimizers.dp_gd import DPGD

    class PureClaimGD(DPGD):
        def claim(self, n):
            return PrivacyClaim.approx_dp(50.0, 0.0, neighbouring=self.neighbouring, description="claims 50-DP")

    r = audit_optimizer(PureClaimGD(steps=3), trials=400, seed=0, delta=0.0)
    assert r.delta == 0.0 and r.epsilon_claimed == 50.0 and r.details["claim"]["pure_dp"] is True


def test_why_names_what_certified_the_bound():
    """A fixed statistic (optimizer, training, a user's callable) is named as such, never "the best attack (the
    attack)"; a contest's winner by its family and what it reads."""
    from dpaudit.audit.protocol.verdict import explain

    fixed = explain("consistent", 0.5, 1.0, {"statistic": "final parameter along the canary coordinate e_0"})
    assert fixed["why"] == ["the statistic fixed in advance (final parameter along the canary coordinate e_0) "
                            "certified some privacy loss, and not more than claimed"]
    won = explain("violation", 2.0, 1.0, {"attack": {"family": "value", "description": "output value (scalar)"}})
    assert won["why"][0].startswith("the attack value (output value (scalar)) tells the two inputs apart")
    assert not any("(the attack)" in w for w in fixed["why"] + won["why"])
