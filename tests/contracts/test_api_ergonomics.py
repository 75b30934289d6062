"""Issue 13, the Python API a reader can act on: a short AuditResult repr, recorded seeds, one set
of defaults (with the documented reasons true), no silent pure-DP claim for a Gaussian, pytest
failure output without dpaudit's frames, and the Opacus / dp_accounting conveniences."""

from __future__ import annotations

import inspect
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpaudit
from dpaudit.accounting.convenience import (
    OpacusStyleAccountant,
    get_epsilon,
    get_noise_multiplier,
    sampling_from_epochs,
)
from dpaudit.audit import audit_mechanism, audit_optimizer
from dpaudit.core import defaults
from dpaudit.testing import assert_audit_consistent

pytest_plugins = ["pytester"]


def laplace(x, rng, size):
    return x + rng.laplace(0.0, 1.0, size)


@pytest.fixture(scope="module")
def small_audit():
    return audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, trials=2000, seed=0, statistic="auto-real")


# -------------------------------------------------------------------------------- AuditResult
def test_repr_is_one_short_line(small_audit):
    text = repr(small_audit)
    assert "\n" not in text and len(text) < 300, text
    assert text.startswith("AuditResult(verdict='consistent', epsilon_lower=")
    assert "roc" not in text and "threshold_test" not in text
    assert f"{small_audit.epsilon_lower:.4g}" in text and "trials=2000" in text


def test_a_drawn_seed_is_recorded_and_reproduces_the_audit():
    first = audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, trials=1000)  # seed=None: fresh entropy
    seed = first.details["seed"]
    assert isinstance(seed, int) and seed > 2**32  # 128 bits of entropy, not a small default
    again = audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, trials=1000, seed=seed)
    assert json.dumps(first.to_dict(), sort_keys=True) == json.dumps(again.to_dict(), sort_keys=True)
    opt = audit_optimizer("projection", trials=200, seed=4)
    assert opt.details["seed"] == 4
    child = np.random.SeedSequence(7).spawn(2)[1]
    rec = audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, trials=500, seed=child).details["seed"]
    assert rec == {"entropy": 7, "spawn_key": [1], "n_children_spawned": 0}


def test_with_details_copies(small_audit):
    other = small_audit.with_details(note="x")
    assert other.details["note"] == "x" and "note" not in small_audit.details
    assert other.epsilon_lower == small_audit.epsilon_lower


# -------------------------------------------------------------------------------- defaults
def _default(fn, name):
    return inspect.signature(fn).parameters[name].default


def test_one_set_of_defaults():
    from dpaudit.cli import build_parser
    from dpaudit.testing._config import AuditConfig

    assert _default(audit_mechanism, "trials") == _default(audit_optimizer, "trials") == defaults.DEFAULT_TRIALS
    assert _default(audit_mechanism, "confidence") == _default(audit_optimizer, "confidence") \
        == defaults.DEFAULT_CONFIDENCE
    parser = build_parser()
    for argv in (["audit", "dp-gd"], ["report"]):
        args = parser.parse_args(argv)
        assert (args.trials, args.confidence) == (defaults.DEFAULT_TRIALS, defaults.DEFAULT_CONFIDENCE), argv
    assert parser.parse_args(["report"]).delta == defaults.DEFAULT_DELTA
    from dpaudit.audit.optimizer import DEFAULT_AUDIT_DELTA

    assert DEFAULT_AUDIT_DELTA == defaults.DEFAULT_DELTA
    cfg = AuditConfig()
    assert (cfg.trials, cfg.confidence) == (defaults.TESTING_TRIALS, defaults.TESTING_CONFIDENCE)


def test_the_documented_reason_for_the_testing_defaults_holds():
    """defaults.py: twice the trials at 0.99 buy back the power lost to the stricter confidence
    (ceiling 0.947 vs 0.951 at epsilon 1; 3.830 vs 3.841 at epsilon 4)."""
    from dpaudit.audit.stats.power import threshold_ceiling

    for eps, audit_side, test_side in ((1.0, 0.947, 0.951), (4.0, 3.830, 3.841)):
        a = threshold_ceiling(eps, 1e-5, int(0.7 * defaults.DEFAULT_TRIALS), (1 - defaults.DEFAULT_CONFIDENCE) / 2)
        t = threshold_ceiling(eps, 1e-5, int(0.7 * defaults.TESTING_TRIALS), (1 - defaults.TESTING_CONFIDENCE) / 2)
        assert round(a, 3) == audit_side and round(t, 3) == test_side and t >= a
        assert f"{audit_side:.3f}" in defaults.__doc__ and f"{test_side:.3f}" in defaults.__doc__


# -------------------------------------------------------------------------------- delta for a Gaussian
def test_a_gaussian_is_never_audited_as_pure_dp_silently():
    gauss = dpaudit.Gaussian(1.0)
    with pytest.warns(defaults.PureDPClaimWarning, match="no pure-DP guarantee"):
        audit_mechanism(gauss.sample, 0.0, 1.0, epsilon=1.0, trials=200, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", defaults.PureDPClaimWarning)
        audit_mechanism(gauss.sample, 0.0, 1.0, epsilon=5.0, delta=1e-5, trials=200, seed=0)
        audit_mechanism(dpaudit.Laplace(1.0).sample, 0.0, 1.0, epsilon=1.0, trials=200, seed=0)  # pure DP
        audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, trials=200, seed=0)  # a black box: nothing known
    with pytest.raises(ValueError, match="delta must be given for Gaussian"):
        assert_audit_consistent(gauss, 0.0, 1.0, epsilon=1.0, trials=200, seed=0)
    with pytest.raises(ValueError, match="delta must be given"):
        assert_audit_consistent(gauss.sample, 0.0, 1.0, epsilon=1.0, trials=200, seed=0)
    res = assert_audit_consistent(gauss, 0.0, 1.0, epsilon=5.0, delta=1e-5, trials=500, seed=0)
    assert res.delta == 1e-5
    assert_audit_consistent(dpaudit.Laplace(1.0), 0.0, 1.0, epsilon=1.0, trials=500, seed=0)  # pure DP default ok


# -------------------------------------------------------------------------------- pytest output
FAILING = '''
import numpy as np
from dpaudit.testing import assert_audit_consistent


def test_broken():
    assert_audit_consistent(lambda x, rng, size: x + rng.laplace(0.0, 0.25, size), 0.0, 1.0, epsilon=1.0)


def test_bad_argument():
    assert_audit_consistent(lambda x, rng, size: x + rng.laplace(0.0, 1.0, size), 0.0, 1.0, epsilon=-1.0)
'''


@pytest.fixture
def user_project(pytester):
    from importlib.metadata import entry_points

    if not any(ep.name == "dpaudit" for ep in entry_points(group="pytest11")):
        pytester.plugins.append("dpaudit.testing.plugin")
    pytester.makepyfile(test_user=FAILING)
    return pytester


def test_failure_output_shows_the_users_line_not_dpaudits_frames(user_project):
    res = user_project.runpytest_subprocess("-p", "no:cacheprovider", "--dpaudit-trials", "3000")
    res.assert_outcomes(failed=2)
    out = res.stdout.str()
    assert "assert_audit_consistent(lambda x, rng, size: x + rng.laplace(0.0, 0.25, size)" in out
    assert "dpaudit: the audit contradicts" in out and "epsilon must be" in out
    for frame in ("dpaudit/testing/assertions.py", "dpaudit/audit/mechanism.py", "dpaudit/core/validation.py"):
        assert frame not in out, frame


@pytest.mark.slow
def test_fulltrace_still_shows_every_frame(user_project):
    full = user_project.runpytest_subprocess("-p", "no:cacheprovider", "--dpaudit-trials", "3000", "--fulltrace")
    assert "dpaudit/testing/assertions.py" in full.stdout.str() and "dpaudit/core/validation.py" in full.stdout.str()


# -------------------------------------------------------------------------------- conveniences
def test_epochs_to_q_and_steps():
    q, steps = sampling_from_epochs(10, 256, 60_000)
    assert q == 256 / 60_000 and steps == math.ceil(10 * 60_000 / 256) == 2344
    assert sampling_from_epochs(1, 100, 1000) == (0.1, 10)  # no extra step from rounding noise
    for bad, name in (((0, 10, 100), "epochs"), ((1, 200, 100), "batch_size"), ((1, 0, 100), "batch_size")):
        with pytest.raises(ValueError, match=name):
            sampling_from_epochs(*bad)


@given(epochs=st.floats(0.01, 50), batch=st.integers(1, 5000), extra=st.integers(0, 10**6))
def test_epochs_never_undercount_steps(epochs, batch, extra):
    n = batch + extra
    q, steps = sampling_from_epochs(epochs, batch, n)
    assert steps * q >= epochs * (1 - 1e-9)  # at least the epochs asked for: an upper bound stays one
    assert steps == 1 or (steps - 1) * q < epochs * (1 + 1e-9)


def test_get_epsilon_is_the_accountants_number():
    step = dpaudit.PoissonSampled(dpaudit.Gaussian(1.1), 0.01)
    rdp = dpaudit.RDPAccountant().compose(step, 1000).epsilon(1e-5)
    assert get_epsilon(noise_multiplier=1.1, sample_rate=0.01, steps=1000, delta=1e-5) == rdp
    assert get_epsilon(noise_multiplier=1.1, sample_rate=0.01, epochs=10, delta=1e-5) == rdp
    pld = get_epsilon(noise_multiplier=1.1, sample_rate=0.01, steps=1000, delta=1e-5, accountant="prv")
    assert pld == dpaudit.PLDAccountant().compose(step, 1000).epsilon(1e-5) and pld < rdp
    with pytest.raises(ValueError, match="gdp"):
        get_epsilon(noise_multiplier=1.1, sample_rate=0.01, steps=10, delta=1e-5, accountant="gdp")
    with pytest.raises(ValueError, match="exactly one of steps and epochs"):
        get_epsilon(noise_multiplier=1.1, sample_rate=0.01, delta=1e-5)


def test_get_noise_multiplier_is_the_smallest_meeting_the_target():
    nm = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.01, epochs=10)
    at = get_epsilon(noise_multiplier=nm, sample_rate=0.01, epochs=10, delta=1e-5)
    below = get_epsilon(noise_multiplier=nm * (1 - 1e-6), sample_rate=0.01, epochs=10, delta=1e-5)
    assert at <= 2.0 < below
    with pytest.raises(ValueError, match="unknown arguments"):
        get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.01, epochs=10, alphas=[2])


def test_opacus_style_accountant_composes_its_history():
    acc = OpacusStyleAccountant()
    assert acc.get_epsilon(1e-5) == 0.0
    for _ in range(300):
        acc.step(noise_multiplier=1.1, sample_rate=0.01)
    acc.step(noise_multiplier=2.0, sample_rate=0.02, count=50)
    assert len(acc) == 350 and acc.history == [(1.1, 0.01, 300), (2.0, 0.02, 50)]
    direct = (dpaudit.RDPAccountant().compose(dpaudit.PoissonSampled(dpaudit.Gaussian(1.1), 0.01), 300)
              .compose(dpaudit.PoissonSampled(dpaudit.Gaussian(2.0), 0.02), 50).epsilon(1e-5))
    assert acc.get_epsilon(1e-5) == direct


def test_get_epsilon_agrees_with_dp_accounting():
    dp_accounting = pytest.importorskip("dp_accounting")
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), 1000)
    theirs = dp_accounting.rdp.RdpAccountant().compose(event).get_epsilon(1e-5)
    ours = get_epsilon(noise_multiplier=1.1, sample_rate=0.01, steps=1000, delta=1e-5)
    assert ours <= theirs * (1 + 1e-9) and ours >= 0.95 * theirs  # at least as tight, same quantity
