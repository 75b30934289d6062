"""Building the CLI parser stays light (issue 16: imports hoisted to module level must not pull the
audit, the PLD accountant or scipy.stats into ``dpaudit --help``)."""

import subprocess
import sys

HEAVY = ("dpaudit.audit.", "dpaudit.accounting.pld", "dpaudit.testing.", "scipy.stats", "matplotlib")


def test_building_the_parser_imports_nothing_heavy():
    code = ("import sys\nfrom dpaudit.cli import build_parser\nbuild_parser()\n"
            f"print('\\n'.join(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", "heavy modules imported to build the parser:\n" + out.stdout
