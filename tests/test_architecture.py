"""The layering of docs/architecture.md: nothing low imports something high.

core -> mechanisms -> accounting (+ conversions) -> bounds -> optimizers -> audit
-> testing, report, interop -> cli. Package ``__init__`` facades (lazy tables) are exempt.
"""

import ast
import pathlib

import dpaudit

ORDER = ["core", "mechanisms", "accounting", "bounds", "optimizers", "audit", "testing", "report", "interop", "cli"]
RANK = {name: i for i, name in enumerate(ORDER)}
RANK["conversions"] = RANK["accounting"]  # facade module of dpaudit.accounting.conversions
ROOT = pathlib.Path(dpaudit.__file__).parent


def _layer(path: pathlib.Path) -> str | None:
    parts = path.relative_to(ROOT).parts
    return parts[0] if len(parts) > 1 else path.stem


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dpaudit."):
            yield node.module, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dpaudit."):
                    yield alias.name, node.lineno


def test_no_upward_imports():
    upward = []
    for path in ROOT.rglob("*.py"):
        layer = _layer(path)
        if path.name in ("__init__.py", "__main__.py") and path.parent == ROOT or layer not in RANK:
            continue
        for module, line in _imports(ast.parse(path.read_text())):
            target = module.split(".")[1]
            if target in RANK and RANK[target] > RANK[layer]:
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not upward, "imports against the layering:\n" + "\n".join(upward)


def test_every_module_is_in_a_known_layer():
    unknown = sorted({_layer(p) for p in ROOT.rglob("*.py")} - set(RANK) - {"__init__", "__main__", "_lazy"})
    assert not unknown, f"modules outside the documented layers: {unknown}"
