"""Fuzz of the Opacus adapter (``dpaudit.interop.opacus``; issue 27, item 6).

``opacus_claim`` over every accountant Opacus offers with noise multipliers, sample rates and step counts of
every legal and illegal form, its curve queried from delta 1e-12 to 1 - 1e-12; ``OpacusCanaries`` built with
arguments of every form (no training: the wrapping's validation) and run with inclusion masks of every form on
a tiny model. Contract: tests/support/fuzz_contract.py (a valid claim, epsilon in [0, inf], or a named
ValueError/TypeError; no warning escapes -- Opacus' own notes included). Also: importing ``dpaudit.interop``
and this module loads neither torch nor opacus.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpaudit.interop.opacus import OpacusCanaries, opacus_claim
from tests.support.fuzz_contract import DEEP, FAST, ODD_VALUES, check_call


def test_importing_the_adapters_loads_no_framework():
    """``import dpaudit.interop`` (and each adapter module) stays light: torch, opacus, jax and the mechanism
    libraries are imported when a training or a sampler runs, never at import (checked in a fresh interpreter
    through ``sys.modules``)."""
    code = ("import sys, dpaudit.interop\n"
            "import dpaudit.interop.opacus, dpaudit.interop.jax, dpaudit.interop.canaries, dpaudit.interop.library\n"
            "import dpaudit.interop.diffprivlib, dpaudit.interop.opendp, dpaudit.interop.pydp, dpaudit.interop.tumult\n"
            "import dpaudit.interop.dp_accounting\n"
            "from dpaudit.interop import OpacusCanaries, opacus_claim, JaxCanaries\n"
            "heavy = ('torch', 'opacus', 'jax', 'jax_privacy', 'diffprivlib', 'opendp', 'pydp', 'tmlt', "
            "'dp_accounting', 'sklearn')\n"
            "print(sorted(m for m in heavy if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


NAMES = ("noise_multiplier", "sample_rate", "steps", "accountant", "delta")
#: Opacus' PRV accountant takes seconds a query (minutes for sigma 0.3, q 0.5 and 1000 steps: its own cost, not
#: the adapter's): the legal values stay where it answers quickly, the curve is queried at three deltas
claim_args = dict(
    sigma=st.sampled_from((1.0, 5.0)) | st.sampled_from(ODD_VALUES),
    q=st.sampled_from((1e-3, 0.5, 1.0)) | st.sampled_from(ODD_VALUES + (1.5,)),
    steps=st.sampled_from((1, 10)) | st.sampled_from(ODD_VALUES + (2.5, -3)),
    accountant=st.sampled_from(("prv", "rdp", "gdp", "PRV", "x", None)))


def _claim_case(sigma, q, steps, accountant):
    pytest.importorskip("opacus", reason="Opacus is not installed (pip install 'dpaudit[torch]')")
    check_call(lambda: opacus_claim(noise_multiplier=sigma, sample_rate=q, steps=steps, accountant=accountant),
               NAMES, deltas=CLAIM_DELTAS)


CLAIM_DELTAS = (1e-6, 0.5, 1 - 1e-12)


@FAST
@given(**claim_args)
def test_fuzz_opacus_claim(sigma, q, steps, accountant):
    _claim_case(sigma, q, steps, accountant)


@pytest.mark.slow
@DEEP
@given(**claim_args)
def test_fuzz_opacus_claim_deep(sigma, q, steps, accountant):
    _claim_case(sigma, q, steps, accountant)


@pytest.mark.parametrize("steps", [1e308, 2**53 + 2, 10**30])
@pytest.mark.parametrize("accountant", ["prv", "rdp", "gdp"])
def test_step_counts_beyond_2_to_53_are_refused_by_name(steps, accountant):
    # found by the deep fuzz: steps=1e308 with "gdp" reached Opacus, whose np.sqrt of the int raised a bare TypeError
    with pytest.raises(ValueError, match="steps"):
        opacus_claim(noise_multiplier=1.0, sample_rate=1e-3, steps=steps, accountant=accountant)


@pytest.mark.parametrize("accountant", ["prv", "rdp", "gdp"])
def test_opacus_claim_at_large_delta_is_zero_not_negative(accountant):
    """Opacus' RDP conversion answers epsilon = -0.693 at delta 0.5 (sigma 5, q 0.01, one step); its PRV
    accountant raises RuntimeError("Cannot compute epsilon") at delta 0.999 and its GDP accountant scipy's
    "f(a) and f(b) must have different signs"; every query warned ("Optimal order is the largest alpha", "GDP
    accounting is experimental"). Now: epsilon >= 0 (a negative epsilon reads as 0, the bound it proves), a
    ValueError naming delta where Opacus cannot answer, no warning."""
    pytest.importorskip("opacus", reason="Opacus is not installed (pip install 'dpaudit[torch]')")
    c = check_call(lambda: opacus_claim(noise_multiplier=5.0, sample_rate=0.01, steps=1, accountant=accountant),
                   NAMES, deltas=CLAIM_DELTAS)
    if accountant == "rdp":
        assert c.epsilon(0.5) == 0.0 and c.epsilon(0.999) == 0.0
    assert 0.0 < c.epsilon(1e-6) < 0.2
    if accountant == "gdp":
        assert "experimental" in c.description


def test_privacy_claim_reads_a_negative_source_epsilon_as_zero():
    from dpaudit.accounting.claim import PrivacyClaim

    c = PrivacyClaim(neighbouring="add_remove", description="", epsilon_fn=lambda d: -0.7,
                     delta_fn=lambda e: -1e-3)
    assert c.epsilon(0.5) == 0.0 and c.delta(1.0) == 0.0
    c = PrivacyClaim(neighbouring="add_remove", description="", epsilon_fn=lambda d: math.nan,
                     delta_fn=lambda e: 1.5)
    assert c.epsilon(0.5) == math.inf and c.delta(1.0) == 1.0


# --------------------------------------------------------------------------- OpacusCanaries' wrapping
def _model():
    import torch

    return torch.nn.Linear(3, 2)


X3 = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
Y3 = np.array([0, 1] * 4)
CANARY_NAMES = ("make_model", "X", "canaries", "noise_multiplier", "max_grad_norm", "batch_size", "steps", "lr",
                "kind", "canary_X", "canary_y", "canary_norm", "threads")
canary_args = dict(
    X=st.sampled_from(("good", "strings", "ragged", "none", "one_d", "empty", "short_y")),
    canaries=st.sampled_from((1, 4, 2.0)) | st.sampled_from(ODD_VALUES),
    sigma=st.sampled_from((0.0, 1.0)) | st.sampled_from(ODD_VALUES),
    clip=st.sampled_from((1.0, 1e-9)) | st.sampled_from(ODD_VALUES),
    batch=st.sampled_from((1, 4, 12, 100)) | st.sampled_from(ODD_VALUES),
    kind=st.sampled_from(("gradient", "input", "x", None)),
    canary_norm=st.sampled_from((None, 0.5, 10.0)) | st.sampled_from(ODD_VALUES))


def _x_form(form):
    return {"good": (X3, Y3), "strings": ([["a", "b", "c"]] * 8, Y3), "ragged": ([[1.0], [1.0, 2.0]], [0, 1]),
            "none": (None, Y3), "one_d": (np.ones(8), Y3), "empty": (np.zeros((0, 3)), np.zeros(0)),
            "short_y": (X3, Y3[:3])}[form]


def _canaries_case(X, canaries, sigma, clip, batch, kind, canary_norm):
    x, y = _x_form(X)
    check_call(lambda: OpacusCanaries(_model, x, y, canaries=canaries, noise_multiplier=sigma, max_grad_norm=clip,
                                      batch_size=batch, steps=1, lr=0.1, kind=kind, canary_norm=canary_norm),
               CANARY_NAMES + ("sample_rate",))


@FAST
@given(**canary_args)
def test_fuzz_opacus_canaries_arguments(X, canaries, sigma, clip, batch, kind, canary_norm):
    """Construction validates every argument by name (nothing is trained here)."""
    r = _canaries_case(X, canaries, sigma, clip, batch, kind, canary_norm)
    assert r is None or isinstance(r, (OpacusCanaries, Exception))


@pytest.mark.slow
@DEEP
@given(**canary_args)
def test_fuzz_opacus_canaries_arguments_deep(X, canaries, sigma, clip, batch, kind, canary_norm):
    _canaries_case(X, canaries, sigma, clip, batch, kind, canary_norm)


@pytest.mark.parametrize("X", ["strings", "ragged"])
def test_training_arrays_name_x(X):
    """Was numpy's own "could not convert string to float" / "inhomogeneous shape" (naming nothing)."""
    x, y = _x_form(X)
    with pytest.raises(ValueError, match="X must be"):
        OpacusCanaries(_model, x, y, canaries=2, noise_multiplier=1.0, max_grad_norm=1.0, batch_size=2, steps=1,
                       lr=0.1)


@pytest.mark.parametrize("mask", [[True, False], [1, 0], np.array([1.0, 0.0]), [[True, False]], [True], [], None])
def test_opacus_run_with_masks_of_every_form(mask):
    """A mask of the right size in any form trains (scores: one finite float per canary); the wrong size is a
    ValueError naming inclusion_mask."""
    pytest.importorskip("opacus", reason="Opacus is not installed (pip install 'dpaudit[torch]')")
    run = OpacusCanaries(_model, X3, Y3, canaries=2, noise_multiplier=1.0, max_grad_norm=1.0, batch_size=4, steps=1,
                         lr=0.1)
    out = check_call(lambda: run(mask, np.random.default_rng(0)), ("inclusion_mask",))
    if np.asarray(mask, dtype=object).size == 2:
        assert isinstance(out, np.ndarray) and out.shape == (2,), out
    else:
        assert isinstance(out, ValueError), out
