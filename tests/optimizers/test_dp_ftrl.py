"""The DP-FTRL optimizer, its claim, and audits that catch the classic mistakes of correlated-noise training.

Audit design (used by every audit below). The model has two coordinates; the records' coordinate 0 is
zero, l2 = 0, so coordinate 0 of the iterates carries only the canary and the noise. The canary is one
extra record of batch 0 whose gradient is the Dirac vector clip * e_0: it takes part at steps 0, b, 2b,
... (b = steps / epochs), the worst fixed-epoch pattern for a non-negative Toeplitz strategy. DP-FTRL
releases every iterate, so the auditor observes the trace theta_t[0] and scores it with the run's own
likelihood-ratio statistic (``DPFTRL.canary_statistic``: (C u) . (C g~), a Gaussian with mean gap
||C u|| / noise_multiplier in noise sds -- the most powerful test of the pair). ``audit_mechanism``
chooses the threshold on a selection split and certifies epsilon_lower on an independent evaluation split
(Clopper-Pearson at 95%). The audit's delta is 1e-2: at that delta the threshold audit with 10,000
trials per side certifies about 2.0 for a Gaussian pair with mu = 1, while a claim at mu = 0.5 is 0.92,
so a claim whose mu is half the true one is flagged; claims are evaluated at the same delta.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from dpaudit import Gaussian, PLDAccountant
from dpaudit.accounting.matrix_mechanism import banded_cyclic_poisson
from dpaudit.audit import audit_optimizer
from dpaudit.mechanisms.mf_participation import Participation, mf_sensitivity
from dpaudit.mechanisms.mf_strategies import IdentityStrategy, geometric_bands
from dpaudit.optimizers import make_optimizer, names
from dpaudit.optimizers.dp_ftrl import DPFTRL
from tests.support import BENCHMARKS  # noqa: E402

sys.path.insert(0, str(BENCHMARKS))
import dp_ftrl_audits as A  # noqa: E402  (the variants and the audit design live with their benchmark)

VARIANTS = ("single", "bands", "blt")
_BUILT: dict = {}


def _variant(label):
    """The broken variant ``label`` (built once; noise multipliers put the claim's mu near 0.5 and the true
    mu near 1: true / claimed sensitivity 2.12, 1.91, 2.10)."""
    if label not in _BUILT:
        _BUILT[label] = A.variant(label)
    return _BUILT[label]


def _data(n=16, dim=2):
    return A.audit_data(n, dim)


def llr_audit(opt, **kw):
    return A.llr_audit(opt, **kw)


# -- the optimizer --------------------------------------------------------------------------------------

def test_registered_and_validated():
    assert "dp-ftrl" in names
    opt = make_optimizer("dp-ftrl", steps=16, epochs=2, strategy="banded", bands=4)
    assert opt.batches == 8 and opt.canary_steps() == (0, 8)
    with pytest.raises(ValueError, match="epochs"):
        make_optimizer("dp-ftrl", steps=10, epochs=3)
    with pytest.raises(ValueError, match="strategy"):
        make_optimizer("dp-ftrl", strategy="tree")
    with pytest.raises(ValueError, match="banded"):
        make_optimizer("dp-ftrl", steps=16, epochs=2, strategy="prefix", sample_rate=0.5)
    with pytest.raises(ValueError, match="bands"):
        make_optimizer("dp-ftrl", steps=16, epochs=4, strategy="banded", bands=8, sample_rate=0.5)
    with pytest.raises(ValueError, match="steps"):
        make_optimizer("dp-ftrl", steps=16, strategy=IdentityStrategy(8))
    with pytest.raises(ValueError, match="unknown"):
        make_optimizer("dp-ftrl", sampling_rate=0.1)


def test_claim_is_the_mf_mechanism_and_the_amplified_reduction():
    opt = make_optimizer("dp-ftrl", steps=32, epochs=4, strategy="banded", bands=8, noise_multiplier=3.0, clip=0.5)
    mech, count = opt.step_mechanism()
    sens = mf_sensitivity(opt.strategy, Participation.fixed_epoch(4)).value
    assert count == 1 and mech.effective_sensitivity == pytest.approx(sens * 0.5)
    assert opt.claim(10).epsilon(1e-5) == pytest.approx(
        PLDAccountant().compose(Gaussian(1.5, sens * 0.5)).epsilon(1e-5), rel=1e-9)
    amp = make_optimizer("dp-ftrl", steps=32, epochs=4, strategy="banded", bands=8, noise_multiplier=3.0,
                         sample_rate=0.25, accountant="rdp")
    ref = banded_cyclic_poisson(amp.strategy, 3.0, 0.25, groups=8)
    m2, c2 = amp.step_mechanism()
    assert c2 == ref.count == 4 and m2 == ref.mechanism
    assert amp.claim(10).epsilon(1e-5) == pytest.approx(ref.epsilon(1e-5, "rdp"), rel=1e-12)
    assert amp.claim(10).epsilon(1e-5) < opt.claim(10).epsilon(1e-5) * 2 * 0.5  # amplified below the (clip 1) run
    assert math.isinf(make_optimizer("dp-ftrl", noise_multiplier=0.0).claim(5).epsilon(1e-5))


def test_run_is_seeded_batched_and_traces_every_iterate():
    X, y = _data(12)
    opt = make_optimizer("dp-ftrl", steps=24, epochs=3, strategy="blt", buffers=2)
    a = opt.run(X, y, trials=7, seed=3, trace_coordinate=1)
    b = opt.run(X, y, trials=7, seed=3)
    np.testing.assert_array_equal(a.params, b.params)
    assert a.params.shape == (7, 2) and a.extra["trace"].shape == (7, 24)
    np.testing.assert_array_equal(a.extra["trace"][:, -1], a.params[:, 1])
    with pytest.raises(ValueError, match="trace_coordinate"):
        opt.run(X, y, trace_coordinate=2)


def test_noise_is_the_strategy_stream_and_the_statistic_separates_by_mu():
    X, y = _data(16)
    opt = make_optimizer("dp-ftrl", steps=32, epochs=4, strategy=geometric_bands(4, 32), noise_multiplier=2.0)
    stat = opt.canary_statistic(16)
    g = np.array([1.0, 0.0])
    s0 = stat(opt.run(X, y, trials=4000, seed=1, trace_coordinate=0).extra["trace"])
    s1 = stat(opt.run(X, y, trials=4000, seed=2, canary_gradient=g, trace_coordinate=0).extra["trace"])
    mu = opt.step_mechanism()[0].mu
    assert (s1.mean() - s0.mean()) / s0.std() == pytest.approx(mu, rel=0.08)
    assert s0.std() == pytest.approx(2.0 * np.linalg.norm(opt.strategy.multiply(np.eye(1, 32, 0).ravel()
                                                                                 + np.eye(1, 32, 8).ravel()
                                                                                 + np.eye(1, 32, 16).ravel()
                                                                                 + np.eye(1, 32, 24).ravel())),
                                     rel=0.05)


def test_default_audit_optimizer_runs_and_holds():
    res = audit_optimizer("dp-ftrl", trials=2000, seed=0, steps=32, epochs=2, strategy="banded", bands=4)
    assert not res.violation and res.epsilon_claimed > 0


# -- audits that catch the classic mistakes ---------------------------------------------------------------

@pytest.mark.parametrize("label", VARIANTS)
def test_broken_variants_are_flagged(label):
    opt = _variant(label)
    assert type(opt).__name__ in ("SingleParticipationClaim", "OrthogonalBandsClaim", "TruncatedBLTClaim")
    claimed_mu = opt.step_mechanism()[0].mu
    true_mu = mf_sensitivity(opt.strategy, opt.participation).value / opt.hp["noise_multiplier"]
    assert 0.45 < claimed_mu < 0.55 and true_mu > 1.9 * claimed_mu  # the design
    res = llr_audit(opt, seed=1)
    assert res.violation, (label, res.epsilon_lower, res.epsilon_claimed)
    assert res.epsilon_lower > 1.5 * res.epsilon_claimed


@pytest.mark.parametrize("label", VARIANTS)
def test_correct_runs_are_not_flagged(label):
    correct = DPFTRL(**_variant(label).hp)
    res = llr_audit(correct, seed=2, trials=4000)
    assert not res.violation, (label, res.epsilon_lower, res.epsilon_claimed)


def test_a_truncated_noise_stream_is_more_private_and_not_flagged():
    opt = A.variant("stream")
    res = llr_audit(opt, seed=4, trials=4000, statistic_of=DPFTRL(**opt.hp))
    assert not res.violation
    eff = mf_sensitivity(opt.stream_strategy, opt.participation).value
    assert eff < mf_sensitivity(A.SINGLE_BLT, opt.participation).value


@pytest.mark.slow
def test_the_correct_run_is_consistent_over_100_seeds():
    opt = DPFTRL(**_variant("single").hp)
    flagged = sum(llr_audit(opt, seed=s).violation for s in range(100))
    # at confidence 0.95 a sound audit flags a correct claim with probability <= 5%:
    # P(Binomial(100, 0.05) > 10) < 1.2%
    assert flagged <= 10


@pytest.mark.slow
def test_broken_variants_are_flagged_on_most_seeds():
    for label in VARIANTS:
        flagged = sum(llr_audit(_variant(label), seed=s).violation for s in range(20))
        assert flagged >= 19, label
