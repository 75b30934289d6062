"""Relative Gaussian Mechanism (Hendrikx, Mangold, Bellet 2024): RDP, conversions, PTR, ridge constants."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.bounds.ptr import (
    gram_matrix,
    propose_test_release,
    ptr_distance,
    ptr_lower_bound_statistic,
)
from dpaudit.bounds.rgm import (
    rgm_closed_form_epsilon,
    rgm_epsilon,
    rgm_local_sensitivity_rdp,
    rgm_rdp,
    rgm_tcdp,
)
from dpaudit.bounds.ridge import (
    ridge_gradient,
    ridge_ptr_constants,
    ridge_relative_sensitivity,
    ridge_smoothness_constants,
)
from dpaudit.core.gaussian_divergence import renyi_gaussians
from dpaudit.mechanisms.relative_gaussian import RelativeGaussian

# --------------------------------------------------------------------------- Lemma 2 (Gil, Alajaji, Linder 2013 closed form = quadrature)
GAUSS_REF = [
    ((0, 1, 1, 1, 3), 1.5),
    ((0, 1.2, 0.5, 1, 2.5), 1.09639931072),
    ((0, 1, 0.5, 1.3, 4), 0.262061249794),
    ((0, 1.5, 0, 1, 1.7), 1.07985027881),
    ((0, 1.5, 0, 1, 1.8), math.inf),
]


@pytest.mark.parametrize("args,ref", GAUSS_REF)
def test_renyi_gaussians_reference(args, ref):
    m1, s1, m2, s2, a = args
    val = renyi_gaussians(a, m1, s1, m2, s2)
    if math.isinf(ref):
        assert val == math.inf
    else:
        assert val == pytest.approx(ref, rel=1e-10)


def test_renyi_gaussians_quadrature():
    import mpmath as mp

    mp.mp.dps = 30
    m1, s1, m2, s2, a = 0.3, 0.8, -0.4, 1.1, 2.2

    def integrand(x):
        p = mp.npdf(x, m1, s1)
        q = mp.npdf(x, m2, s2)
        return p**a * q ** (1 - a)

    exact = mp.log(mp.quad(integrand, [-mp.inf, 0, mp.inf])) / (a - 1)
    assert renyi_gaussians(a, m1, s1, m2, s2) == pytest.approx(float(exact), rel=1e-12)


def test_renyi_gaussians_vector_and_dim():
    mu1, mu2 = np.array([1.0, 2.0, 0.0]), np.zeros(3)
    v = renyi_gaussians(np.array([2.0, 3.0]), mu1, 1.2, mu2, 1.0, dim=3)
    # independent coordinates add up
    per = [renyi_gaussians(np.array([2.0, 3.0]), mu1[i], 1.2, 0.0, 1.0) for i in range(3)]
    assert np.allclose(v, np.sum(per, axis=0), rtol=1e-13)
    assert renyi_gaussians(2.0, 0.0, 1.0, 0.0, 1.0) == 0.0
    assert renyi_gaussians(math.inf, 0.0, 1.0, 1.0, 1.0) == math.inf
    with pytest.raises(ValueError, match="dim"):
        renyi_gaussians(2.0, mu1, 1.0, mu2, 1.0, dim=2)
    with pytest.raises(ValueError, match="s1"):
        renyi_gaussians(2.0, 0.0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        renyi_gaussians(1.0, 0.0, 1.0, 0.0, 1.0)


# --------------------------------------------------------------------------- Theorem 1 (D.11)
D11 = [
    # alpha, B, gamma, d, main, norm leakage, eps
    (2, 0.01, 1, 10, 1.02051229717e-4, 2.02045817014e-3, 2.12250939986e-3),
    (2, 0.001, 0.1, 22, 1.00200501203e-4, 4.40440991764e-5, 1.44244600379e-4),
    (3, 0.05, 0.5, 1, 1.88679245283e-2, 8.56312691252e-3, 2.74310514408e-2),
]


@pytest.mark.parametrize("alpha,B,gamma,d,main,leak,eps", D11)
def test_theorem1_reference_values(alpha, B, gamma, d, main, leak, eps):
    assert rgm_rdp(alpha, A=1.0, B=B, gamma=gamma, dim=d) == pytest.approx(eps, rel=1e-10)
    # the norm-leakage term is independent of sigma, gamma: the gamma -> inf limit isolates it
    assert rgm_rdp(alpha, A=1.0, B=B, gamma=1e12, dim=d) == pytest.approx(leak, rel=1e-9)
    assert rgm_rdp(alpha, A=1.0, B=B, gamma=gamma, dim=d) - leak == pytest.approx(main, rel=1e-8)


def test_eq6_reference_values():
    assert rgm_local_sensitivity_rdp(2.0, epsilon=0.1, B=0.01, dim=22) == pytest.approx(0.106496237692, rel=1e-11)
    assert rgm_local_sensitivity_rdp(2.0, epsilon=0.1, B=0.001, dim=22) == pytest.approx(0.100244545302, rel=1e-11)
    # eq. (6) equals Theorem 1 with sigma = A sqrt(alpha/(2 eps)), gamma = B sqrt(alpha/(2 eps))
    for a in [1.5, 2.0, 5.0]:
        f = math.sqrt(a / 0.2)
        assert rgm_local_sensitivity_rdp(a, epsilon=0.1, B=0.01, dim=5) == pytest.approx(
            rgm_rdp(a, A=3.0, B=0.01, gamma=0.01 * f, dim=5, sigma=3.0 * f), rel=1e-12)
    assert rgm_local_sensitivity_rdp(100.0, epsilon=0.1, B=0.1, dim=5) == math.inf


@pytest.mark.parametrize(
    "B,gamma,d,delta,ref,order",
    [(1e-3, 0.1, 10, 1e-5, 0.0747798, 238), (1e-2, 0.1, 10, 1e-5, 0.758589, 24.6), (1e-3, 1e-2, 22, 1e-6, 0.559961, 48.4)],
)
def test_numerical_conversion_reference(B, gamma, d, delta, ref, order):
    eps, a, conv = rgm_epsilon(delta, A=1.0, B=B, gamma=gamma, dim=d, conversion="mironov", return_details=True)
    assert conv == "mironov"
    assert eps == pytest.approx(ref, abs=6e-7)
    assert a == pytest.approx(order, rel=0.01)
    best = rgm_epsilon(delta, A=1.0, B=B, gamma=gamma, dim=d)
    assert best <= eps
    # composition over steps: linear RDP composition, and a larger epsilon
    assert rgm_epsilon(delta, A=1.0, B=B, gamma=gamma, dim=d, steps=4) > best


def test_epsilon_is_continuous_optimum():
    # a fine brute-force grid over the admissible range never beats the optimiser by more than 1e-7
    B, gamma, d, delta = 1e-2, 0.1, 10, 1e-5
    amax = 1 + 1 / (B * (2 + B))
    grid = 1 + (amax - 1) * np.linspace(1e-4, 1 - 1e-6, 20001)
    brute = np.min(rgm_rdp(grid, A=1.0, B=B, gamma=gamma, dim=d) + math.log(1 / delta) / (grid - 1))
    ours = rgm_epsilon(delta, A=1.0, B=B, gamma=gamma, dim=d, conversion="mironov")
    assert ours <= brute + 1e-12
    assert ours >= brute - 1e-7


def test_closed_form_corollary():
    # hypothesis holds (gamma small): the value of D.11 and above the numerical optimum
    cf = rgm_closed_form_epsilon(1e-6, A=1.0, B=1e-3, gamma=1e-2, dim=22)
    assert cf == pytest.approx(0.755064, abs=6e-7)
    assert cf >= rgm_epsilon(1e-6, A=1.0, B=1e-3, gamma=1e-2, dim=22, conversion="mironov")
    # counterexample of D.6: the closed form 0.0744647 would be below the true 0.0747798
    for B in (1e-3, 1e-2):
        with pytest.raises(ValueError, match="not a valid bound"):
            rgm_closed_form_epsilon(1e-5, A=1.0, B=B, gamma=0.1, dim=10)
    # d >= 8 log(1/delta) alone suffices
    assert math.isfinite(rgm_closed_form_epsilon(1e-5, A=1.0, B=1e-3, gamma=0.1, dim=93))


@given(B=st.floats(1e-4, 0.5), gamma=st.floats(1e-3, 10.0), d=st.integers(1, 200),
       delta=st.floats(1e-10, 0.1), steps=st.integers(1, 50))
def test_closed_form_never_below_numerical(B, gamma, d, delta, steps):
    kw = dict(A=1.0, B=B, gamma=gamma, dim=d)
    try:
        cf = rgm_closed_form_epsilon(delta, steps=steps, **kw)
    except ValueError:
        return
    num = rgm_epsilon(delta, steps=steps, conversion="mironov", **kw)
    assert cf >= num * (1 - 1e-9)


@given(B=st.floats(1e-5, 3.0), gamma=st.floats(1e-3, 10.0), d=st.integers(1, 100),
       x=st.floats(1e-6, 1 - 1e-6), y=st.floats(1e-6, 1 - 1e-6))
def test_rdp_monotone_and_infinite_outside(B, gamma, d, x, y):
    amax = 1 + 1 / (B * (2 + B))
    a1, a2 = sorted([1 + (amax - 1) * x, 1 + (amax - 1) * y])
    r1, r2 = rgm_rdp(np.array([a1, a2]), A=1.0, B=B, gamma=gamma, dim=d)
    assert 0 <= r1 <= r2 * (1 + 1e-12) < math.inf
    assert rgm_rdp(amax * (1 + 1e-12), A=1.0, B=B, gamma=gamma, dim=d) == math.inf
    assert rgm_rdp(amax * 1.01 + 1, A=1.0, B=B, gamma=gamma, dim=d) == math.inf


def _rgm_divergence(a, q, qp, sigma, gamma):
    """Exact D_a(RGM(q) || RGM(qp)) by Lemma 2."""
    s1 = sigma + gamma * np.linalg.norm(q)
    s2 = sigma + gamma * np.linalg.norm(qp)
    return renyi_gaussians(a, q, s1, qp, s2, dim=q.size)


def _radial_divergence_mp(a, r, A, B, gamma, d):
    """Exact D_a(RGM(q') || RGM(q)) for the radial pair q' = (1 + B + A/r) q, ||q|| = r, in mpmath.

    Built from the norms alone (||q' - q|| = A + B r exactly), so no floating-point rounding can
    make the pair inadmissible; Lemma 2 evaluated at 50 digits.
    """
    import mpmath

    with mpmath.workdps(50):
        a, r, A, B, gamma = (mpmath.mpf(v) for v in (a, r, A, B, gamma))
        sigma = gamma * A / B
        s1 = sigma + gamma * (r * (1 + B) + A)  # std of RGM(q')
        s2 = sigma + gamma * r  # std of RGM(q)
        s_a2 = a * s2**2 + (1 - a) * s1**2
        if s_a2 <= 0:
            return math.inf
        diff2 = (A + B * r) ** 2
        val = a * diff2 / (2 * s_a2) + d / (2 * (a - 1)) * mpmath.log(s1 ** (2 * (1 - a)) * s2 ** (2 * a) / s_a2)
        return float(val)


@given(A=st.floats(1e-3, 10.0), B=st.floats(1e-4, 1.0), gamma=st.floats(1e-2, 10.0), d=st.integers(1, 6),
       scale=st.floats(1e-3, 1e3), x=st.floats(1e-3, 1 - 1e-3))
def test_radial_pair_attains_bound(A, B, gamma, d, scale, x):
    amax = 1 + 1 / (B * (2 + B))
    a = 1 + (amax - 1) * x
    exact = _radial_divergence_mp(a, scale, A, B, gamma, d)
    bound = rgm_rdp(a, A=A, B=B, gamma=gamma, dim=d)
    assert exact <= bound
    assert exact == pytest.approx(bound, rel=1e-7)


@given(A=st.floats(1e-3, 10.0), B=st.floats(1e-4, 1.0), gamma=st.floats(1e-2, 10.0), d=st.integers(1, 6),
       sig_factor=st.floats(0.2, 5.0), x=st.floats(1e-3, 1 - 1e-3), seed=st.integers(0, 2**31))
def test_random_admissible_pairs_below_bound(A, B, gamma, d, sig_factor, x, seed):
    rng = np.random.default_rng(seed)
    sigma = sig_factor * gamma * A / B
    mech = RelativeGaussian(sigma, gamma, A, B, d)
    a = 1 + (mech.max_order - 1) * x
    bound = mech.rdp([a])[0]
    for _ in range(20):
        q = rng.normal(size=d) * 10 ** rng.uniform(-3, 3)
        direction = rng.normal(size=d)
        radius = (A + B * np.linalg.norm(q)) * rng.uniform() ** (1 / d)
        qp = q + radius * direction / np.linalg.norm(direction)
        # admissible pair: ||q - qp|| <= A + B min(||q||, ||qp||) (eq. 3 for both ordered pairs)
        if radius > A + B * np.linalg.norm(qp):
            continue
        for p, r in ((q, qp), (qp, q)):
            assert _rgm_divergence(a, p, r, sigma, gamma) <= bound * (1 + 1e-12)


def test_general_sigma_form():
    base = rgm_rdp(2.0, A=1.0, B=0.01, gamma=1.0, dim=3)
    assert rgm_rdp(2.0, A=1.0, B=0.01, gamma=1.0, dim=3, sigma=100.0) == base
    assert rgm_rdp(2.0, A=1.0, B=0.01, gamma=1.0, dim=3, sigma=1000.0) == base  # more noise: same constants
    assert rgm_rdp(2.0, A=1.0, B=0.01, gamma=1.0, dim=3, sigma=50.0) > base  # less noise: larger b and m
    assert rgm_rdp(2.0, A=1.0, B=0.01, gamma=1.0, dim=3, sigma=0.0) == math.inf
    # B = 0: a Gaussian mechanism with sensitivity A plus a relative part
    assert rgm_rdp(2.0, A=1.0, B=0.0, gamma=1e-9, dim=1, sigma=1.0) == pytest.approx(1.0, rel=1e-6)


def test_tcdp_pair_bounds_rdp():
    for B, gamma, d in [(0.01, 1.0, 10), (0.001, 0.1, 22), (0.05, 0.5, 1), (0.5, 2.0, 3)]:
        K, omega = rgm_tcdp(A=1.0, B=B, gamma=gamma, dim=d)
        assert K == pytest.approx(B**2 / gamma**2 + d * B**2 * (2 + B) ** 2 / 2, rel=1e-14)
        assert omega == pytest.approx(1 + 1 / (2 * B * (2 + B)))
        a = 1 + (omega - 1) * np.linspace(1e-6, 1, 2001)
        assert np.all(rgm_rdp(a, A=1.0, B=B, gamma=gamma, dim=d) <= K * a)


def test_mechanism_protocol_and_sampling():
    m = RelativeGaussian(None, 0.5, 2.0, 0.1, 3)
    assert m.sigma == pytest.approx(10.0)
    assert m.neighbouring == "replace_one"
    assert m.zcdp() == math.inf
    assert m.max_order == pytest.approx(1 + 1 / (0.1 * 2.1))
    assert np.all(np.isinf(m.rdp([m.max_order, 100.0])))
    v = np.array([3.0, 4.0, 0.0])
    draws = m.sample(v, np.random.default_rng(0), size=20_000)
    assert draws.shape == (20_000, 3)
    std = draws.std(axis=0, ddof=1)
    # std of N(., (10 + 0.5*5)^2): relative standard error 1/sqrt(2N) = 0.5%; 5 s.e. tolerance
    assert np.allclose(std, 12.5, rtol=0.025)
    assert np.allclose(draws.mean(axis=0), v, atol=5 * 12.5 / math.sqrt(20_000))
    assert np.array_equal(m.sample(v, np.random.default_rng(1), size=3), m.sample(v, np.random.default_rng(1), size=3))
    with pytest.raises(ValueError, match="dim"):
        m.sample(np.zeros(2), np.random.default_rng(0))


def test_accountants_accept_rgm():
    from dpaudit.accounting.rdp import RDPAccountant
    from dpaudit.accounting.tcdp import TCDPAccountant

    m = RelativeGaussian(None, 0.1, 1.0, 1e-3, 10)
    eps = RDPAccountant(orders=np.linspace(1.5, 400, 2000)).compose(m).epsilon(1e-5)
    assert eps >= rgm_epsilon(1e-5, A=1.0, B=1e-3, gamma=0.1, dim=10) * (1 - 1e-9)
    acc = TCDPAccountant().compose(m)
    assert (acc.rho, acc.omega) == pytest.approx(m.tcdp())


@pytest.mark.parametrize(
    "bad",
    [dict(gamma=0.0), dict(gamma=-1.0), dict(A=-1.0), dict(B=-0.1), dict(dim=0), dict(dim=1.5),
     dict(sigma=-1.0), dict(B=0.0), dict(gamma=float("nan"))],
)
def test_bad_inputs(bad):
    args = dict(A=1.0, B=0.01, gamma=1.0, dim=2, sigma=None)
    args.update(bad)
    with pytest.raises(ValueError):
        rgm_rdp(2.0, **args)


def test_bad_inputs_conversion():
    with pytest.raises(ValueError, match="delta"):
        rgm_epsilon(1.0, A=1.0, B=0.01, gamma=1.0, dim=2)
    with pytest.raises(ValueError, match="conversion"):
        rgm_epsilon(1e-5, A=1.0, B=0.01, gamma=1.0, dim=2, conversion="tight")
    with pytest.raises(ValueError, match="steps"):
        rgm_epsilon(1e-5, A=1.0, B=0.01, gamma=1.0, dim=2, steps=0)
    with pytest.raises(ValueError, match="alpha"):
        rgm_rdp(0.5, A=1.0, B=0.01, gamma=1.0, dim=2)
    with pytest.raises(ValueError, match="epsilon"):
        rgm_local_sensitivity_rdp(2.0, epsilon=-1.0, B=0.1, dim=1)


# --------------------------------------------------------------------------- PTR (Proposition 2)
def _brute_distance(X, mu0, l2=0.0):
    """Exact replace-one distance to {A_D not >= mu0 I} when the zero record is in the domain."""
    n, d = X.shape
    M = gram_matrix(X, l2) - mu0 * np.eye(d)
    if np.linalg.eigvalsh(M)[0] < 0:
        return 0
    for k in range(1, n + 1):
        for S in itertools.combinations(range(n), k):
            XS = X[list(S)]
            if np.linalg.eigvalsh(M - XS.T @ XS / n)[0] < -1e-12:
                return k
    return math.inf


@given(n=st.integers(3, 8), d=st.integers(1, 3), seed=st.integers(0, 2**31), frac=st.floats(0.05, 0.95))
def test_sorted_bound_below_brute_force(n, d, seed, frac):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 2.0, size=d)
    mu0 = frac * np.linalg.eigvalsh(gram_matrix(X))[0]
    k_hat = ptr_distance(X, mu0)
    k = _brute_distance(X, mu0)
    assert k_hat <= k
    C = float(np.linalg.norm(X, axis=1).max())
    g = ptr_lower_bound_statistic(X, mu0, record_bound=C)
    assert g < k
    assert math.floor(g) + 1 <= k_hat


def test_sorted_bound_sensitivity_exceeds_one():
    # D.9 caveat: k_hat is a valid distance bound but a single replacement moves it by 4
    X = np.zeros((100, 2))
    X[:50, 0] = 1.0
    X[50:, 1] = 1.0
    X2 = X.copy()
    X2[0] = [0.0, 3.0]
    assert ptr_distance(X, 0.4) == 10  # (true distance 11; inflation of s_i makes it conservative)
    assert ptr_distance(X2, 0.4) == 6
    # the Weyl statistic moves by at most 1
    g1 = ptr_lower_bound_statistic(X, 0.4, record_bound=3.0)
    g2 = ptr_lower_bound_statistic(X2, 0.4, record_bound=3.0)
    assert abs(g1 - g2) <= 1.0


@given(n=st.integers(2, 40), d=st.integers(1, 4), seed=st.integers(0, 2**31))
def test_weyl_statistic_sensitivity_one(n, d, seed):
    rng = np.random.default_rng(seed)
    C = 2.0
    X = rng.normal(size=(n, d))
    X *= (C * rng.uniform(size=(n, 1))) / np.linalg.norm(X, axis=1, keepdims=True)
    X2 = X.copy()
    new = rng.normal(size=d)
    X2[rng.integers(n)] = C * rng.uniform() * new / np.linalg.norm(new)
    T = rng.uniform(0, 0.5) * np.eye(d)
    g1 = ptr_lower_bound_statistic(X, T, record_bound=C, l2=0.1)
    g2 = ptr_lower_bound_statistic(X2, T, record_bound=C, l2=0.1)
    assert abs(g1 - g2) <= 1.0 + 1e-9


def test_ptr_distance_edge_cases():
    X = np.eye(3)
    assert ptr_distance(X, 1.0) == 0  # A_D = I/3 is not >= I
    assert ptr_distance(X, 0.0, l2=1.0) == math.inf  # l2 I >= T: never bad
    T = np.diag([0.1, 0.1, 0.1])
    assert ptr_distance(X, T) == ptr_distance(X, 0.1)
    with pytest.raises(ValueError, match="threshold"):
        ptr_distance(X, np.eye(2))
    with pytest.raises(ValueError, match="X"):
        ptr_distance(np.ones(3), 0.1)
    with pytest.raises(ValueError, match="record_bound"):
        ptr_lower_bound_statistic(X, 0.1, record_bound=0.5)


def test_propose_test_release():
    rng = np.random.default_rng(3)
    n, d, C = 5000, 3, 1.0
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / (0.999 * C))
    good = propose_test_release(X, 0.1, record_bound=C, epsilon=0.5, delta=1e-6, seed=1)
    assert good.passed and good.noisy_statistic > good.cutoff
    assert good.cutoff == pytest.approx(math.log(1e6) / 0.5)
    assert good.total(1.0, 1e-6) == (1.5, 2e-6)
    # an unsafe dataset (not good): passes with probability <= delta; with delta = 0.2 about <= 10%
    bad = X[:20]
    passes = [propose_test_release(bad, 0.5, record_bound=C, epsilon=1.0, delta=0.2, seed=s).passed
              for s in range(400)]
    assert np.mean(passes) <= 0.1 + 4 * math.sqrt(0.1 * 0.9 / 400)
    assert propose_test_release(X, 0.1, record_bound=C, epsilon=0.5, delta=1e-6, seed=7) == \
        propose_test_release(X, 0.1, record_bound=C, epsilon=0.5, delta=1e-6, seed=7)


# --------------------------------------------------------------------------- ridge constants (eqs. 9-11)
def _neighbour_differences(X, y, l2, Xn, yn, W):
    return (np.linalg.norm(ridge_gradient(X, y, l2, W) - ridge_gradient(Xn, yn, l2, W), axis=1),
            np.linalg.norm(ridge_gradient(X, y, l2, W), axis=1))


def test_ridge_constants_dominate_gradient_differences():
    rng = np.random.default_rng(0)
    n, d, l2 = 30, 3, 0.05
    X = rng.normal(size=(n, d))
    y = rng.normal(size=n)
    A, B = ridge_relative_sensitivity(X, y, l2)
    A_D = gram_matrix(X, l2)
    h = np.linalg.norm(X, axis=1) * np.linalg.norm(np.linalg.solve(A_D, X.T), axis=0)
    assert B == pytest.approx(2 * h.max() / n, rel=1e-9)  # eq. (11) with the factor 2
    wstar = np.linalg.solve(A_D, X.T @ y / n)
    W = np.concatenate([rng.normal(size=(200, d)) * 10 ** rng.uniform(-3, 3, size=(200, 1)), wstar[None]])
    worst = 0.0
    for j in range(n):
        for k in range(n):  # replacement records from the data envelope: another record of D
            Xn, yn = X.copy(), y.copy()
            Xn[j], yn[j] = X[k], -y[k]
            diff, norm = _neighbour_differences(X, y, l2, Xn, yn, W)
            worst = max(worst, float(np.max(diff / (A + B * norm))))
    assert worst <= 1.0
    # domain version: any record in the ball of radius C, label in [-Y, Y]
    C, Y = float(np.linalg.norm(X, axis=1).max()), float(np.abs(y).max())
    A2, B2 = ridge_relative_sensitivity(X, y, l2, record_bound=C, label_bound=Y)
    assert A2 >= A and B2 >= B
    for _ in range(200):
        Xn, yn = X.copy(), y.copy()
        j = rng.integers(n)
        v = rng.normal(size=d)
        Xn[j] = C * v / np.linalg.norm(v)
        yn[j] = Y * rng.choice([-1.0, 1.0])
        diff, norm = _neighbour_differences(X, y, l2, Xn, yn, W)
        assert np.all(diff <= A2 + B2 * norm)


def test_ridge_ptr_constants_and_smoothness():
    A, B = ridge_ptr_constants(100, record_bound=2.0, label_bound=1.0, threshold=0.5)
    assert B == pytest.approx(4.0 / 50.0)
    assert A == pytest.approx(B * 2.0 + 4.0 / 100)
    assert ridge_ptr_constants(100, record_bound=2.0, label_bound=1.0, threshold=0.5 * np.eye(2)) == pytest.approx((A, B))
    X = np.diag([1.0, 2.0])
    L, mu = ridge_smoothness_constants(X, 0.5)
    assert L == pytest.approx(2.5) and mu == pytest.approx(1.0)
    assert L >= 2.5 and mu <= 1.0
    with pytest.raises(ValueError, match="label_bound"):
        ridge_relative_sensitivity(X, np.ones(2), 0.1, record_bound=3.0)
    with pytest.raises(ValueError, match="record_bound"):
        ridge_relative_sensitivity(X, np.ones(2), 0.1, record_bound=1.0, label_bound=1.0)
    with pytest.raises(ValueError, match="y"):
        ridge_relative_sensitivity(X, np.ones(3), 0.1)
    with pytest.raises(ValueError, match="positive definite"):
        ridge_relative_sensitivity(np.ones((3, 2)), np.ones(3), 0.0)
    with pytest.raises(ValueError, match="threshold"):
        ridge_ptr_constants(10, record_bound=1.0, label_bound=1.0, threshold=0.0)
