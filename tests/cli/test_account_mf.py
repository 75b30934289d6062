"""``dpaudit account mf``: matrix-factorization (DP-FTRL) runs from the command line."""

from __future__ import annotations

import json

import pytest

from dpaudit.accounting.matrix_mechanism import banded_cyclic_poisson
from dpaudit.conversions import gaussian_epsilon
from dpaudit.mechanisms.mf_optimize import optimize_banded_toeplitz
from dpaudit.mechanisms.mf_participation import Participation
from tests.support.cli import one_line, run


def test_banded_run_table(capsys):
    code, out, err = run(capsys, ["account", "mf", "--strategy", "banded", "--bands", "4", "--steps", "32",
                                  "--epochs", "4", "--noise-multiplier", "4", "--delta", "1e-6"])
    assert code == 0, err
    assert "sens(C) = 2 (exact" in out  # 4 bands <= 8 batches: sqrt(4) orthogonal participations
    assert "mu = 0.5" in out and "x DP-SGD's" in out
    exact = gaussian_epsilon(4.0, 1e-6, 2.0)
    assert f"{exact:.6g}" in out  # the exact row and the PLD bracket


def test_json_object_and_values(capsys):
    code, out, _ = run(capsys, ["account", "mf", "--strategy", "blt", "--buffers", "2", "--steps", "32",
                                "--min-sep", "8", "--noise-multiplier", "3", "--delta", "1e-5", "--accountant",
                                "pld,exact", "--json"])
    assert code == 0
    obj = json.loads(out)
    assert out.strip().count("\n") == 0
    assert obj["mechanism"] == "mf" and obj["sensitivity_exact"] is True
    assert obj["results"]["exact"]["epsilon"] == pytest.approx(
        gaussian_epsilon(3.0, 1e-5, obj["strategy_sensitivity"]), rel=1e-6)
    assert obj["results"]["pld"]["upper"] >= obj["results"]["exact"]["epsilon"] * (1 - 1e-9)
    assert 0 < obj["prefix_sum_error"]["rmse_ratio_to_identity_same_epsilon"] < 1


def test_amplified_banded_run_is_the_reduction(capsys):
    code, out, _ = run(capsys, ["account", "mf", "--bands", "4", "--steps", "32", "--epochs", "4",
                                "--noise-multiplier", "2", "--sample-rate", "0.2", "--delta", "1e-5", "--accountant", "rdp",
                                "--json"])
    assert code == 0
    obj = json.loads(out)
    strategy = optimize_banded_toeplitz(32, 4, Participation.fixed_epoch(4)).strategy
    ref = banded_cyclic_poisson(strategy, 2.0, 0.2, groups=8)
    assert obj["compositions"] == ref.count == 4
    assert obj["results"]["rdp"]["epsilon"] == pytest.approx(ref.epsilon(1e-5, "rdp"), rel=1e-9)


@pytest.mark.parametrize("argv, needle", [
    (["--steps", "64", "--epochs", "3", "--noise-multiplier", "2", "--delta", "1e-5"], "--epochs must divide"),
    (["--steps", "64", "--noise-multiplier", "2"], "--delta"),
    (["--epochs", "4", "--noise-multiplier", "2", "--delta", "1e-5"], "--steps"),
    (["--steps", "64", "--epochs", "4", "--delta", "1e-5"], "--noise-multiplier"),
    (["--steps", "64", "--epochs", "4", "--sigma", "1", "--noise-multiplier", "2", "--delta", "1e-5"], "exactly one"),
    (["--steps", "64", "--epochs", "4", "--noise-multiplier", "2", "--delta", "1e-5", "--buffers", "3"], "--buffers"),
    (["--steps", "64", "--epochs", "4", "--min-sep", "4", "--noise-multiplier", "2", "--delta", "1e-5"], "--min-sep"),
    (["--steps", "64", "--max-participations", "2", "--noise-multiplier", "2", "--delta", "1e-5"], "--min-sep"),
    (["--steps", "64", "--epochs", "4", "--noise-multiplier", "2", "--delta", "1e-5", "--sample-rate", "0.1",
      "--strategy", "blt"], "--strategy banded"),
    (["--steps", "64", "--epochs", "4", "--noise-multiplier", "2", "--delta", "1e-5", "--sample-rate", "0.1",
      "--bands", "32"], "--bands <= steps/epochs"),
    (["--steps", "64", "--min-sep", "4", "--noise-multiplier", "2", "--delta", "1e-5", "--sample-rate", "0.1"], "--epochs"),
    (["--steps", "64", "--epochs", "4", "--noise-multiplier", "-2", "--delta", "1e-5"], "--noise-multiplier"),
    (["--steps", "64", "--epochs", "2.5", "--noise-multiplier", "2", "--delta", "1e-5"], "--epochs"),
    (["--steps", "64", "--epochs", "4", "--noise-multiplier", "2", "--delta", "1e-5", "--scale", "3"], "--scale"),
    (["--steps", "64", "--epochs", "4", "--noise-multiplier", "2", "--delta", "2"], "--delta"),
    (["--steps", "8", "--bands", "16", "--noise-multiplier", "2", "--delta", "1e-5"], "--bands"),
    (["--steps", "64", "--min-sep", "100", "--noise-multiplier", "2", "--delta", "1e-5"], "--min-sep"),
    (["--steps", "64", "--strategy", "tree", "--noise-multiplier", "2", "--delta", "1e-5"], "strategy"),
    (["--steps", "200000", "--noise-multiplier", "2", "--delta", "1e-5"], "--steps"),
])
def test_every_bad_argument_exits_2_with_one_line(capsys, argv, needle):
    code, out, err = run(capsys, ["account", "mf", *argv])
    assert code == 2 and out == ""
    assert needle in one_line(err)


def test_mf_flags_are_refused_for_other_mechanisms(capsys):
    code, _, err = run(capsys, ["account", "gaussian", "--sigma", "1", "--delta", "1e-5", "--bands", "3"])
    assert code == 2 and "--bands applies to MECHANISM mf" in one_line(err)
