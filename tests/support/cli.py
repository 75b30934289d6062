"""Helpers shared by the command-line tests (tests/cli/ and a few others)."""

from __future__ import annotations

from dpaudit.cli import main


def run(capsys, argv):
    """(exit status, stdout, stderr) of ``dpaudit argv``; argparse's SystemExit counts as a status."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    """The single non-empty line of ``err`` (asserts there is exactly one and no traceback)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def lying_optimizer(monkeypatch, tmp_path=None):
    """Make the CLI's audit_optimizer audit an optimizer that claims epsilon = 0: a certified violation."""
    import dpaudit.audit.optimizer as opt_mod
    from dpaudit.accounting.claim import PrivacyClaim
    from dpaudit.optimizers import make_optimizer

    real = opt_mod.audit_optimizer

    def lying(name, **kw):
        o = make_optimizer(name) if isinstance(name, str) else name  # the CLI passes the built optimizer
        orig = o.run

        def run_(X, y, **k):
            r = orig(X, y, **k)
            r.claim = PrivacyClaim.approx_dp(0.0, 0.0, neighbouring=o.neighbouring, description="claims 0")
            return r

        o.run = run_
        return real(o, **kw)

    monkeypatch.setattr(opt_mod, "audit_optimizer", lying)
