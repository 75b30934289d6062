"""`dpaudit audit` and `dpaudit renyi` commands."""

import json
import sys

import pytest

from dpaudit.cli import main
from tests.support.cli import lying_optimizer


def test_audit_text_and_exit_code(capsys):
    assert main(["audit", "noisy-gd", "--trials", "400", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    for key in ("claimed epsilon", "epsilon lower", "method", "trials", "verdict"):
        assert key in out


def test_audit_json_only_json(capsys):
    assert main(["audit", "dp-gd", "--trials", "300", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {"epsilon_lower", "epsilon_claimed", "method", "trials", "violation"} <= set(d)


def test_audit_exit_1_on_violation(monkeypatch, capsys):
    """A violation (here forced through an optimizer whose claim is 0) gives exit status 1."""
    lying_optimizer(monkeypatch)
    assert main(["audit", "dp-gd", "--trials", "2000"]) == 1
    assert "VIOLATION" in capsys.readouterr().out


def test_audit_bad_arguments(capsys):
    with pytest.raises(SystemExit) as e:
        main(["audit", "nope"])
    assert e.value.code == 2
    assert main(["audit", "dp-gd", "--trials", "100", "--confidence", "1.5"]) == 2


def test_audit_plot(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    f = tmp_path / "roc.png"
    assert main(["audit", "dp-gd", "--trials", "300", "--plot", str(f)]) == 0
    assert f.stat().st_size > 1000


def test_audit_plot_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["audit", "dp-gd", "--trials", "300", "--plot", str(tmp_path / "x.png")]) == 2
    assert "matplotlib" in capsys.readouterr().err


def test_renyi_table_and_json(capsys, tmp_path):
    assert main(["renyi", "--steps", "3,10", "--alpha", "2", "--trials", "2000"]) == 0
    out = capsys.readouterr().out
    assert "Thm1" in out and "exact" in out
    assert main(["renyi", "--steps", "10", "--alpha", "2,5", "--trials", "2000", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {r["steps"] for r in d["rows"]} == {1, 2, 3, 5, 10}
    with pytest.raises(SystemExit) as e:
        main(["renyi", "--alpha", "0.5"])
    assert e.value.code == 2
    pytest.importorskip("matplotlib")
    f = tmp_path / "r.png"
    assert main(["renyi", "--steps", "5", "--trials", "1000", "--plot", str(f)]) == 0
    assert f.stat().st_size > 1000


def test_audit_one_run_method(capsys):
    import json as _json

    assert main(["audit", "dp-gd", "--method", "one-run", "--canaries", "300", "--seed", "2", "--json"]) == 0
    doc = _json.loads(capsys.readouterr().out)
    assert doc["method"].startswith("one-run") and doc["details"]["m"] == 300 and doc["trials"] == 1
    assert 0 <= doc["epsilon_lower"] <= doc["epsilon_claimed"]


@pytest.mark.parametrize("argv,fragment", [
    (["dp-gd", "--method", "one-run", "--plot", "x.png"], "plot"),
    (["dp-gd", "--method", "one-run", "--workers", "2"], "workers"),
    (["dp-gd", "--canaries", "10"], "canaries"),
    (["noisy-gd", "--method", "one-run"], "canar"),
])
def test_audit_one_run_bad_arguments(capsys, argv, fragment):
    assert main(["audit", *argv]) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1
