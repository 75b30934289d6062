"""DP-AGD's privacy arithmetic in one home (issue 16 item) and its protocol variants (issue 12).

Lee & Kifer 2018 (KDD), Algorithm 2; Bun & Steinke 2016 for the zCDP tools.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaudit.bounds.dp_agd as bdp
from dpaudit.bounds.dp_agd import (
    ZCDPFilter,
    ZCDPFilterBank,
    dp_agd_budget,
    gradavg,
    gradavg_charge,
    gradient_noise_sigma,
)
from dpaudit.optimizers import make_optimizer
from dpaudit.optimizers.data import make_dense
from dpaudit.optimizers.dp_agd import DPAGD

rhos = st.floats(1e-300, 1e300, allow_nan=False, allow_infinity=False)


# ------------------------------------------------------------------ batched bounds functions
@given(st.lists(rhos, min_size=1, max_size=8), st.floats(1e-6, 1e6))
def test_gradient_noise_sigma_batched_equals_scalar(rs, clip):
    batched = gradient_noise_sigma(np.array(rs), clip)
    assert batched.shape == (len(rs),)
    for r, s in zip(rs, batched):
        assert s == gradient_noise_sigma(r, clip)
        if math.isfinite(s):   # an upper bound on the exact std clip / sqrt(2 rho)
            assert Fraction(s) ** 2 * 2 * Fraction(r) >= Fraction(clip) ** 2


@given(st.lists(st.tuples(st.floats(1e-200, 1e200), st.floats(1e-12, 10.0)), min_size=1, max_size=8))
def test_gradavg_charge_batched_equals_scalar_and_covers_the_increase(pairs):
    old = np.array([a for a, _ in pairs])
    new = old * (1.0 + np.array([g for _, g in pairs]))
    keep = new > old
    old, new = old[keep], new[keep]
    if not old.size:
        return
    batched = gradavg_charge(old, new)
    for o, n, c in zip(old, new, batched):
        assert c == gradavg_charge(float(o), float(n))
        assert Fraction(c) >= Fraction(float(n)) - Fraction(float(o))


def test_batched_arguments_validated_with_their_names():
    with pytest.raises(ValueError, match="rho_ng"):
        gradient_noise_sigma(np.array([1.0, 0.0]), 1.0)
    with pytest.raises(ValueError, match="rho_new"):
        gradavg_charge(np.array([1.0, 2.0]), np.array([2.0, 2.0]))
    with pytest.raises(ValueError, match="rho_new"):
        gradavg_charge(np.array([1.0, 2.0]), np.array([2.0]))
    with pytest.raises(ValueError, match="rho_old"):
        gradavg(np.array([1.0, 2.0]), np.array([2.0, 3.0]), np.zeros(3), np.zeros(3), 1.0)


def test_gradavg_batched_has_the_variance_of_one_fresh_measurement():
    # Var(S) = C^2 / (2 rho_new) per coordinate (Lee & Kifer 2018, Sec. 4), rows with different budgets
    rng = np.random.default_rng(0)
    dim, clip = 200_000, 2.0
    rho_old = np.array([0.01, 0.5, 3.0])
    rho_new = rho_old * np.array([1.1, 2.0, 1.0001])
    g = np.tile(np.linspace(-1, 1, dim), (3, 1))
    g_tilde = g + rng.standard_normal(g.shape) * (clip / np.sqrt(2 * rho_old))[:, None]
    est, charge = gradavg(rho_old, rho_new, g, g_tilde, clip, rng=rng)
    np.testing.assert_array_equal(charge, gradavg_charge(rho_old, rho_new))
    var = ((est - g) ** 2).mean(axis=1)
    target = clip**2 / (2 * rho_new)
    # chi-square with 2e5 degrees of freedom: relative sd sqrt(2 / dim) = 0.0032; 5 sd
    assert np.all(np.abs(var / target - 1) < 5 * math.sqrt(2 / dim))
    assert np.all(np.abs((est - g).mean(axis=1)) < 5 * np.sqrt(target / dim))


def test_gradavg_tiny_increase_stays_finite():
    # the std of g2 itself, C / sqrt(2 (rho_new - rho_old)), overflows; the weighted form does not
    est, charge = gradavg(1e-300, math.nextafter(1e-300, 1.0), np.ones(4), np.ones(4), 1.0, seed=1)
    assert np.all(np.isfinite(est)) and charge > 0


# ------------------------------------------------------------------ one acceptance rule
@settings(max_examples=60)
@given(st.floats(1e-12, 1e3), st.lists(st.lists(st.floats(0.0, 1e3), max_size=12), min_size=1, max_size=4))
def test_filter_bank_accepts_exactly_what_the_filter_accepts(total, seqs):
    bank = ZCDPFilterBank(total, len(seqs))
    singles = [ZCDPFilter(total) for _ in seqs]
    for step in range(max(map(len, seqs))):
        idx = [k for k, s in enumerate(seqs) if step < len(s)]
        charges = [seqs[k][step] for k in idx]
        got = bank.request(idx, charges)
        want = [singles[k].request(c) for k, c in zip(idx, charges)]
        assert got.tolist() == want
    assert bank.spent.tolist() == [f.spent for f in singles]
    assert bank.remaining.tolist() == [f.remaining for f in singles]


def _noise_off_charges(**hp):
    X, y = make_dense(200, 3, seed=3)
    opt = make_optimizer("dp-agd", epsilon=0.2, splits=40, noise=False, record_charges=True, **hp)
    return X, y, opt


def test_dp_agd_run_uses_the_exact_filter_rule_at_the_budget_edge(monkeypatch):
    """Regression: DPAGD.run used its own float rule (sum rounded up by one ulp per charge), which
    refuses a charge that fits exactly. With the total set to the exact sum of the first J charges
    (rounded up to a float), the exact filter lets the run make exactly J charges; the old rule made J - 1.
    """
    X, y, opt = _noise_off_charges()
    full = opt.run(X, y, trials=2, seed=0).extra["charges"][0]
    assert len(full) > 12
    for J in (5, 12, len(full) - 1):
        exact = sum(Fraction(c) for c in full[:J])
        total = float(exact)
        if Fraction(total) < exact:
            total = math.nextafter(total, math.inf)
        monkeypatch.setattr(bdp, "dp_agd_budget", lambda e, d, _t=total: _t)
        run = opt.run(X, y, trials=2, seed=0)
        for t in range(2):
            assert run.extra["charges"][t] == full[:J]
            assert run.extra["spent"][t] <= total
        # the refused charge is the (J+1)-th of the unconstrained run
        assert run.extra["stop_charge"][0] == full[J]


def test_dp_agd_run_draws_noise_and_gradavg_from_the_bounds_functions(monkeypatch):
    calls = {"sigma": 0, "gradavg": 0}
    real_sigma, real_avg = bdp.gradient_noise_sigma, bdp.gradavg

    def sigma(*a, **k):
        calls["sigma"] += 1
        return real_sigma(*a, **k)

    def avg(*a, **k):
        calls["gradavg"] += 1
        return real_avg(*a, **k)

    monkeypatch.setattr(bdp, "gradient_noise_sigma", sigma)
    monkeypatch.setattr(bdp, "gradavg", avg)
    X, y = make_dense(200, 3, seed=9)
    run = make_optimizer("dp-agd", epsilon=0.1, splits=5).run(X, y, trials=20, seed=1)
    assert calls["sigma"] >= 1
    assert run.extra["gradavg"].sum() > 0 and calls["gradavg"] >= 1


# ------------------------------------------------------------------ budget split (issue 12)
def test_budget_split_equal_is_the_paper_text_reading_and_classical_the_code():
    eq = make_optimizer("dp-agd", epsilon=0.2, budget_split="equal").initial_budgets
    cl = make_optimizer("dp-agd", epsilon=0.2).initial_budgets
    assert eq[0] == cl[0] == (0.2 / 120) ** 2 / 2
    assert eq[1] == eq[0]
    assert cl[0] / cl[1] == pytest.approx(2 * math.log(1.25e8), rel=1e-12)   # about 37.3 at delta = 1e-8
    with pytest.raises(ValueError, match="budget_split"):
        make_optimizer("dp-agd", budget_split="paper")


@pytest.mark.parametrize("hp", [{"budget_split": "equal"}, {"budget_split": "classical"},
                                {"budget_split": "equal", "alpha_cap": 2.0},
                                {"budget_split": "equal", **DPAGD.REFERENCE_CODE}])
def test_each_private_variant_spends_within_its_claim(hp):
    X, y = make_dense(300, 3, seed=6)
    opt = make_optimizer("dp-agd", epsilon=0.2, splits=8, record_charges=True, **hp)
    run = opt.run(X, y, trials=6, seed=2)
    rho = dp_agd_budget(0.2, 1e-8)
    ex = run.extra
    for t in range(6):
        f = ZCDPFilter(rho)
        assert all(f.request(c) for c in ex["charges"][t])
        assert not f.can_afford(ex["stop_charge"][t])
    first = ex["charges"][0][0]
    assert first == opt.initial_budgets[1]
    assert run.claim.rho == pytest.approx(rho) and run.claim.epsilon(1e-8) <= 0.2
    if "alpha_cap" in hp:
        assert np.all(ex["alpha_max"] <= hp["alpha_cap"])


def test_alpha_max_uncapped_by_default_as_in_the_paper_text():
    assert DPAGD.defaults["alpha_cap"] is None


# ------------------------------------------------------------------ the authors' NoisyMax: NOT PRIVATE
def test_authors_orientation_is_refused_as_a_private_optimizer():
    opt = make_optimizer("dp-agd", epsilon=0.2, noisy_max="authors")
    c = opt.claim(100)
    assert math.isinf(c.epsilon(1e-8))
    assert "NOT PRIVATE" in c.description
    X, y = make_dense(100, 3, seed=1)
    assert math.isinf(opt.run(X, y, trials=2, seed=0).claim.epsilon(1e-5))
    with pytest.raises(ValueError, match="noisy_max"):
        make_optimizer("dp-agd", noisy_max="argmin")


def test_authors_orientation_loses_m_minus_1_times_the_charged_epsilon():
    """argmin_j (Omega_j + Exp(b)), b = C_obj / eps: on Omega = (C, 0, 0) versus its add-one neighbour
    (C, C, C) (every score moved up by at most C_obj = C), P(index 0) is e^{-2 eps}/3 versus 1/3: a loss of
    (m - 1) eps = 2 eps, twice the charge. The valid orientation argmax(-Omega + Exp) stays within eps."""
    eps, C, N = 1.0, 1.0, 400_000
    rng = np.random.default_rng(11)
    D = np.tile([C, 0.0, 0.0], (N, 1))
    D2 = np.tile([C, C, C], (N, 1))
    authors = make_optimizer("dp-agd", noisy_max="authors")
    p = (authors._select(D, rng, C / eps) == 0).mean()
    p2 = (authors._select(D2, rng, C / eps) == 0).mean()
    assert abs(p - math.exp(-2 * eps) / 3) < 5 * math.sqrt(p * (1 - p) / N)
    assert abs(p2 - 1 / 3) < 5 * math.sqrt(p2 * (1 - p2) / N)
    # lower confidence end of the loss ratio, well above the charged e^eps
    lo = (p2 - 5 * math.sqrt(p2 / N)) / (p + 5 * math.sqrt(p / N))
    assert lo > math.exp(1.5 * eps)
    valid = make_optimizer("dp-agd", noisy_max="exponential")
    q = (valid._select(D, rng, C / eps) == 0).mean()
    q2 = (valid._select(D2, rng, C / eps) == 0).mean()
    assert q2 / q < math.exp(eps) * 1.05
