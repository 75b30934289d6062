"""A real Opacus DP-SGD loop audited with dpaudit's gradient canaries (issue 18; dpaudit.interop.opacus).

DP-SGD at sigma 1.5, sample rate 0.05, 300 steps (Opacus' PRV accountant: epsilon 2.90 at delta 1e-5): one run
certifies a positive bound below the claim; 10x too little noise and disabled clipping are caught."""

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install 'dpaudit[torch]')")
pytest.importorskip("opacus", reason="opacus is not installed (pip install 'dpaudit[torch]')")

import dpaudit  # noqa: E402
from dpaudit.interop.opacus import OpacusCanaries, opacus_claim  # noqa: E402

SIGMA, STEPS, BATCH, M = 1.5, 300, 75, 1000


def make_model():
    return torch.nn.Linear(10, 2)


def data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 10)).astype(np.float32)
    return X, (X[:, 0] > 0).astype(np.int64)


def training(noise_multiplier=SIGMA, privatize=None, **kw):
    X, y = data()
    opts = dict(canaries=M, noise_multiplier=noise_multiplier, max_grad_norm=1.0, batch_size=BATCH, steps=STEPS,
                lr=0.5, privatize=privatize)
    opts.update(kw)
    return OpacusCanaries(make_model, X, y, **opts)


@pytest.fixture(scope="module")
def claim():
    return opacus_claim(noise_multiplier=SIGMA, sample_rate=0.05, steps=STEPS)


def test_sample_rate_and_claim_are_opacus(claim):
    run = training()
    assert run.rows == 1500 and run.sample_rate == 0.05  # data rows + canary rows, whatever the coins
    assert claim.epsilon(1e-5) == pytest.approx(2.90, abs=0.01)  # the number (Opacus PRV)
    assert claim.neighbouring == "add_remove"


def test_gradient_canary_rows_have_the_recipes_gradients():
    """Per-sample gradients: an included canary's is canary_norm on its own coordinate only; an absent canary's
    and every canary row's gradient on the model are zero; data rows have none on the canary coordinates."""
    X, y = data(n=4)
    run = OpacusCanaries(make_model, X, y, canaries=3, noise_multiplier=1.0, max_grad_norm=1.0, batch_size=2,
                         steps=1, lr=0.1, canary_norm=7.0)
    from dpaudit.interop.opacus import _wrapper_class

    mask = np.array([True, False, True])
    ds = run._dataset(torch, mask)
    model = _wrapper_class()(make_model(), 3)
    loss_fn = lambda out, t: torch.nn.functional.cross_entropy(out, t, reduction="none")  # noqa: E731
    for i in range(len(ds)):
        x, c, t, w = (a.unsqueeze(0) for a in ds[i])
        model.zero_grad()
        out, cout = model(x, c)
        (torch.where(w > 0, w * loss_fn(out, t), torch.zeros(1)) + 7.0 * cout).sum().backward()
        g_canary = model.canary.weight.grad.numpy().ravel()
        g_body = np.concatenate([p.grad.numpy().ravel() for p in model.body.parameters()])
        if i < 4:  # data rows
            assert np.all(g_canary == 0)
        else:
            j = i - 4
            assert np.all(g_body == 0)
            want = np.zeros(3)
            want[j] = 7.0 if mask[j] else 0.0
            np.testing.assert_array_equal(g_canary, want)


def test_one_run_certifies_a_positive_bound_below_the_claim(claim):
    res = dpaudit.audit_training(training(), canaries=M, claim=claim, delta=1e-5, seed=0)
    assert 0.0 < res.epsilon_lower < claim.epsilon(1e-5)
    assert res.verdict == "consistent" and res.ceiling > claim.epsilon(1e-5)


def test_ten_times_too_little_noise_is_caught(claim):
    res = dpaudit.audit_training(training(noise_multiplier=SIGMA / 10), canaries=M, claim=claim, delta=1e-5, seed=0)
    assert res.verdict == "violation" and res.epsilon_lower > claim.epsilon(1e-5)


def _no_clipping(module, optimizer, data_loader):
    """A broken setup: Opacus' make_private, then per-sample clipping switched off (the noise still uses the
    claimed max_grad_norm)."""
    import opacus

    module, optimizer, data_loader = opacus.PrivacyEngine().make_private(
        module=module, optimizer=optimizer, data_loader=data_loader, noise_multiplier=SIGMA, max_grad_norm=1.0)
    clip = optimizer.clip_and_accumulate

    def unclipped():
        c, optimizer.max_grad_norm = optimizer.max_grad_norm, float("inf")
        try:
            clip()
        finally:
            optimizer.max_grad_norm = c

    optimizer.clip_and_accumulate = unclipped
    return module, optimizer, data_loader


def test_disabled_clipping_is_caught(claim):
    res = dpaudit.audit_training(training(privatize=_no_clipping), canaries=M, claim=claim, delta=1e-5, seed=0)
    assert res.verdict == "violation"


def test_input_canaries_and_many_runs():
    """Input canaries run and score by the negative loss; the many-runs adapter trains with / without one canary."""
    X, y = data(n=200)
    rng = np.random.default_rng(1)
    cX = rng.normal(size=(20, 10)).astype(np.float32) * 5
    cy = (cX[:, 0] < 0).astype(np.int64)  # mislabelled
    run = OpacusCanaries(make_model, X, y, canaries=20, noise_multiplier=1.0, max_grad_norm=1.0, batch_size=22,
                         steps=20, lr=0.5, kind="input", canary_X=cX, canary_y=cy)
    s = run(np.ones(20, dtype=bool), np.random.default_rng(0))
    assert s.shape == (20,) and np.all(s <= 0)
    np.testing.assert_array_equal(s, run(np.ones(20, dtype=bool), np.random.default_rng(0)))  # seeded
    one = training(canaries=1, steps=10, batch_size=25).many_runs()
    res = dpaudit.audit_training(one, mode="many_runs", trials=20, claim=(100.0, 1e-5), seed=0)
    assert res.trials == 20 and not res.violation


@pytest.mark.parametrize("kw, match", [
    (dict(canary_norm=0.5), "canary_norm"), (dict(kind="pixel"), "kind"), (dict(batch_size=10**6), "batch_size"),
    (dict(kind="input"), "canary_X"), (dict(canaries=0), "canaries"), (dict(steps=0), "steps"),
])
def test_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        training(**kw)


def test_package_imports_without_torch():
    """dpaudit and dpaudit.interop.opacus import with torch and opacus unavailable (lazy imports)."""
    code = ("import sys; sys.modules['torch'] = None; sys.modules['opacus'] = None\n"
            "import dpaudit, dpaudit.interop.opacus as o\n"
            "try:\n    o.require_torch()\nexcept ImportError as e:\n    print('ok', 'dpaudit[torch]' in str(e))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "ok True"
