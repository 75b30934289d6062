"""Smoke test of benchmarks/numbers_snapshot.py (--help without running; --diff on two small snapshots)."""

import json
import sys

import pytest

from tests.support import BENCHMARKS  # noqa: E402

sys.path.insert(0, str(BENCHMARKS))


def test_help_does_not_run(capsys):
    import numbers_snapshot

    with pytest.raises(SystemExit) as exc:
        numbers_snapshot.main(["--help"])
    assert exc.value.code == 0 and "--diff" in capsys.readouterr().out


def test_diff_reports_direction(tmp_path, capsys):
    import numbers_snapshot

    old = {"a": {"value": 2.0, "tighter": "down"}, "b": {"value": 1.0, "tighter": "up"},
           "c": {"value": 3.0, "tighter": "down"}, "d": {"value": None, "tighter": "none"}}
    new = {"a": {"value": 1.9, "tighter": "down"}, "b": {"value": 0.5, "tighter": "up"},
           "c": {"value": 3.0, "tighter": "down"}, "d": {"value": 4.0, "tighter": "none"}}
    (tmp_path / "o.json").write_text(json.dumps(old))
    (tmp_path / "n.json").write_text(json.dumps(new))
    assert numbers_snapshot.main(["--diff", str(tmp_path / "o.json"), str(tmp_path / "n.json")]) == 0
    out = capsys.readouterr().out
    assert "a\n" in out and "TIGHTER" in out.split("a\n")[1].splitlines()[0]
    assert "looser" in out.split("b\n")[1].splitlines()[0]
    assert "\nc\n" not in out and "3 of 4 values changed: 1 tighter, 1 looser" in out
