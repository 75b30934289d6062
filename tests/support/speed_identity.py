"""Representative audits whose full ``details`` must not change under speed work (issue 30 item 5).

``python -m tests.support.speed_identity`` records them (tests/support/speed_identity_reference.json) from the code as it
is; tests/audit/protocol/test_evaluation_speed_identity.py compares the current code against that record."""

import json
import math
import sys
from pathlib import Path

import numpy as np

REFERENCE = Path(__file__).with_name("speed_identity_reference.json")


def gaussian(x, rng, size):
    return x + rng.standard_normal(size)


def laplace(x, rng, size):
    return x + rng.laplace(0.0, 1.0, size)


def rr(x, rng, size):  # randomized response: categorical outputs
    flip = rng.random(size) < 0.3
    return np.where(flip, 1 - x, x)


def vec(x, rng, size):  # two-dimensional outputs
    return np.column_stack([x + rng.standard_normal(size), rng.standard_normal(size)])


def geometric(x, rng, size):  # two-sided geometric: integer outputs, many categories
    return x + rng.geometric(0.4, size) - rng.geometric(0.4, size)


def identity(batch):
    return np.asarray(batch, dtype=float).reshape(len(batch), -1)[:, 0]


def _clean(obj):
    """JSON text of ``obj`` (NaN and inf spelled out, tuples as lists, sorted keys): equal text, equal values."""
    def fix(o):
        if isinstance(o, float) and not math.isfinite(o):
            return repr(o)
        if isinstance(o, dict):
            return {str(k): fix(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [fix(v) for v in o]
        if isinstance(o, np.ndarray):
            return fix(o.tolist())
        if isinstance(o, np.generic):
            return fix(o.item())
        return o
    return json.loads(json.dumps(fix(obj), sort_keys=True, default=str))


def _key(res):
    return _clean({"epsilon_lower": res.epsilon_lower, "violation": res.violation, "method": res.method,
                   "details": res.details})


def cases():
    from dpaudit.audit import audit_mechanism, audit_optimizer, audit_training
    from dpaudit.audit.stats.rules import Bonferroni

    yield "fixed/heldout", lambda: audit_mechanism(gaussian, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=20_000,
                                                   seed=1, statistic=identity)
    yield "fixed/laplace-pure", lambda: audit_mechanism(laplace, 0.0, 1.0, epsilon=0.5, trials=20_000, seed=2,
                                                        statistic=identity)
    yield "fixed/bonferroni-grid", lambda: audit_mechanism(
        gaussian, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=10_000, seed=3, statistic=identity,
        threshold=Bonferroni(grid=tuple(np.linspace(-1.0, 4.0, 21).tolist())))
    yield "fixed/bonferroni", lambda: audit_mechanism(gaussian, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=10_000,
                                                      seed=4, statistic=identity, threshold="bonferroni")
    yield "fixed/gdp", lambda: audit_mechanism(gaussian, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=10_000, seed=5,
                                               statistic=identity, method="gdp")
    yield "auto/gaussian", lambda: audit_mechanism(gaussian, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=6_000,
                                                   seed=6)
    yield "auto-real/gaussian", lambda: audit_mechanism(gaussian, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=6_000,
                                                        seed=7, statistic="auto-real")
    yield "float-bits/laplace", lambda: audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, trials=6_000, seed=8,
                                                        statistic="float-bits")
    yield "auto/rr", lambda: audit_mechanism(rr, 0, 1, epsilon=0.5, trials=6_000, seed=9)
    yield "auto/vector", lambda: audit_mechanism(vec, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=6_000, seed=10,
                                                 statistic="auto-real")
    yield "auto/pairs", lambda: audit_mechanism(gaussian, None, None, epsilon=1.0, delta=1e-5, trials=4_000, seed=11,
                                                statistic="auto-real", pairs=[(0.0, 1.0), (0.0, 0.5)])
    yield "auto/gaussian-binned", lambda: audit_mechanism(gaussian, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=40_000,
                                                          seed=15)
    yield "empirical-lr/vector", lambda: audit_mechanism(vec, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=30_000,
                                                         seed=16, statistic="empirical-lr")
    yield "auto/geometric", lambda: audit_mechanism(geometric, 0, 1, epsilon=1.0, trials=8_000, seed=17)
    yield "optimizer/dp-sgd", lambda: audit_optimizer("dp-sgd", trials=1_500, seed=3)
    yield "training/many-runs", lambda: audit_training(lambda include, rng: float(include) + float(rng.normal()),
                                                       mode="many_runs", trials=600, seed=4, claim=(0.5, 1e-5))


def streamed_cases():
    """Audits whose selection runs stream beyond a cap of 2,000 kept runs (the cap monkeypatched)."""
    from dpaudit.audit import audit_mechanism

    yield "streamed/fixed", lambda: audit_mechanism(gaussian, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=20_000,
                                                    seed=12, statistic=identity)
    yield "streamed/auto", lambda: audit_mechanism(gaussian, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=20_000,
                                                   seed=13)
    yield "streamed/auto-real", lambda: audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, trials=20_000, seed=14,
                                                        statistic="auto-real")


STREAM_CAP = 2_000


def record() -> dict:
    import dpaudit.audit.protocol.two_sample as T

    out = {name: _key(f()) for name, f in cases()}
    old = T.SELECTION_CAP
    T.SELECTION_CAP = STREAM_CAP
    try:
        out.update({name: _key(f()) for name, f in streamed_cases()})
    finally:
        T.SELECTION_CAP = old
    return out


if __name__ == "__main__":
    REFERENCE.write_text(json.dumps(record(), sort_keys=True, indent=0) + "\n")
    sys.exit(0)
