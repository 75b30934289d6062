"""dpaudit.audit.protocol.result: AuditResult and Estimate serialise to JSON."""

import json
import math

import numpy as np

from dpaudit.audit.protocol.result import AuditResult, Estimate


def test_result_to_dict_is_json():
    r = AuditResult(1.0, math.inf, 1e-5, 0.95, False, "m", 10, {"a": np.float64(2.0), "b": np.arange(3), "c": (1, 2)})
    json.dumps(r.to_dict())
    e = Estimate(1.0, 0.5, math.inf, "x", "none")
    assert json.loads(json.dumps(e.to_dict()))["upper"] == "inf"
