"""dpaudit.report: reports written, HTML self-contained with its plots (SVG), Markdown with PNG files."""

import base64
import builtins
import json
import re

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import dpaudit
from dpaudit.report import compare_accountants, dp_region_tpr, write_report
from dpaudit.report.cli_support import add_report_argument, maybe_write_report
from dpaudit.report.data import default_steps
from dpaudit.report.plots import ReportDependencyError

PNG = b"\x89PNG\r\n\x1a\n"


def fake_audit(violation=False):
    fpr = np.linspace(0, 1, 41)
    return {"epsilon_lower": 0.7, "epsilon_claimed": 1.0, "delta": 1e-5, "confidence": 0.95,
            "violation": violation, "method": "threshold test", "trials": 10_000,
            "details": {"roc": {"fpr": fpr.tolist(), "tpr": np.sqrt(fpr).tolist(), "orientation": ">"},
                        "threshold_test": {"fpr_upper": 0.05, "fnr_upper": 0.8},
                        "gdp": {"epsilon": 0.9, "mu_lower": 0.3, "assumption": "mu-GDP"}}}


def fake_renyi():
    rows = []
    for k in (1, 10, 100):
        for a in (2.0, 5.0):
            rows.append({"steps": k, "alpha": a, "estimate": 0.1 * a * k ** 0.3, "lower": 0.08 * a * k ** 0.3,
                         "upper": float("inf") if k == 100 else 0.12 * a * k ** 0.3, "exact": 0.1 * a * k ** 0.3,
                         "theorem1": 0.3 * a, "theorem2": 0.05 * a, "composition": 0.05 * a * k,
                         "trials": 1000, "method": "gaussian", "confidence": 0.95})
    return rows


@pytest.fixture(scope="module")
def accountants():
    return compare_accountants(dpaudit.Gaussian(3.0), [1, 10, 100, 1000], accountants=("rdp", "zcdp"))


def test_accountant_comparison_values(accountants):
    c = accountants["curves"]
    assert set(c) == {"RDP", "zCDP", "exact"} and accountants["exact_label"] == "exact"
    for lab in ("RDP", "zCDP"):
        # every accountant is an upper bound of the exact curve, and grows with T
        assert all(u >= e for u, e in zip(c[lab], c["exact"]))
        assert np.all(np.diff(c[lab]) > 0)
    # closed forms (Balle & Wang 2018; Bun & Steinke 2016) = dp_accounting 0.6.0 scaling: T Gaussians at sigma = one Gaussian at sigma / sqrt(T)
    assert c["exact"][0] == pytest.approx(dpaudit.conversions.gaussian_epsilon(3.0, 1e-5), rel=1e-12)


def test_accountant_comparison_bad_inputs():
    with pytest.raises(ValueError, match="accountants"):
        compare_accountants(dpaudit.Gaussian(1.0), [1], accountants=("nope",))
    with pytest.raises(ValueError, match="steps"):
        compare_accountants(dpaudit.Gaussian(1.0), [0])
    with pytest.raises(ValueError, match="delta"):
        compare_accountants(dpaudit.Gaussian(1.0), [1], delta=0.0)
    assert default_steps(1) == [1] and default_steps(1000)[0] == 1 and default_steps(1000)[-1] == 1000


def test_dp_region():
    fpr = np.array([0.0, 0.01, 0.5, 1.0])
    tpr = dp_region_tpr(fpr, 1.0, 1e-5)
    np.testing.assert_allclose(tpr[:2], 1e-5 + np.e * fpr[:2])
    assert tpr[2] == pytest.approx(1 - np.exp(-1) * (0.5 - 1e-5)) and tpr[3] == 1.0
    # eps = 0, delta = 0: nothing beats random guessing
    np.testing.assert_allclose(dp_region_tpr(fpr, 0.0, 0.0), fpr)
    with pytest.raises(ValueError, match="epsilon"):
        dp_region_tpr(fpr, -1.0, 0.0)


def _embedded_images(text):
    """The figures an HTML report embeds: SVG (vector, drawn without rasterising; see test_report_plots_cost.py)."""
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', text)]


SVG = b"<?xml"


def test_html_is_self_contained_with_three_plots(tmp_path, accountants):
    path = write_report(tmp_path / "r.html", audit=fake_audit(), renyi=fake_renyi(), accountants=accountants)
    text = path.read_text()
    images = _embedded_images(text)
    assert len(images) == 3 and all(p.startswith(SVG) and b"<svg" in p[:2000] and len(p) > 5000 for p in images)
    # self-contained: no external resources of any kind
    assert not re.search(r'(src|href)="(?!data:)', text) and "<link" not in text and "<script" not in text
    assert list(tmp_path.iterdir()) == [path]
    for needle in ("Consistent", "epsilon lower bound (95% confidence)", "GDP estimate (NOT a bound",
                   "Accountants compared", "Renyi divergence", "Thm 1 (upper)", "[0.160, 0.240]", "inf]"):
        assert needle in text, needle


def test_markdown_writes_pngs_beside_it(tmp_path, accountants):
    path = write_report(tmp_path / "sub" / "rep.md", audit=fake_audit(violation=True), accountants=accountants)
    text = path.read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert links == ["rep_files/roc.png", "rep_files/accountants.png"]
    for link in links:
        assert (path.parent / link).read_bytes().startswith(PNG)
    assert "**VIOLATION" in text and "| steps T | RDP | zCDP | exact |" in text


def test_audit_result_object_and_fmt_override(tmp_path):
    from dpaudit.audit import AuditResult

    d = fake_audit()
    res = AuditResult(**{k: d[k] for k in ("epsilon_lower", "epsilon_claimed", "delta", "confidence", "violation",
                                            "method", "trials")}, details=d["details"])
    path = write_report(tmp_path / "out.txt", audit=res, fmt="html")
    assert len(_embedded_images(path.read_text())) == 1


def test_bad_report_arguments(tmp_path):
    with pytest.raises(ValueError, match=r"\.html or \.md"):
        write_report(tmp_path / "r.pdf", audit=fake_audit())
    with pytest.raises(ValueError, match="nothing to report"):
        write_report(tmp_path / "r.html")
    with pytest.raises(ValueError, match="renyi"):
        write_report(tmp_path / "r.html", renyi=[{"steps": 1}])
    with pytest.raises(ValueError, match="accountants"):
        write_report(tmp_path / "r.html", accountants={"x": 1})
    with pytest.raises(ValueError, match="fmt"):
        write_report(tmp_path / "r.html", audit=fake_audit(), fmt="pdf")


def test_clear_error_without_matplotlib(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ReportDependencyError, match=r'pip install "dpaudit\[plot\]"'):
        write_report(tmp_path / "r.html", audit=fake_audit())
    assert isinstance(ReportDependencyError("x"), ImportError)


def test_cli_support(tmp_path, capsys):
    import argparse

    p = argparse.ArgumentParser()
    add_report_argument(p)
    assert maybe_write_report(p.parse_args([]), audit=fake_audit()) is None
    out = maybe_write_report(p.parse_args(["--report", str(tmp_path / "x.html")]), audit=fake_audit())
    assert out.exists() and "report written to" in capsys.readouterr().err


def test_renyi_table_small():
    from dpaudit.report import renyi_table

    rows = renyi_table(steps=(1, 10), alphas=(2.0,), trials=4000, seed=0)
    assert [r["steps"] for r in rows] == [1, 10]
    for r in rows:
        # exact value of the instance between Theorem 2 and Theorem 1 / composition (the instance of Theorem 2)
        assert r["theorem2"] <= r["exact"] <= min(r["theorem1"], r["composition"]) * (1 + 1e-12)
        assert r["lower"] <= r["estimate"] <= r["upper"]
    # closed form of the instance, alpha = 2, S_g = sigma = n = 1, eta = 0.1, K = 10: 0.458786515383
    assert rows[1]["exact"] == pytest.approx(0.458786515383, rel=1e-9)
    with pytest.raises(ValueError, match="step_size"):
        renyi_table(step_size=1.5)


@pytest.mark.slow
def test_cli_report_end_to_end(tmp_path, capsys):
    from dpaudit.cli import main

    out = tmp_path / "r.html"
    code = main(["report", "dp-sgd", "--trials", "2000", "--seed", "1", "--renyi-trials", "2000",
                 "--renyi-steps", "1,10", "--max-steps", "100", "--out", str(out), "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and payload["path"] == str(out)
    assert len(_embedded_images(out.read_text())) == 3


@pytest.mark.parametrize("name,hp", [("dp-gd", {}), ("dp-gd", {"neighbouring": "replace_one"}),
                                     ("dp-sgd", {}), ("dp-sgd", {"sample_rate": 0.3, "steps": 7})])
def test_optimizer_mechanism_reproduces_the_optimizers_rdp_claim(name, hp):
    """The report's accountant comparison uses the optimizer's per-step mechanism: composed
    `steps` times in the RDP accountant it must give exactly the optimizer's own claim."""
    from dpaudit import RDPAccountant
    from dpaudit.optimizers import make_optimizer
    from dpaudit.report.data import optimizer_mechanism

    opt = make_optimizer(name, **hp)
    mech, steps = optimizer_mechanism(opt)
    eps = RDPAccountant().compose(mech, steps).epsilon(1e-5)
    assert eps == pytest.approx(opt.claim(1000).epsilon(1e-5), rel=1e-12)
