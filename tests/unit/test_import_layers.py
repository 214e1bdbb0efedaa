"""The import layers hold: ``lint-imports`` keeps every contract of ``pyproject.toml``.

The contracts (``[tool.importlinter]``) say that ``mlsys.core`` imports nothing of the
faces, the shim or ``mlsys.compat`` (nor matplotlib, torch or Jupyter); that the
top-level packages and the modules inside ``mlsys.core`` form layers whose imports only
point down; and that no two sibling modules or packages anywhere in mlsys import each
other, directly or through others. A function-local import counts like any other.

Each import cycle the package once had is planted again in a copy of the package, and
the contract that must report it is checked to report it: the contracts cannot pass by
checking nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter")

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = {
    "core-below-faces": "mlsys.core imports nothing of the layers above it",
    "package-layers": "faces above the shim and compat, which sit above the core",
    "core-layers": "inside mlsys.core, one direction, ground first",
    "no-cycles": "no import cycle between sibling modules or packages anywhere in mlsys",
}


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("lint-imports")
    command = [str(script)] if script.exists() else [shutil.which("lint-imports") or ""]
    if not command[0]:
        pytest.skip("lint-imports is not installed")
    env = dict(os.environ, PYTHONPATH=str(tree))
    return subprocess.run(
        [*command, "--no-cache", "--no-logo"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _verdicts(output: str) -> dict[str, str]:
    found = {}
    for contract_id, name in CONTRACTS.items():
        for line in output.splitlines():
            if line.startswith(name + " "):
                found[contract_id] = line.rsplit(" ", 1)[1]
    return found


def test_every_contract_is_kept():
    out = _lint_imports(ROOT)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert _verdicts(out.stdout) == dict.fromkeys(CONTRACTS, "KEPT"), out.stdout[-4000:]


@pytest.fixture(scope="module")
def copy_of_tree(tmp_path_factory) -> Path:
    tree = tmp_path_factory.mktemp("layers")
    shutil.copytree(ROOT / "mlsys", tree / "mlsys", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


# The cycles the package had, each planted back as the import that made it (inside a
# function where it was a function-local import), and the contract that must break.
PLANTED = {
    "catalog reads compat": (
        "core/catalog/__init__.py",
        "def _planted():\n    from mlsys.compat.models import BookModel\n",
        ["core-below-faces", "package-layers", "no-cycles"],
    ),
    "provenance reads fmt": (
        "core/provenance.py",
        "def _planted():\n    from mlsys.core.fmt import fmt\n",
        ["core-layers", "no-cycles"],
    ),
    "traced reads provenance": (
        "core/traced.py",
        "def _planted():\n    from mlsys.core.provenance import origin_of\n",
        ["core-layers", "no-cycles"],
    ),
    "fmt reads fmt_book": (
        "core/fmt.py",
        "def _planted():\n    from mlsys.core.fmt_book import md\n",
        ["core-layers", "no-cycles"],
    ),
    "a half of the types reads the types": (
        "core/_types_systems.py",
        "def _planted():\n    from mlsys.core.types import Accelerator\n",
        ["core-layers", "no-cycles"],
    ),
    "the book reads a command": (
        "book/migration.py",
        "def _planted():\n    from mlsys.commands import migrate\n",
        ["package-layers", "no-cycles"],
    ),
    "the shim and compat read each other": (
        "constants.py",
        "def _planted():\n    from mlsys.compat.rules import parse_unit_suffix\n",
        ["no-cycles"],
    ),
}


@pytest.mark.parametrize("case", sorted(PLANTED))
def test_a_planted_cycle_is_reported_by_its_contract(case, copy_of_tree):
    relative, code, broken = PLANTED[case]
    target = copy_of_tree / "mlsys" / relative
    original = target.read_text("utf-8")
    try:
        target.write_text(original + "\n\n" + code, "utf-8")
        out = _lint_imports(copy_of_tree)
    finally:
        target.write_text(original, "utf-8")
    verdicts = _verdicts(out.stdout)
    assert out.returncode != 0, out.stdout[-3000:]
    for contract_id in CONTRACTS:
        expected = "BROKEN" if contract_id in broken else "KEPT"
        assert verdicts.get(contract_id) == expected, (contract_id, out.stdout[-3000:])


@pytest.mark.parametrize("new_module", ["core/queue_planted.py", "core/planted/__init__.py"])
def test_a_core_module_missing_from_the_layers_breaks_them(new_module, copy_of_tree):
    """``core-layers`` is exhaustive: every module and package directly inside
    ``mlsys.core`` must have its layer, so a new one cannot slip in unplaced (a module
    inside a package, such as ``formulas.queueing``, takes its package's layer)."""
    target = copy_of_tree / "mlsys" / new_module
    target.parent.mkdir(exist_ok=True)
    try:
        target.write_text('"""A module no layer names."""\n', "utf-8")
        out = _lint_imports(copy_of_tree)
    finally:
        target.unlink()
        if target.parent.name == "planted":
            target.parent.rmdir()
    assert out.returncode != 0, out.stdout[-3000:]
    expected = {c: "BROKEN" if c == "core-layers" else "KEPT" for c in CONTRACTS}
    assert _verdicts(out.stdout) == expected, out.stdout[-3000:]
    name = "mlsys.core." + new_module.split("/")[1].removesuffix(".py")
    assert f"not listed as layers:\n\n- {name}\n" in out.stdout, out.stdout[-3000:]
