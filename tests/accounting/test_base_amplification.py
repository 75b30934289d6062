"""Which accountants amplify subsampling, and the warning when one does not (issue 25, item 4).

b3a8540: ``ZCDPAccountant().compose(PoissonSampled(Gaussian(1), 0.01), 10_000).epsilon(1e-5)``
returned 5475.8 silently (the unsampled Gaussian's value; the RDP accountant gives 6.71).
"""

from __future__ import annotations

import json
import math
import warnings

import pytest

from dpaudit import (
    Gaussian,
    Laplace,
    NoAmplificationWarning,
    PoissonSampled,
    PureDP,
    SampledWithoutReplacement,
    calibrate_sigma,
    make_accountant,
)
from dpaudit.accounting.base import ACCOUNTANTS, accountant_class, amplifying_accountants

SAMPLED = PoissonSampled(Gaussian(1.0), 0.01)


def test_each_class_declares_it():
    flags = {name: accountant_class(name).amplifies_subsampling for name in ACCOUNTANTS}
    assert flags == {"rdp": True, "zcdp": False, "tcdp": False, "pld": True, "exact": True, "pure": True}
    assert amplifying_accountants() == ["rdp", "pld", "exact", "pure"]


@pytest.mark.parametrize("name", ["zcdp", "tcdp"])
def test_no_amplification_warns_and_names_the_accountants_that_amplify(name):
    with pytest.warns(NoAmplificationWarning) as rec:
        acc = make_accountant(name).compose(SAMPLED, 10_000)
    msg = str(rec[0].message)
    assert "ignores the sampling" in msg and "rdp, pld" in msg and "unsampled" in msg
    assert acc.epsilon(1e-5) == pytest.approx(5475.79, rel=1e-5)  # valid, only loose
    assert issubclass(NoAmplificationWarning, UserWarning)


@pytest.mark.parametrize("name", ["rdp", "pld", "exact", "pure", "zcdp", "tcdp"])
def test_no_warning_when_the_number_accounts_for_the_sampling(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoAmplificationWarning)
        acc = make_accountant(name, quiet=name in ("zcdp", "tcdp"))  # (quiet: internal use)
        if name == "pure":
            acc.compose(PoissonSampled(Laplace(1.0), 0.01), 10)  # Poisson: amplified pure epsilon
        elif name == "exact":
            acc.compose(PoissonSampled(Gaussian(1.0), 0.01))  # one sampled step: its own pair
        else:
            acc.compose(SAMPLED, 10)
        make_accountant(name).compose(Laplace(1.0))  # unsampled: nothing to say


def test_tcdp_warns_only_when_its_amplification_does_not_apply():
    wor = SampledWithoutReplacement(Gaussian(3.0, neighbouring="replace_one"), 0.01)
    assert wor.tcdp()[0] < wor.mechanism.tcdp()[0]  # the tCDP amplification theorem applies
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoAmplificationWarning)
        make_accountant("tcdp").compose(wor, 3)
    assert not accountant_class("tcdp").ignores_subsampling(wor)
    assert accountant_class("tcdp").ignores_subsampling(SAMPLED)
    assert accountant_class("zcdp").ignores_subsampling(wor)


def test_pure_dp_warns_for_sampling_without_replacement():
    wor = SampledWithoutReplacement(PureDP(1.0, neighbouring="replace_one"), 0.01)
    with pytest.warns(NoAmplificationWarning, match="PureDPAccountant"):
        acc = make_accountant("pure").compose(wor, 10)
    assert acc.epsilon(0.5) == pytest.approx(10.0)


def test_internal_callers_do_not_spew_it_and_label_it():
    from dpaudit.report import compare_accountants

    with warnings.catch_warnings():
        warnings.simplefilter("error", NoAmplificationWarning)
        s = calibrate_sigma(1.0, 1e-5, sample_rate=0.01, steps=100, accountant="zcdp")
        data = compare_accountants(SAMPLED, [1, 10], accountants=("rdp", "zcdp", "tcdp"), exact=False)
    assert math.isfinite(s)
    assert data["ignores_sampling"] == ["zCDP", "tCDP"] and "no amplification" in data["notes"]["zCDP"]


def test_cli_labels_from_the_class(capsys):
    from dpaudit.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("error", NoAmplificationWarning)
        code = main(["account", "gaussian", "--sigma", "1", "--q", "0.01", "--steps", "100", "--delta", "1e-5",
                     "--accountant", "rdp,zcdp,tcdp", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    res = out["results"]
    assert res["zcdp"]["ignores_sampling"] and res["tcdp"]["ignores_sampling"] and not res["rdp"]["ignores_sampling"]
