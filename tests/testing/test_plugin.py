"""The dpaudit pytest plugin, exercised by running pytest on a small sample project (pytester)."""

from importlib.metadata import entry_points

import pytest

pytest_plugins = ["pytester"]

SAMPLE = '''
import numpy as np
import pytest
from dpaudit.testing import assert_audit_consistent


def laplace(scale):
    def sampler(x, rng, size):
        return np.asarray(x, dtype=float) + rng.laplace(0.0, scale, size=size)
    return sampler


def test_correct_mechanism():
    # Laplace noise of scale 1 on a sensitivity-1 query: 1-DP, as claimed
    assert_audit_consistent(laplace(1.0), 0.0, 1.0, epsilon=1.0, statistic="auto-real")


@pytest.mark.dpaudit(trials=4000, seed=7, confidence=0.9)
def test_marker_settings(dpaudit_config):
    assert (dpaudit_config.trials, dpaudit_config.seed, dpaudit_config.confidence) == (4000, 7, 0.9)
    res = assert_audit_consistent(laplace(1.0), 0.0, 1.0, epsilon=1.0, statistic="auto-real")
    assert res.trials == 4000 and res.confidence == 0.9


def test_broken_mechanism():
    # BUG on purpose: the noise is calibrated for sensitivity 1/4, the query has sensitivity 1
    assert_audit_consistent(laplace(0.25), 0.0, 1.0, epsilon=1.0, statistic="auto-real")
'''


@pytest.fixture
def project(pytester):
    if not any(ep.name == "dpaudit" for ep in entry_points(group="pytest11")):
        pytester.plugins.append("dpaudit.testing.plugin")  # editable install without refreshed metadata
    pytester.makepyfile(test_sample=SAMPLE)
    return pytester


def test_entry_point_is_registered():
    eps = [ep for ep in entry_points(group="pytest11") if ep.name == "dpaudit"]
    assert eps and eps[0].value == "dpaudit.testing.plugin"


def test_sample_project_passes_and_fails_with_an_explanation(project):
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--dpaudit-trials", "8000", "-rf")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*test_broken_mechanism*",
        "*AssertionError: dpaudit: the audit contradicts the claimed privacy budget.*",
        "*claimed:*epsilon = 1 at delta = 0*",
        "*lower bound:*epsilon >= *(valid with confidence 0.99)*",
        "*trials:*8,000 per dataset, seed * (--dpaudit-trials, seed from the test id)*",
        "*NOT (1, 0)-DP on these neighbouring inputs*",
        "*Common causes: noise calibrated to the wrong sensitivity*",
    ])


def test_options_apply_and_marker_overrides(project):
    project.makepyfile(test_cfg='''
import pytest

def test_options(dpaudit_config):
    assert (dpaudit_config.trials, dpaudit_config.seed, dpaudit_config.confidence) == (1234, 5, 0.8)
    assert "--dpaudit-trials" in dpaudit_config.source

@pytest.mark.dpaudit(seed=99)
def test_marker_wins(dpaudit_config):
    assert dpaudit_config.seed == 99 and dpaudit_config.trials == 1234
''')
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "test_cfg.py", "--dpaudit-trials", "1234",
                                          "--dpaudit-seed", "5", "--dpaudit-confidence", "0.8")
    result.assert_outcomes(passed=2)


def test_default_seed_is_stable_per_test(project):
    project.makepyfile(test_seed='''
from dpaudit.testing._config import seed_from_name

def test_a(dpaudit_config, request):
    assert dpaudit_config.seed == seed_from_name(request.node.nodeid)
    assert dpaudit_config.trials == 20000 and dpaudit_config.confidence == 0.99
''')
    project.runpytest_subprocess("-p", "no:cacheprovider", "test_seed.py").assert_outcomes(passed=1)


def test_ini_options(project):
    project.makeini("[pytest]\ndpaudit_trials = 321\n")
    project.makepyfile(test_ini="def test_ini(dpaudit_config):\n    assert dpaudit_config.trials == 321\n")
    project.runpytest_subprocess("-p", "no:cacheprovider", "test_ini.py").assert_outcomes(passed=1)


@pytest.mark.parametrize("args,message", [
    (["--dpaudit-trials", "0"], "--dpaudit-trials must be an integer >= 1"),
    (["--dpaudit-confidence", "1.5"], "--dpaudit-confidence must be in (0, 1)"),
    (["--dpaudit-seed", "x"], "--dpaudit-seed must be an integer >= 0"),
])
def test_bad_options_are_usage_errors(project, args, message):
    result = project.runpytest_subprocess("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_bad_marker(project):
    project.makepyfile(test_bad='''
import pytest

@pytest.mark.dpaudit(trails=10)
def test_x():
    pass
''')
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "test_bad.py")
    assert "unknown @pytest.mark.dpaudit argument(s) ['trails']" in result.stdout.str() + result.stderr.str()


def test_plugin_startup_is_light_and_works_without_hypothesis(pytester):
    """Loading the plugin must import neither numpy nor hypothesis, and must not need hypothesis."""
    pytester.makepyfile(test_light='''
import sys

def test_light(dpaudit_config):
    assert "hypothesis" not in sys.modules
    assert "numpy" not in sys.modules
    assert "dpaudit.audit" not in sys.modules
''')
    pytester.makeconftest('''
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "hypothesis" or name.startswith("hypothesis."):
            raise ImportError("hypothesis is blocked in this test")
        return None
sys.meta_path.insert(0, _Block())
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                                           "-p", "dpaudit.testing.plugin" if not any(
                                               ep.name == "dpaudit" for ep in entry_points(group="pytest11"))
                                           else "no:nothing")
    result.assert_outcomes(passed=1)
