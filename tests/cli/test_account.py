"""Tests of ``dpaudit account`` (dpaudit/cli/account.py)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from dpaudit import conversions as C
from dpaudit.cli import main


def run_cli(capsys, *argv):
    code = main(["account", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_gaussian_table(capsys):
    code, out, err = run_cli(capsys, "gaussian", "--sigma", "1", "--delta", "1e-5", "--accountant", "all")
    assert code == 0
    assert "rdp" in out and "zcdp" in out and "tcdp" in out and "pld" in out
    assert "order 5.4" in out  # the RDP order that produced epsilon
    assert "rho 0.5" in out
    assert "4.72839" in out and "4.72851" in out and "4.37718" in out  # zcdp, rdp, exact


def test_gaussian_json_values(capsys):
    code, out, err = run_cli(capsys, "gaussian", "--sigma", "1", "--delta", "1e-5", "--json")
    assert code == 0
    obj = json.loads(out)  # exactly one JSON object
    assert out.strip().count("\n") == 0
    res = obj["results"]
    assert res["rdp"]["epsilon"] == pytest.approx(4.728507067218, rel=1e-11)
    assert res["rdp"]["order"] == 5.4
    assert res["zcdp"]["epsilon"] == pytest.approx(4.728386984943, rel=1e-10)
    assert res["zcdp"]["rho"] == pytest.approx(0.5)
    assert res["tcdp"]["omega"] == "inf"
    assert res["exact"]["epsilon"] == pytest.approx(4.377178095681, rel=1e-10)
    if "skipped" not in res["pld"]:
        assert res["pld"]["lower"] <= res["pld"]["upper"]
        assert res["pld"]["upper"] >= 4.377178095681 * (1 - 1e-9)


def test_single_accountant_and_steps(capsys):
    code, out, _ = run_cli(capsys, "gaussian", "--sigma", "20", "--steps", "1000", "--delta", "1e-5",
                           "--accountant", "zcdp", "--json")
    assert code == 0
    obj = json.loads(out)
    assert list(obj["results"]) == ["zcdp"]
    assert obj["results"]["zcdp"]["epsilon"] >= 7.511275900745
    assert obj["results"]["zcdp"]["rho"] == pytest.approx(1000 / 800)


def test_subsampled_gaussian(capsys):
    pytest.importorskip("dpaudit.mechanisms.subsampled")
    code, out, _ = run_cli(capsys, "gaussian", "--sigma", "1.1", "--sample-rate", "0.01", "--steps", "1000",
                           "--delta", "1e-5", "--accountant", "rdp", "--json")
    assert code == 0
    res = json.loads(out)["results"]["rdp"]
    assert res["order"] == 9.6
    assert abs(res["epsilon"] - 1.71177009) < 1e-8


@pytest.mark.parametrize(
    "argv",
    [
        ["laplace", "--scale", "1", "--steps", "10"],
        ["pure", "--epsilon", "0.8"],
        ["exponential", "--epsilon", "1.0", "--steps", "3"],
    ],
)
def test_other_mechanisms(capsys, argv):
    code, out, _ = run_cli(capsys, *argv, "--delta", "1e-5", "--json", "--accountant", "all")
    assert code == 0
    res = json.loads(out)["results"]
    assert res["rdp"]["epsilon"] > 0
    assert res["zcdp"]["epsilon"] >= res["rdp"]["epsilon"] * 0.5


def test_ten_fold_laplace_value(capsys):
    code, out, _ = run_cli(capsys, "laplace", "--scale", "1", "--steps", "10", "--delta", "1e-5",
                           "--accountant", "rdp", "--json")
    eps = json.loads(out)["results"]["rdp"]["epsilon"]
    assert 9.98996 - 1e-3 <= eps <= 9.990335  # Mironov 2017, Prop. 6; dp_accounting 0.6.0 (RDP 9.99033, PLD 9.98996)


def test_calibration_mode(capsys):
    code, out, _ = run_cli(capsys, "gaussian", "--target-epsilon", "1", "--delta", "1e-5", "--accountant", "all",
                           "--json")
    assert code == 0
    res = json.loads(out)["results"]
    assert abs(res["exact"]["sigma"] - 3.7306316348) < 5e-11
    for name in ("rdp", "zcdp", "tcdp"):
        s = res[name]["sigma"]
        assert s >= res["exact"]["sigma"]
        assert C.zcdp_to_dp(0.5 / s**2, 1e-5) <= 1.0 or name == "rdp"
    code, out, _ = run_cli(capsys, "gaussian", "--target-epsilon", "1", "--delta", "1e-5", "--accountant", "zcdp")
    assert code == 0 and "sigma" in out and "zcdp" in out


def test_calibration_subsampled(capsys):
    pytest.importorskip("dpaudit.mechanisms.subsampled")
    code, out, _ = run_cli(capsys, "gaussian", "--target-epsilon", "1.711770166", "--delta", "1e-5", "--sample-rate", "0.01",
                           "--steps", "1000", "--accountant", "rdp", "--json")
    assert code == 0
    s = json.loads(out)["results"]["rdp"]["sigma"]
    assert abs(s - 1.1) < 1e-3


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["gaussian", "--sigma", "-1", "--delta", "1e-5"], "sigma"),
        (["gaussian", "--sigma", "nan", "--delta", "1e-5"], "sigma"),
        (["gaussian", "--sigma", "inf", "--delta", "1e-5"], "sigma"),
        (["gaussian", "--sigma", "1", "--delta", "1.5"], "delta"),
        (["gaussian", "--sigma", "1", "--delta", "0"], "delta"),
        (["gaussian", "--sigma", "1", "--delta", "nan"], "delta"),
        (["gaussian", "--sigma", "1", "--delta", "1e-5", "--sample-rate", "1.5"], "sample-rate"),
        (["gaussian", "--sigma", "1", "--delta", "1e-5", "--sample-rate", "-0.1"], "sample-rate"),
        (["gaussian", "--sigma", "1", "--delta", "1e-5", "--steps", "0"], "steps"),
        (["gaussian", "--sigma", "1", "--delta", "1e-5", "--steps", "2.5"], "steps"),
        (["gaussian", "--sigma", "1", "--delta", "1e-5", "--sensitivity", "0"], "sensitivity"),
        (["gaussian", "--delta", "1e-5"], "sigma"),
        (["laplace", "--delta", "1e-5"], "scale"),
        (["pure", "--delta", "1e-5"], "epsilon"),
        (["gaussian", "--sigma", "1"], "delta"),
        (["gaussian", "--target-epsilon", "-1", "--delta", "1e-5"], "target-epsilon"),
        (["laplace", "--scale", "1", "--target-epsilon", "1", "--delta", "1e-5"], "gaussian"),
        (["gaussian", "--sigma", "1", "--delta", "1e-5", "--accountant", "prv"], "accountant"),
        (["uniform", "--delta", "1e-5"], "MECHANISM|mechanism|choice"),
    ],
)
def test_bad_arguments_exit_2_one_line(capsys, argv, fragment):
    with pytest.raises(SystemExit) as exc_info:
        code = main(["account", *argv])
        raise SystemExit(code)
    assert exc_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = [line for line in err.strip().splitlines() if line]
    assert len(lines) == 1 or "usage" in err  # argparse prints usage + one error line
    import re

    assert re.search(fragment, lines[-1])


def test_console_script_subprocess():
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "account", "gaussian", "--sigma", "2", "--delta", "1e-6",
                           "--accountant", "rdp", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    obj = json.loads(proc.stdout)
    assert math.isfinite(obj["results"]["rdp"]["epsilon"])
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "account", "gaussian", "--sigma", "-1", "--delta", "1e-6"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1


def test_help(capsys):
    with pytest.raises(SystemExit) as exc_info:
        main(["account", "--help"])
    assert exc_info.value.code == 0
    out, _ = capsys.readouterr()
    assert "--target-epsilon" in out and "--accountant" in out


def test_target_epsilon_without_delta_uses_stated_default(capsys):
    """The CLI lists --delta and --target-epsilon as alternatives: calibration then uses delta = 1e-5
    and says so in the table and in the JSON (never silently)."""
    from dpaudit.accounting.calibration import calibrate_sigma
    from dpaudit.cli.account import DEFAULT_CALIBRATION_DELTA

    assert DEFAULT_CALIBRATION_DELTA == 1e-5
    code, out, _ = run_cli(capsys, "gaussian", "--target-epsilon", "1", "--accountant", "rdp")
    assert code == 0 and "default delta" in out and "1e-05" in out
    code, out, _ = run_cli(capsys, "gaussian", "--target-epsilon", "1", "--accountant", "rdp", "--json")
    doc = json.loads(out)
    assert doc["delta"] == 1e-5 and doc["parameters"]["delta_source"] == "default"
    assert doc["results"]["rdp"]["sigma"] == calibrate_sigma(1.0, 1e-5, accountant="rdp")
