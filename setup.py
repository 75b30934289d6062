"""Build hook: ship the numerical proof checks inside the package.

``proofs_checks/*.py`` (one standalone script per lemma or theorem, run by ``dpaudit proofs``)
live at the top of the repository, where pytest collects them. A wheel copies them to
``dpaudit/_proofs_checks/`` so that ``dpaudit proofs`` also works from an installed package;
everything else is configured in pyproject.toml.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildPyWithProofChecks(build_py):
    def run(self):
        super().run()
        src = HERE / "proofs_checks"
        if not src.is_dir():  # building from an sdist made without them: nothing to ship
            return
        dest = Path(self.build_lib) / "dpaudit" / "_proofs_checks"
        dest.mkdir(parents=True, exist_ok=True)
        for script in sorted(src.glob("*.py")):
            if script.name != "conftest.py":
                self.copy_file(str(script), str(dest / script.name))


setup(cmdclass={"build_py": BuildPyWithProofChecks})
