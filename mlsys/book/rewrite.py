"""Import rewriting: point a book's ``mlsysim`` (and older ``mlsys``) imports at mlsys.

The textbook *Machine Learning Systems* (harvard-edge/cs249r_book) imports its own package
``mlsysim`` in its newest chapters: ``from mlsysim import *``, ``from mlsysim.core import
constants``, ``import mlsysim.core.constants as C``, ``from mlsysim.fmt import fmt``,
``from mlsysim.physics import ...``, ``from mlsysim.hardware.registry import Hardware``.
Its older chapters import a local ``mlsys`` package whose modules mlsys serves under the
same names, except ``mlsys.viz`` (now :mod:`mlsys.compat.viz`).

Two rules do the rewrite:

1. **Module paths** (:data:`IMPORT_MAP`): the longest matching prefix of whole dotted
   parts is replaced; ``from mlsysim.core.constants import *`` becomes
   ``from mlsys.constants import *``.
2. **Submodules imported by name** (:data:`SUBMODULES`): ``from mlsysim.core import
   constants, units`` names modules of the book's package, so each such name becomes an
   import of the mlsys module that serves it, bound to the same name:
   ``from mlsys import constants, constants as units``.

Any other module of the book's package (``mlsysim.core.types``, ``mlsysim.labs``) is
rewritten to the nearest mapped package (``mlsys``), so every rewrite names a module that
exists and a name mlsys lacks fails as ``ImportError: cannot import name ...``, naming
it. Only import lines change; every other byte stays.
"""

from __future__ import annotations

import re

__all__ = [
    "IMPORT_MAP",
    "SUBMODULES",
    "rewrite_targets",
    "rewrite_imports",
    "migrate_text",
]

# the book's registry packages: each holds a ``registry`` module whose names mlsys serves
# at its top level (``from mlsysim.hardware.registry import Hardware``)
_REGISTRY_PACKAGES = (
    "hardware",
    "models",
    "systems",
    "infrastructure",
    "platforms",
    "scenarios",
    "literature",
    "datasets",
    "ops",
    "sim",
)

# modules of the book's ``mlsysim.engine`` package whose names mlsys serves at its top level
# (``from mlsysim.engine.solver import DistributedModel``)
_ENGINE_MODULES = ("solver", "solvers", "engine", "scenarios", "results", "evaluation", "pipeline")

IMPORT_MAP: tuple[tuple[str, str], ...] = (
    ("mlsysim.core.constants", "mlsys.constants"),
    ("mlsysim.core.units", "mlsys.constants"),
    ("mlsysim.core.defaults", "mlsys.constants"),
    ("mlsysim.core.formulas", "mlsys.formulas"),
    ("mlsysim.core.hardware", "mlsys.hardware"),
    ("mlsysim.core.engine", "mlsys.compat.engine"),
    ("mlsysim.core", "mlsys"),
    ("mlsysim.fmt", "mlsys.formatting"),
    ("mlsysim.physics", "mlsys.compat.physics"),
    ("mlsysim.engine", "mlsys.compat"),
    # the engine's own modules: their solvers and scenarios are mlsys's top-level names
    *((f"mlsysim.engine.{module}", "mlsys") for module in _ENGINE_MODULES),
    ("mlsysim.viz", "mlsys.compat.viz"),
    *((f"mlsysim.{package}", "mlsys") for package in _REGISTRY_PACKAGES),
    ("mlsysim", "mlsys"),
    # the older era's own package: its modules keep their names, except the figures
    ("mlsys.viz", "mlsys.compat.viz"),
)
"""Old module path -> mlsys module (the longest matching prefix of whole dotted parts wins).

``mlsysim.core.units`` and ``mlsysim.core.defaults`` are served by :mod:`mlsys.constants`
(the shim holds the book's unit names, counts included, and its assumptions);
``mlsysim.engine`` by :mod:`mlsys.compat` (``Engine``, ``Scenarios``, ``calibration``) and its
modules (``mlsysim.engine.solver``, ...) by :mod:`mlsys`, whose top level serves their names.
"""

SUBMODULES: dict[str, dict[str, str]] = {
    "mlsysim": {
        "physics": "mlsys.compat.physics",
        "viz": "mlsys.compat.viz",
        "core": "mlsys",
        "engine": "mlsys.compat",
    },
    "mlsysim.core": {
        "constants": "mlsys.constants",
        "units": "mlsys.constants",
        "defaults": "mlsys.constants",
        "formulas": "mlsys.formulas",
        "hardware": "mlsys.hardware",
        "engine": "mlsys.compat.engine",
    },
}
"""Package -> {submodule name -> mlsys module}: names a ``from PACKAGE import name`` line
binds to a *module* of the book's package. ``from mlsysim import fmt`` binds the book's
formatting *function* (the package re-exports it), so ``fmt`` is absent here: mlsys's top
level serves that function under the same name."""


def rewrite_targets() -> list[str]:
    """Every mlsys module a rewrite can produce (each must import).

    Returns
    -------
    list of str
        Sorted, without duplicates.
    """
    targets = {new for _old, new in IMPORT_MAP}
    targets |= {new for names in SUBMODULES.values() for new in names.values()}
    return sorted(targets)


_IMPORT_LINE = re.compile(
    r"^(?P<indent>\s*)(?P<kw>from|import)\s+(?P<mod>[A-Za-z_][\w.]*)(?P<rest>.*)$"
)
_FROM_NAMES = re.compile(r"^\s+import\s+(?P<names>[^()#;\\]+?)\s*(?P<tail>(#.*)?)$")
_NAME = re.compile(r"^(?P<name>\w+)(\s+as\s+(?P<alias>\w+))?$")
_FENCE_OPEN = re.compile(r"^\s*```+\s*\{python[^}]*\}")
_FENCE_CLOSE = re.compile(r"^\s*```+\s*$")


def _new_module(module: str) -> str:
    best = ""
    for old, _new in IMPORT_MAP:
        if (module == old or module.startswith(old + ".")) and len(old) > len(best):
            best = old
    if not best:
        return module
    new = dict(IMPORT_MAP)[best]
    rest = module[len(best) :]
    return new if best.startswith("mlsysim") and rest else new + rest


def _split_from(module: str, names_text: str, indent: str) -> str | None:
    """``from PACKAGE import a, b as c`` with submodule names, as one line of statements."""
    modules = SUBMODULES.get(module)
    if not modules:
        return None
    names = [n.strip() for n in names_text.split(",") if n.strip()]
    parsed = [_NAME.match(n) for n in names]
    if any(p is None for p in parsed) or not any(p["name"] in modules for p in parsed if p):
        return None
    plain: list[str] = []
    statements: list[str] = []
    for p in parsed:
        assert p is not None
        name, alias = p["name"], p["alias"] or p["name"]
        if name not in modules:
            plain.append(name if alias == name else f"{name} as {alias}")
            continue
        parent, _, leaf = modules[name].rpartition(".")
        statements.append(
            f"from {parent} import {leaf}" + ("" if leaf == alias else f" as {alias}")
        )
    if plain:
        statements.insert(0, f"from {_new_module(module)} import {', '.join(plain)}")
    return indent + "; ".join(statements)


def _rewrite_line(line: str) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    match = _IMPORT_LINE.match(body)
    if match is None:
        return line
    module, rest = match["mod"], match["rest"]
    if match["kw"] == "from":
        names = _FROM_NAMES.match(rest)
        if names is not None:
            split = _split_from(module, names["names"], match["indent"])
            if split is not None:
                tail = f"  {names['tail']}" if names["tail"] else ""
                return split + tail + ending
    new = _new_module(module)
    if new == module:
        return line
    bare = not rest.lstrip().startswith(("as ", ","))
    if match["kw"] == "import" and module.split(".")[0] == "mlsysim" and bare:
        if module == "mlsysim":
            # `import mlsysim` keeps the name the chapter uses: mlsysim.Q_(...) works
            rest = " as mlsysim" + rest
        else:
            # `import mlsysim.core.constants` binds `mlsysim`; keep that name bound
            return f"{match['indent']}import {new}; import mlsys as mlsysim{rest}{ending}"
    return f"{match['indent']}{match['kw']} {new}{rest}{ending}"


def rewrite_imports(source: str) -> str:
    """Rewrite the module path of every import line of Python source.

    Parameters
    ----------
    source : str
        Python code (a ``.py`` file or one code cell).

    Returns
    -------
    str
        The same text with only ``import``/``from`` lines changed (:data:`IMPORT_MAP`,
        :data:`SUBMODULES`); the number of lines never changes.

    Examples
    --------
    >>> rewrite_imports("from mlsysim.fmt import fmt\\nx = 1\\n")
    'from mlsys.formatting import fmt\\nx = 1\\n'
    >>> rewrite_imports("from mlsysim.core import constants\\n")
    'from mlsys import constants\\n'
    """
    return "".join(_rewrite_line(line) for line in source.splitlines(keepends=True))


def migrate_text(text: str, suffix: str) -> str:
    """Migrate one file's text: every line of a ``.py``, code-cell lines of a ``.qmd``.

    Parameters
    ----------
    text : str
        File content.
    suffix : str
        ``".py"`` or ``".qmd"`` (prose of a ``.qmd`` is never touched).

    Returns
    -------
    str
        The migrated text.
    """
    if suffix == ".py":
        return rewrite_imports(text)
    out: list[str] = []
    in_cell = False
    for line in text.splitlines(keepends=True):
        if not in_cell and _FENCE_OPEN.match(line):
            in_cell = True
        elif in_cell and _FENCE_CLOSE.match(line):
            in_cell = False
        elif in_cell:
            line = _rewrite_line(line)
        out.append(line)
    return "".join(out)
