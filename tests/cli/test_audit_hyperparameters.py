"""``dpaudit audit OPTIMIZER --hyper-parameter VALUE ...`` audits the user's configuration (issue 26, item 5).

Every declared hyper-parameter is a flag; the optimizer is built with the values given and audited
against the claim of that configuration; the output (text and JSON) shows the hyper-parameters
used; a bad value exits 2 with one line naming the flag and the allowed range, before any trial.
"""

from __future__ import annotations

import json

import pytest

from dpaudit.cli import EXIT_OK, EXIT_USAGE
from dpaudit.optimizers import make_optimizer
from tests.support.cli import one_line, run

USER = ["--noise-multiplier", "1.0", "--sample-rate", "0.01", "--steps", "200"]


@pytest.fixture
def no_trials(monkeypatch):
    """Fail the test if an audit starts (its arguments must be refused first)."""
    import dpaudit.audit.optimizer as opt_mod

    def forbidden(*a, **k):
        raise AssertionError("an audit started before the arguments were checked")

    monkeypatch.setattr(opt_mod, "audit_optimizer", forbidden)


def test_the_users_configuration_is_audited_against_its_own_claim(capsys):
    code, out, err = run(capsys, ["audit", "dp-sgd", *USER, "--trials", "300", "--seed", "3", "--json"])
    assert code == EXIT_OK, err
    doc = json.loads(out)
    expected = make_optimizer("dp-sgd", noise_multiplier=1.0, sample_rate=0.01, steps=200)
    assert doc["hyperparameters"] == expected.hp == doc["details"]["hyperparameters"]
    assert doc["hyperparameters_given"] == ["noise_multiplier", "sample_rate", "steps"]
    # the claim of THAT configuration (200 steps at q = 0.01, multiplier 1), not of the defaults
    claim = expected.claim(20).epsilon(1e-5)
    default_claim = make_optimizer("dp-sgd").claim(20).epsilon(1e-5)
    assert doc["epsilon_claimed"] == pytest.approx(claim, rel=1e-12)
    assert abs(claim - default_claim) > 1.0
    assert "q=0.01" in doc["details"]["claim"]["description"] and "200 x" in doc["details"]["claim"]["description"]


def test_text_output_shows_the_hyperparameters_used(capsys):
    code, out, _ = run(capsys, ["audit", "dp-sgd", *USER, "--trials", "300", "--seed", "3"])
    assert code == EXIT_OK
    line = next(ln for ln in out.splitlines() if ln.startswith("hyper-parameters"))
    assert "steps=200, noise_multiplier=1, sample_rate=0.01 (given)" in line
    assert "clip=1" in line and "(defaults)" in line
    assert "200 x PoissonSampled" in out


def test_bool_choice_and_optional_flags(capsys):
    code, out, err = run(capsys, ["audit", "dp-agd", "--epsilon", "0.5", "--delta", "1e-6", "--no-noise",
                                  "--noisy-max", "exponential", "--alpha-cap", "2", "--trials", "300", "--seed", "1",
                                  "--json"])
    assert code in (0, 1), err  # noise off: the claim is "no guarantee", so never a violation
    doc = json.loads(out)
    hp = doc["hyperparameters"]
    assert (hp["epsilon"], hp["delta"], hp["noise"], hp["noisy_max"], hp["alpha_cap"]) == (0.5, 1e-6, False,
                                                                                          "exponential", 2.0)
    assert doc["delta"] == 1e-6  # --delta of an optimizer declaring a delta: its target budget AND the audit's delta


@pytest.mark.parametrize("argv, flag, allowed", [
    (["dp-sgd", "--sample-rate", "1.5"], "--sample-rate", "(0, 1]"),
    (["dp-sgd", "--sample-rate", "0"], "--sample-rate", "(0, 1]"),
    (["dp-sgd", "--noise-multiplier", "-1"], "--noise-multiplier", "[0, inf)"),
    (["dp-sgd", "--noise-multiplier", "nan"], "--noise-multiplier", "[0, inf)"),
    (["dp-gd", "--steps", "2.5"], "--steps", "[0, inf)"),
    (["dp-gd", "--loss", "cosine"], "--loss", "'logistic', 'hinge', 'squared'"),
    (["dp-agd", "--delta", "0"], "--delta", "(0, 1)"),
    (["bias-reduced-sgd", "--epsilon", "2"], "--epsilon", "(0, 1]"),
    (["rgm-gd", "--alpha", "1"], "--alpha", "(1, inf)"),
])
def test_bad_values_exit_2_with_one_line_naming_the_flag_and_range(capsys, no_trials, argv, flag, allowed):
    code, out, err = run(capsys, ["audit", *argv])
    assert code == EXIT_USAGE and out == ""
    line = err.strip().splitlines()[-1]
    assert "Traceback" not in err and flag in line and allowed in line, err


def test_combinations_the_optimizer_refuses_name_the_flags(capsys, no_trials):
    code, _, err = run(capsys, ["audit", "dp-gd", "--clip", "inf", "--noise-multiplier", "1"])
    assert code == EXIT_USAGE
    assert one_line(err).startswith("dpaudit audit: error: --clip must be finite when --noise-multiplier > 0")
    code, _, err = run(capsys, ["audit", "rgm-gd", "--A", "1"])
    assert code == EXIT_USAGE and "A and B must be given together" in one_line(err)


def test_flags_of_one_optimizer_are_refused_by_another(capsys, no_trials):
    code, _, err = run(capsys, ["audit", "dp-gd", "--sample-rate", "0.1"])
    assert code == EXIT_USAGE and "--sample-rate" in err


def test_dpaudit_help_does_not_import_the_optimizers():
    import subprocess
    import sys

    code = ("import sys\nfrom dpaudit.cli import build_parser\nbuild_parser()\n"
            "print(sorted(m for m in sys.modules if m.startswith('dpaudit.optimizers.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
