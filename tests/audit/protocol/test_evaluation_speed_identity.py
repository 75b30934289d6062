"""Speed work must not change a single number (issue 30 item 5): the full ``details`` of representative audits --
fixed statistic (held-out, Bonferroni on a fixed grid and on quantiles, pure DP, method="gdp"), the default contest
(two findings), auto-real, float-bits, categorical and vector outputs, several candidate pairs, an optimizer audit,
a many-runs training audit, and audits whose selection runs stream (the cap lowered) -- equal, as JSON text, to
the values recorded from the code before the speed changes (tests/support/speed_identity_reference.json, written by
tests/support/speed_identity.py)."""

import json

import pytest

from tests.support import speed_identity as C

REFERENCE = json.loads(C.REFERENCE.read_text())


@pytest.mark.parametrize("name,audit", list(C.cases()), ids=[n for n, _ in C.cases()])
def test_in_memory_audit_details_unchanged(name, audit):
    assert C._key(audit()) == REFERENCE[name]


@pytest.mark.parametrize("name,audit", list(C.streamed_cases()), ids=[n for n, _ in C.streamed_cases()])
def test_streamed_selection_audit_details_unchanged(name, audit, monkeypatch):
    import dpaudit.audit.protocol.two_sample as T

    monkeypatch.setattr(T, "SELECTION_CAP", C.STREAM_CAP)
    assert C._key(audit()) == REFERENCE[name]
