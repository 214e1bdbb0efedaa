"""Import rewriting: point a book's ``mlsysim`` (and older ``mlsys``) imports at mlsys.

The textbook *Machine Learning Systems* (harvard-edge/cs249r_book) imports its own package
``mlsysim`` in its newest chapters: ``from mlsysim import *``, ``from mlsysim.core import
constants``, ``import mlsysim.core.constants as C``, ``from mlsysim.fmt import fmt``,
``from mlsysim.physics import ...``, ``from mlsysim.hardware.registry import Hardware``.
Its older chapters import a local ``mlsys`` package whose modules mlsys serves under the
same names, except ``mlsys.viz`` (now :mod:`mlsys.compat.viz`).

These rules do the rewrite:

1. **Module paths** (:data:`IMPORT_MAP`): the longest matching prefix of whole dotted
   parts is replaced; ``from mlsysim.core.constants import *`` becomes
   ``from mlsys.constants import *``.
2. **Submodules imported by name** (:data:`SUBMODULES`): ``from mlsysim.core import
   constants, units`` names modules of the book's package, so each such name becomes an
   import of the mlsys module that serves it, bound to the same name:
   ``from mlsys import constants, constants as units``.

3. **Names served elsewhere** (:data:`NAME_MAP`): the book's solver classes
   (``DistributedModel``, ``ServingModel``, ...) take the book's registry views and
   keywords; mlsys serves them under those call shapes in :mod:`mlsys.compat.solvers`.
   A ``from mlsysim... import`` line that lands on :mod:`mlsys` imports those names from
   there (``from mlsysim import DistributedModel, Models`` becomes ``from mlsys import
   Models; from mlsys.compat.solvers import DistributedModel``), and ``from mlsysim
   import *`` is followed, on the same line, by an import that rebinds them.
4. **The package itself**: ``import mlsysim`` (and ``import mlsysim.core.constants``,
   which binds the same name) binds ``mlsysim`` to :mod:`mlsys.book.package`, whose
   attributes follow rules 2 and 3: ``mlsysim.ServingModel`` is the solver of
   :mod:`mlsys.compat.solvers`, ``mlsysim.Hardware`` mlsys's.

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
    "NAME_MAP",
    "BOOK_STAR_FORMATTING",
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
    ("mlsysim.fmt", "mlsys.compat.fmt"),
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

_BOOK_SOLVERS = (
    "DistributedModel",
    "ServingModel",
    "SingleNodeModel",
    "ReliabilityModel",
    "SustainabilityModel",
    "EconomicsModel",
    "TrainingMemoryModel",
    "DataModel",
    "ServingCapacityModel",
    "TailLatencyModel",
    "ParallelismOptimizer",
    "PlacementOptimizer",
    "ScalingModel",
    "OrchestrationModel",
    "TransformationModel",
    "InferenceScalingModel",
    "BatchingOptimizer",
    "SynthesisSolver",
    "CheckpointModel",
    "ContinuousBatchingModel",
    "SensitivitySolver",
    "NetworkRooflineModel",
    "TopologyModel",
    "MoERoutingModel",
    "ResponsibleEngineeringModel",
    "CompressionModel",
    "EfficiencyModel",
    "WeightStreamingModel",
)

NAME_MAP: dict[str, str] = {name: "mlsys.compat.solvers" for name in _BOOK_SOLVERS}
"""Name -> mlsys module, for names a ``from mlsysim... import`` line would otherwise take
from :mod:`mlsys`'s top level: there they are mlsys's own solvers, which do not take the
book's registry views; :mod:`mlsys.compat.solvers` serves them under the book's call
shapes (the same physics)."""


_PACKAGE = "mlsys.book.package"
"""What ``import mlsysim`` binds: :mod:`mlsys.book.package`, whose attributes follow
:data:`NAME_MAP` and :data:`SUBMODULES` (``mlsysim.ServingModel`` is the book's call shape)."""

BOOK_STAR_FORMATTING: tuple[str, ...] = ("fmt", "fmt_int", "fmt_qty", "check", "MarkdownStr")
"""The formatting names the book's package re-exports at its top level
(``mlsysim/__init__.py`` imports them from ``mlsysim.fmt``), so a chapter whose only import
is ``from mlsysim import *`` calls ``fmt_int`` or ``check`` bare. mlsys's top level exports
``fmt`` alone; the rewrite of that star import rebinds all five from
:mod:`mlsys.compat.fmt`, the module ``mlsysim.fmt`` imports are pointed to."""


def rewrite_targets() -> list[str]:
    """Every mlsys module a rewrite can produce (each must import).

    Returns
    -------
    list of str
        Sorted, without duplicates.
    """
    targets = {new for _old, new in IMPORT_MAP}
    targets |= {new for names in SUBMODULES.values() for new in names.values()}
    targets |= set(NAME_MAP.values()) | {_PACKAGE}
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


def _target(module: str, name: str) -> str | None:
    """The mlsys module one name of ``from MODULE import name`` comes from, if not the line's."""
    modules = SUBMODULES.get(module, {})
    if name in modules:
        return modules[name]
    if module.split(".")[0] == "mlsysim" and _new_module(module) == "mlsys":
        return NAME_MAP.get(name)
    return None


def _split_from(module: str, names_text: str, indent: str) -> str | None:
    """``from PACKAGE import a, b as c`` whose names come from several mlsys modules.

    Names of submodules (:data:`SUBMODULES`) become imports of the mlsys modules serving
    them, names of :data:`NAME_MAP` imports from the module serving them; the rest stay on
    the line's own rewritten import. ``*`` keeps the star and rebinds every
    :data:`NAME_MAP` name after it (and, for the book's top-level package, every
    :data:`BOOK_STAR_FORMATTING` name). ``None`` when no name moves.
    """
    names = [n.strip() for n in names_text.split(",") if n.strip()]
    if names == ["*"]:
        if not (module.split(".")[0] == "mlsysim" and _new_module(module) == "mlsys"):
            return None
        moved = _group(NAME_MAP)
        if module == "mlsysim":
            moved += _group(dict.fromkeys(BOOK_STAR_FORMATTING, "mlsys.compat.fmt"))
        return indent + "; ".join([f"from {_new_module(module)} import *", *moved])
    parsed = [_NAME.match(n) for n in names]
    if any(p is None for p in parsed):
        return None
    targets = {p["name"]: _target(module, p["name"]) for p in parsed if p}
    if not any(targets.values()):
        return None
    plain: list[str] = []
    statements: list[str] = []
    elsewhere: dict[str, str] = {}
    for p in parsed:
        assert p is not None
        name, alias = p["name"], p["alias"] or p["name"]
        target = targets[name]
        if target is None:
            plain.append(name if alias == name else f"{name} as {alias}")
        elif name in SUBMODULES.get(module, {}):
            parent, _, leaf = target.rpartition(".")
            statements.append(
                f"from {parent} import {leaf}" + ("" if leaf == alias else f" as {alias}")
            )
        else:
            elsewhere[name if alias == name else f"{name} as {alias}"] = target
    statements.extend(_group(elsewhere))
    if plain:
        statements.insert(0, f"from {_new_module(module)} import {', '.join(plain)}")
    return indent + "; ".join(statements)


def _group(names: dict[str, str]) -> list[str]:
    """``from MODULE import a, b`` statements for {name (or "name as alias") -> MODULE}."""
    by_module: dict[str, list[str]] = {}
    for name, module in names.items():
        by_module.setdefault(module, []).append(name)
    return [f"from {module} import {', '.join(group)}" for module, group in by_module.items()]


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
        # `import mlsysim...` binds the name `mlsysim`: bind it to the module that answers
        # the package's attributes as the rules answer `from mlsysim import NAME`
        if module == "mlsysim":
            return f"{match['indent']}import {_PACKAGE} as mlsysim{rest}{ending}"
        return f"{match['indent']}import {new}; import {_PACKAGE} as mlsysim{rest}{ending}"
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
    'from mlsys.compat.fmt import fmt\\nx = 1\\n'
    >>> rewrite_imports("from mlsysim.core import constants\\n")
    'from mlsys import constants\\n'
    """
    source = _PAREN_FROM.sub(_rebind_parenthesized, source)
    return "".join(_rewrite_line(line) for line in source.splitlines(keepends=True))


_PAREN_FROM = re.compile(
    r"^(?P<head>[ \t]*from[ \t]+(?P<mod>mlsysim[\w.]*)[ \t]+import[ \t]*\()(?P<names>[^)]*)\)",
    re.MULTILINE,
)


def _rebind_parenthesized(match: re.Match[str]) -> str:
    """``from mlsysim import (a,\n b)``: rebind its :data:`NAME_MAP` names after the ``)``.

    The names stay in the parenthesized import (which the line rule points at
    :mod:`mlsys`); an import from the module serving them follows the closing parenthesis
    on its own line, so the number of lines never changes.
    """
    module = match["mod"]
    if _new_module(module) != "mlsys":
        return match[0]
    text = re.sub(r"#[^\n]*", "", match["names"])
    moved: dict[str, str] = {}
    for item in (n.strip() for n in text.split(",")):
        parsed = _NAME.match(item) if item else None
        if parsed and parsed["name"] in NAME_MAP:
            alias = parsed["alias"] or parsed["name"]
            key = parsed["name"] if alias == parsed["name"] else f"{parsed['name']} as {alias}"
            moved[key] = NAME_MAP[parsed["name"]]
    if not moved:
        return match[0]
    return match[0] + "; " + "; ".join(_group(moved))


BOOK_FIGURES_LINE = "from mlsys.book.migration import serve_book_figures; serve_book_figures()\n"
"""The line ``mlsys migrate --book-figures`` puts at the top of a chapter's first cell."""


def migrate_text(text: str, suffix: str, *, book_figures: bool = False) -> str:
    """Migrate one file's text: every line of a ``.py``, code-cell lines of a ``.qmd``.

    Parameters
    ----------
    text : str
        File content.
    suffix : str
        ``".py"`` or ``".qmd"`` (prose of a ``.qmd`` is never touched).
    book_figures : bool
        Also put :data:`BOOK_FIGURES_LINE` at the top of a ``.qmd``'s first code cell
        (after its ``#|`` options), once: the chapter then prints the book's own figure
        wherever mlsys records a difference
        (:func:`mlsys.book.migration.serve_book_figures`).

    Returns
    -------
    str
        The migrated text.
    """
    if suffix == ".py":
        return rewrite_imports(text)
    add_line = book_figures and BOOK_FIGURES_LINE.strip() not in text
    out: list[str] = []
    cell: list[str] | None = None
    for line in text.splitlines(keepends=True):
        if cell is None:
            out.append(line)
            if _FENCE_OPEN.match(line):
                cell = []
        elif _FENCE_CLOSE.match(line):
            code = rewrite_imports("".join(cell))
            if add_line:
                code, add_line = _with_first_line(code), False
            out.append(code + line)
            cell = None
        else:
            cell.append(line)
    if cell is not None:  # a cell left open at the end of the file
        out.append(rewrite_imports("".join(cell)))
    return "".join(out)


def _with_first_line(code: str) -> str:
    """``code`` with :data:`BOOK_FIGURES_LINE` after its leading ``#|`` option lines."""
    lines = code.splitlines(keepends=True)
    at = 0
    while at < len(lines) and lines[at].lstrip().startswith("#|"):
        at += 1
    return "".join([*lines[:at], BOOK_FIGURES_LINE, *lines[at:]])
