"""audit_one_run and audit_training (issue 18): the public one-run route with its ceiling and repeats, the
many-runs route, claims (number, pair, claim object, several deltas), seeds, workers and progress."""

import math
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit
from dpaudit.accounting.claim import PrivacyClaim
from dpaudit.accounting.zcdp import ZCDPAccountant
from dpaudit.audit.protocol.relation import NeighbouringRelationWarning
from dpaudit.audit.stats.one_run import max_guesses, one_run_ceiling
from dpaudit.audit.training import audit_one_run, audit_training, resolve_claim
from dpaudit.core.execution import Execution
from dpaudit.mechanisms import Gaussian


def rr_run(eps):
    """Randomized response of each canary's inclusion bit: exactly eps-DP with respect to every canary."""
    p = math.exp(eps) / (1.0 + math.exp(eps))

    def run(mask, rng):
        keep = rng.random(mask.size) < p
        return np.where(keep, mask, ~mask).astype(float)

    return run


def gaussian_run(mask, rng):
    return mask + rng.normal(0.0, 1.0, mask.size)


def null_run(mask, rng):
    return rng.normal(0.0, 1.0, mask.size)  # the training ignores the canaries


# --------------------------------------------------------------------------- the ceiling
def _mp_snj_ceiling(r, beta):
    # P[Bin(r, q) >= r] = q^r <= beta  <=>  q <= beta^(1/r): epsilon = logit(beta^(1/r))
    q = mpmath.power(mpmath.mpf(beta), mpmath.mpf(1) / r)
    return max(0.0, float(mpmath.log(q / (1 - q))))


@pytest.mark.parametrize("m", [10, 100, 1000, 10_000])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_ceiling_is_the_closed_form_at_delta_zero(m, confidence):
    """delta = 0: SNJ with v = r guesses right is q^r <= beta, the largest r decides (mpmath closed form)."""
    r = max_guesses(m)
    want = _mp_snj_ceiling(r, 1.0 - confidence)
    got = one_run_ceiling(m, r_max=r, confidence=confidence, tests=("snj",))
    assert got <= want + 1e-12  # a ceiling of a lower bound: rounded down like the bound
    assert got == pytest.approx(want, abs=1e-6)


@settings(max_examples=12, deadline=None)
@given(m=st.integers(2, 3000), r=st.integers(1, 3000), delta=st.sampled_from([0.0, 1e-8, 1e-5, 1e-3]))
def test_no_observation_exceeds_the_ceiling(m, r, delta):
    """Whatever the counts, the certified bound of either test never exceeds the ceiling."""
    r = min(r, m)
    c = one_run_ceiling(m, r_max=r, delta=delta)
    for v in {0, r // 2, max(0, r - 1), r}:
        assert dpaudit.audit.one_run_epsilon_lower(m=m, r=r, v=v, delta=delta) <= c
        assert dpaudit.audit.one_run_fdp_epsilon_lower(m=m, r=r, v=v, delta=delta) <= c


def test_max_guesses():
    assert max_guesses(1000) == 2 * math.floor((1 - 3 / math.sqrt(1000)) * 500)
    assert max_guesses(1000, guesses=40) == 80
    assert max_guesses(1000, guesses=(10, 0)) == 10
    assert max_guesses(4) == 1  # the cap leaves no guess on either side: one guess is still made


def test_result_states_the_ceiling_and_a_claim_above_it():
    res = audit_one_run(gaussian_run, canaries=200, claim=100.0, seed=0)
    c = res.details["ceiling"]
    assert res.ceiling == c["epsilon"] == pytest.approx(one_run_ceiling(200, r_max=max_guesses(200),
                                                                        confidence=res.details["one_run_bound"]["level"]))
    assert c["claim_at_or_above"] and 0 < res.epsilon_lower <= res.ceiling
    assert "cannot show it violated" in res.summary()
    assert res.to_dict()["details"]["ceiling"]["canaries"] == 200


# --------------------------------------------------------------------------- one-run route
def test_one_run_catches_a_leak_and_passes_a_true_claim():
    bad = audit_training(rr_run(3.0), canaries=1000, claim=1.0, seed=1)
    assert bad.verdict == "violation" and bad.epsilon_lower > 1.0
    ok = audit_training(rr_run(1.0), canaries=1000, claim=1.0, seed=1)
    assert not ok.violation and ok.epsilon_lower <= 1.0
    assert ok.trials == 2 and ok.details["trainings"] == 2


def test_one_run_null_training_certifies_nothing_and_advises():
    res = audit_one_run(null_run, canaries=300, claim=(1.0, 1e-5), seed=2)
    assert res.epsilon_lower == 0.0 and res.verdict == "inconclusive"
    assert "advice" in res.details


def test_repeats_headline_is_audit_zero_and_spread_recorded():
    one = audit_one_run(gaussian_run, canaries=400, claim=(3.0, 1e-5), seed=5)
    many = audit_one_run(gaussian_run, canaries=400, claim=(3.0, 1e-5), seed=5, repeats=6)
    rep = many.details["repeats"]
    assert rep["count"] == 6 and len(rep["epsilon_lower"]) == 6
    assert many.epsilon_lower == one.epsilon_lower == rep["epsilon_lower"][0]  # audit 0: same streams
    assert rep["min"] <= rep["median"] <= rep["max"]
    assert len(set(rep["epsilon_lower"])) > 1  # independent audits differ


def test_same_seed_same_result_and_workers_do_not_matter():
    a = audit_one_run(gaussian_run, canaries=300, claim=2.0, seed=11, repeats=2)
    b = audit_one_run(gaussian_run, canaries=300, claim=2.0, seed=11, repeats=2)
    c = audit_one_run(gaussian_run, canaries=300, claim=2.0, seed=11, repeats=2, execution=Execution(workers=2))
    assert a.details["repeats"]["epsilon_lower"] == b.details["repeats"]["epsilon_lower"] \
        == c.details["repeats"]["epsilon_lower"]
    d = audit_one_run(gaussian_run, canaries=300, claim=2.0, seed=None)
    assert d.details["seed"] is not None  # fresh entropy is recorded ...
    e = audit_one_run(gaussian_run, canaries=300, claim=2.0, seed=np.random.SeedSequence(d.details["seed"]))
    assert e.epsilon_lower == d.epsilon_lower  # ... and reproduces the run


def test_fixed_guesses_one_training_and_progress():
    calls = []
    res = audit_one_run(gaussian_run, canaries=200, claim=1.0, seed=0, guesses=20,
                        execution=Execution(progress=lambda d, t: calls.append((d, t))))
    assert res.trials == 1 and res.details["one_run"]["r"] == 40
    assert calls[-1] == (1, 1)
    calls.clear()
    audit_one_run(gaussian_run, canaries=200, claim=1.0, seed=0, repeats=3,
                  execution=Execution(progress=lambda d, t: calls.append((d, t))))
    assert calls[-1] == (6, 6) and len(calls) == 6


def test_the_run_gets_a_bool_mask_and_a_generator():
    seen = []

    def run(mask, rng):
        seen.append((mask.dtype, mask.shape, type(rng)))
        return rng.normal(size=mask.size)

    audit_one_run(run, canaries=50, seed=0)
    assert seen == [(np.dtype(bool), (50,), np.random.Generator)] * 2


@pytest.mark.parametrize("run, match", [
    (lambda mask, rng: np.zeros(mask.size - 1), "returned 49 scores for 50 canaries"),
    (lambda mask, rng: np.full(mask.size, np.nan), "NaN"),
])
def test_bad_scores_are_named(run, match):
    with pytest.raises(ValueError, match=match):
        audit_one_run(run, canaries=50, seed=0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(canaries=1), "canaries"), (dict(repeats=0), "repeats"), (dict(confidence=1.5), "confidence"),
    (dict(bound="x"), "bound"), (dict(claim=-1.0), "claim"), (dict(claim=(1.0, 2.0)), "claim"),
    (dict(claim="one"), "claim"), (dict(claim=(1.0, 1e-5), delta=1e-6), "delta"),
    (dict(claim=1.0, delta=[1e-5, 1e-6]), "delta"), (dict(delta=1.5), "delta"),
    (dict(calibration_canaries=1), "calibration_canaries"), (dict(progress=3), "progress"),
])
def test_one_run_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        audit_one_run(gaussian_run, **{"canaries": 50, **kwargs})


def test_training_mode_options_are_refused_where_they_do_not_apply():
    with pytest.raises(ValueError, match="trials"):
        audit_training(gaussian_run, trials=10)
    with pytest.raises(ValueError, match="canaries"):
        audit_training(lambda inc, rng: 0.0, mode="many_runs", canaries=10)
    with pytest.raises(ValueError, match="repeats"):
        audit_training(lambda inc, rng: 0.0, mode="many_runs", repeats=3)
    with pytest.raises(ValueError, match="mode"):
        audit_training(gaussian_run, mode="two_runs")


# --------------------------------------------------------------------------- claims
def _zcdp_claim(rho):
    acc = ZCDPAccountant().compose(Gaussian(sigma=1.0 / math.sqrt(2.0 * rho)))
    return PrivacyClaim.from_accountant(acc, neighbouring="add_remove", description=f"{rho}-zCDP")


def test_resolve_claim_forms():
    assert resolve_claim(1.0)["deltas"] == [0.0]
    assert resolve_claim((1.0, 1e-6))["deltas"] == [1e-6]
    assert resolve_claim(None)["epsilons"] == [math.inf]
    c = _zcdp_claim(0.5)
    r = resolve_claim(c, [1e-5, 1e-7])
    assert r["epsilons"] == [c.epsilon(1e-5), c.epsilon(1e-7)] and r["neighbouring"] == "add_remove"
    assert resolve_claim(c)["deltas"] == [1e-5]


def test_zcdp_claim_checked_at_several_deltas_with_bonferroni():
    claim = _zcdp_claim(0.05)  # far below the truth of the leaky training (a sure violation at every delta)
    deltas = [1e-4, 1e-5, 1e-6]
    res = audit_training(rr_run(4.0), canaries=1000, claim=claim, delta=deltas, seed=3)
    checks = res.details["deltas"]
    assert [c["delta"] for c in checks] == deltas
    assert all(c["level"] == pytest.approx(1 - 0.05 / 3) for c in checks)
    assert all(c["epsilon_claimed"] == pytest.approx(claim.epsilon(c["delta"])) for c in checks)
    assert res.violation and res.confidence == 0.95
    # each delta's bound equals a one-delta audit at the Bonferroni level with the same counts
    one = audit_training(rr_run(4.0), canaries=1000, claim=claim, delta=deltas[0], seed=3, confidence=1 - 0.05 / 3)
    assert checks[0]["epsilon_lower"] == one.epsilon_lower
    run = rr_run(4.0)
    many = audit_training(lambda inc, rng: float(run(np.array([inc]), rng)[0]), mode="many_runs", trials=300, claim=claim, delta=deltas, seed=3)
    assert len(many.details["deltas"]) == 3 and many.violation


def test_replace_one_claim_warns():
    claim = PrivacyClaim.approx_dp(1.0, 1e-5, neighbouring="replace_one", description="bounded DP")
    with pytest.warns(NeighbouringRelationWarning):
        res = audit_one_run(gaussian_run, canaries=100, claim=claim, seed=0)
    assert res.details["relation"]["claim"] == "replace_one"


# --------------------------------------------------------------------------- many runs
def gaussian_train(include, rng):
    return float(include) + rng.normal()


def test_many_runs_certifies_with_the_threshold_machinery():
    res = audit_training(gaussian_train, mode="many_runs", trials=3000, claim=(0.5, 1e-5), seed=4)
    assert res.violation and res.method.startswith("threshold test")
    assert res.details["n_selection"] == [900, 900] and res.details["n_evaluation"] == [2100, 2100]
    assert res.epsilon_lower < 4.377  # the exact epsilon of the Gaussian mechanism mu = 1 at delta 1e-5 (PLD)
    # the same scores through audit_scores give the same bound (one threshold machinery)
    ok = audit_training(gaussian_train, mode="many_runs", trials=3000, claim=(10.0, 1e-5), seed=4)
    assert not ok.violation and ok.epsilon_lower == res.epsilon_lower


def test_many_runs_progress_seeds_and_workers():
    calls = []
    a = audit_training(gaussian_train, mode="many_runs", trials=100, claim=1.0, seed=9,
                       execution=Execution(progress=lambda d, t: calls.append((d, t))))
    assert calls[-1] == (200, 200)
    b = audit_training(gaussian_train, mode="many_runs", trials=100, claim=1.0, seed=9, execution=Execution(workers=2))
    assert a.epsilon_lower == b.epsilon_lower and a.details["roc"] == b.details["roc"]


def test_many_runs_one_score_per_training():
    with pytest.raises(ValueError, match="one score"):
        audit_training(lambda inc, rng: np.zeros(2), mode="many_runs", trials=10, seed=0)


# --------------------------------------------------------------------------- soundness (coverage)
def test_one_run_coverage_on_randomized_response_at_the_claim():
    """300 independent audits of an exactly 1-DP training: the certified bound exceeds 1 in at most
    beta = 5% of them (up to Binomial noise: the 99.9% quantile of Bin(300, 0.05) is 27)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = audit_one_run(rr_run(1.0), canaries=500, claim=1.0, seed=3, repeats=300)
    bounds = np.array(res.details["repeats"]["epsilon_lower"])
    assert np.sum(bounds > 1.0) <= 27
    assert np.mean(bounds > 0.0) > 0.9  # and it has power


def test_the_result_is_logged(caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="dpaudit"):
        audit_one_run(gaussian_run, canaries=100, claim=1.0, seed=0)
        audit_training(gaussian_train, mode="many_runs", trials=50, claim=1.0, seed=0)
    assert "audit_one_run: epsilon >=" in caplog.text and "audit_training (many runs)" in caplog.text


def test_every_one_run_route_states_its_ceiling():
    """audit_optimizer(method="one-run") and audit_mechanism(method="one-run") share the protocol and its ceiling."""
    opt = dpaudit.audit_optimizer("dp-sgd", method="one-run", canaries=200, seed=0, steps=5)
    assert opt.ceiling == pytest.approx(one_run_ceiling(200, r_max=max_guesses(200), delta=opt.delta,
                                                        confidence=opt.details["one_run_bound"]["level"]))
    assert opt.epsilon_lower <= opt.ceiling
    mech = dpaudit.audit_mechanism(Gaussian(sigma=1.0).sample, 0.0, 1.0, epsilon=1.0, delta=1e-5, method="one-run",
                                   trials=400, statistic=lambda b: np.asarray(b, dtype=float).ravel(), seed=0)
    m = mech.details["one_run"]["m"]
    assert mech.ceiling == pytest.approx(one_run_ceiling(m, r_max=max_guesses(m), delta=1e-5,
                                                         confidence=mech.details["one_run_bound"]["level"]))


def test_a_bound_at_the_ceiling_says_so():
    """A perfect attack (the score is the coin) certifies the ceiling itself, and the summary says more canaries
    may certify more."""
    res = audit_one_run(lambda mask, rng: mask.astype(float), canaries=100, claim=(3.0, 1e-5), seed=0)
    assert res.details["ceiling"]["at_ceiling"] and res.epsilon_lower <= res.ceiling
    assert "the bound reached it" in res.summary()


def test_one_run_summary_counts_trainings_not_runs_per_input():
    # a one-run result's trials are trainings of m canaries (audit + calibration), not runs per neighbouring input
    from dpaudit.audit.protocol.result import AuditResult

    r = AuditResult(epsilon_lower=0.5, epsilon_claimed=1.0, delta=0.0, confidence=0.95, violation=False,
                    method="one-run (f-DP)", trials=2, details={"one_run": {"m": 1000}})
    assert "trials            : 2 training runs with 1,000 canaries each" in r.summary()
    r1 = AuditResult(epsilon_lower=0.5, epsilon_claimed=1.0, delta=0.0, confidence=0.95, violation=False,
                     method="one-run", trials=1, details={"m": 200})
    assert "1 training run with 200 canaries each" in r1.summary()
    t = AuditResult(epsilon_lower=0.5, epsilon_claimed=1.0, delta=0.0, confidence=0.95, violation=False,
                    method="threshold", trials=5000, details={})
    assert "5000 per neighbouring input" in t.summary()
