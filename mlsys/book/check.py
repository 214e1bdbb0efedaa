"""The build check that refuses to publish a broken or stale number.

Two passes over a book's ``.qmd`` files:

static (fast, the default)
    Every ``{python}`` cell and inline expression is parsed with :mod:`ast`. Every name
    a chapter takes from mlsys (``from mlsys import X``, ``import mlsys.hardware as hw``
    then ``hw.H100``, ``mlsys.X``) is looked up in the *installed* package, without
    running the chapter: a name that does not exist is an error with did-you-mean
    suggestions; a deprecated one is a warning naming the new spelling. A module marks
    its deprecated names with a ``_DEPRECATED: dict[str, str]`` map (old -> new), or by
    raising a ``DeprecationWarning`` when the attribute is read; both are recognised.
    ``{{< include >}}`` files are spliced in where they stand, as Quarto does; an
    import inside ``try: ... except ImportError:`` is only a warning (it has a fallback);
    ``#| eval: false`` cells are shown, not run, and are not checked. An inline
    expression known to have an empty value (``check(...)`` while it returns ``""``,
    the literals ``""`` and ``None``) is an error: Quarto leaves it in the page as code.
executed (``--execute``)
    Each chapter runs in a Jupyter kernel exactly as Quarto runs it (see
    :mod:`mlsys.book.kernel`); a raising cell, a failing inline expression, and output
    that shows ``nan``, ``inf``, a raw pint repr, ``None`` or a traceback are errors, and
    so is an inline value whose text is empty. One kernel serves many chapters, each in
    a fresh namespace (see :func:`mlsys.book.kernel.execute_documents`).

Every finding carries the .qmd file, line and column (1-based lines of the .qmd, not of
the cell), a severity, a short code and a message.

Examples
--------
>>> from mlsys.book.qmd import parse_qmd
>>> doc = parse_qmd("```{python}\\nfrom mlsys import NoSuchModel\\n```\\n", "ch.qmd")
>>> [f.format() for f in check_document_static(doc)][0].split(": error: ")[0]
'ch.qmd:2:19'
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import importlib
import importlib.util
import json
import os
import pkgutil
import re
import types
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsys.book.findings import Finding, display_path
from mlsys.book.qmd import CodeCell, IncludeError, QmdDocument, iter_steps, read_qmd

__all__ = [
    "Finding",
    "SKIP_DIRS",
    "find_qmd_files",
    "quarto_input_files",
    "check_document_static",
    "check_static",
    "check_files",
    "check_paths",
    "format_human",
    "findings_to_json",
    "exit_status",
]

#: Directories never searched, besides those whose name starts with ``_`` or ``.``
#: (which Quarto does not render either: ``_book``, ``_site``, ``_freeze``, ``.quarto``).
SKIP_DIRS = frozenset({"node_modules", "venv", "env", "site-packages"})


# ---------------------------------------------------------------------------------------
# files


def _is_skipped_dir(name: str) -> bool:
    return name in SKIP_DIRS or name.startswith(("_", "."))


def find_qmd_files(paths: Iterable[str | Path]) -> list[Path]:
    """Every .qmd file named or found (recursively) under ``paths``.

    Like Quarto's own project scan, directories whose name starts with ``_`` or ``.``
    are not searched (nor those in :data:`SKIP_DIRS`); files starting with ``_`` are
    (they are includes, checked in place and on their own).

    Parameters
    ----------
    paths : iterable of str or Path
        Files and directories.

    Returns
    -------
    list of Path
        Sorted, without duplicates.

    Raises
    ------
    FileNotFoundError
        A path does not exist.
    """
    found: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            if p.suffix == ".qmd":
                found.add(p)
        elif p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not _is_skipped_dir(d))
                # regular files only: a FIFO named ch.qmd would block its reader forever
                found.update(
                    q for q in (Path(root) / f for f in files if f.endswith(".qmd")) if q.is_file()
                )
        else:
            raise FileNotFoundError(f"no such file or directory: {raw}")
    return sorted(found, key=lambda q: q.as_posix())


def quarto_input_files(environ: dict[str, str] | None = None) -> list[Path] | None:
    """The files Quarto is about to render, when called from a ``pre-render`` hook.

    Quarto runs pre-render scripts in the project directory and passes the input files
    (relative to the project directory, one per line) in ``QUARTO_PROJECT_INPUT_FILES``,
    or, when ``QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES`` names a file, in that file.

    Parameters
    ----------
    environ : dict, optional
        Environment (default: ``os.environ``).

    Returns
    -------
    list of Path or None
        The .qmd files listed; ``None`` outside a Quarto render or when the list is
        empty (as on the first pass of ``quarto preview``), meaning "check everything".
    """
    env = os.environ if environ is None else environ
    listing = None
    list_file = env.get("QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES")
    if list_file and Path(list_file).is_file():
        listing = Path(list_file).read_text(encoding="utf-8")
    if listing is None:
        listing = env.get("QUARTO_PROJECT_INPUT_FILES")
    if not listing or not listing.strip():
        return None
    base = Path(env.get("QUARTO_PROJECT_DIR") or ".")
    files = []
    for line in listing.splitlines():
        name = line.strip()
        if name.endswith(".qmd"):
            p = Path(name)
            files.append(p if p.is_absolute() else base / p)
    return files


_display_path = display_path  # the name the rest of this module uses


# ---------------------------------------------------------------------------------------
# the installed package, looked up once per process


@dataclass
class _Ref:
    """A value a chapter name stands for: a module, or an object inside the package."""

    path: str
    obj: Any

    @property
    def is_module(self) -> bool:
        return isinstance(self.obj, types.ModuleType)


@dataclass
class _Issue:
    severity: str
    code: str
    message: str


class _Index:
    """Imports modules and resolves attributes of the installed package, with caches."""

    def __init__(self, packages: Sequence[str]) -> None:
        self.packages = tuple(packages)
        self._modules: dict[str, types.ModuleType | BaseException] = {}
        self._attrs: dict[tuple[str, str], tuple[_Ref | None, list[_Issue]]] = {}

    def owns(self, module_name: str) -> bool:
        root = module_name.split(".")[0]
        return root in self.packages

    def module(self, name: str) -> types.ModuleType | BaseException:
        if name not in self._modules:
            static = _static_module(name, self.owns)
            if static is not None:
                self._modules[name] = static
                return static
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self._modules[name] = importlib.import_module(name)
            except Exception as exc:  # any failure is what the chapter would see
                self._modules[name] = exc
        return self._modules[name]

    def resolve_module(self, dotted: str) -> tuple[_Ref | None, list[_Issue]]:
        """Import ``dotted`` one component at a time, naming the first that is missing."""
        parts = dotted.split(".")
        ref: _Ref | None = None
        for i in range(len(parts)):
            name = ".".join(parts[: i + 1])
            mod = self.module(name)
            if isinstance(mod, types.ModuleType):
                ref = _Ref(name, mod)
                continue
            if isinstance(mod, ModuleNotFoundError) and mod.name == name and ref is not None:
                hint = _suggest(parts[i], _public_names(ref.obj))
                msg = f"module {ref.path!r} has no submodule {parts[i]!r}{hint}"
                return None, [_Issue("error", "unknown-module", msg)]
            if isinstance(mod, ModuleNotFoundError) and mod.name == name:
                return None, [_Issue("error", "unknown-module", f"no module named {name!r}")]
            msg = f"module {name!r} fails to import: {type(mod).__name__}: {mod}"
            return None, [_Issue("error", "import-failed", msg)]
        return ref, []

    def attribute(self, parent: _Ref, attr: str) -> tuple[_Ref | None, list[_Issue]]:
        key = (parent.path, attr)
        if key not in self._attrs:
            self._attrs[key] = self._attribute(parent, attr)
        return self._attrs[key]

    def _attribute(self, parent: _Ref, attr: str) -> tuple[_Ref | None, list[_Issue]]:
        obj = parent.obj
        path = f"{parent.path}.{attr}"
        issues: list[_Issue] = []
        if parent.is_module:
            deprecated = vars(obj).get("_DEPRECATED")
            if isinstance(deprecated, dict) and attr in deprecated:
                return self._deprecated(parent, attr, deprecated[attr])
        elif obj is _OPAQUE or not self._inside_package(obj):
            return None, []  # not ours, or read statically: nothing more to check
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                value = getattr(obj, attr)
        except AttributeError as exc:
            if parent.is_module and hasattr(obj, "__path__"):
                sub, sub_issues = self.resolve_module(path)
                if sub is not None:
                    return sub, []
                if sub_issues and sub_issues[0].code == "import-failed":
                    return None, sub_issues
            names = _public_names(obj)
            if attr in names:  # declared (in __all__ or a lazy map) but its module lacks it
                msg = f"{path} is exported but fails to import: AttributeError: {exc}"
                return None, [_Issue("error", "import-failed", msg)]
            kind = "module" if parent.is_module else "object"
            msg = f"{kind} {parent.path!r} has no attribute {attr!r}{_suggest(attr, names)}"
            return None, [_Issue("error", "unknown-name", msg)]
        except LookupError as exc:  # registries raise KeyError subclasses for unknown entries
            msg = f"{path}: {str(exc).strip(chr(34) + chr(39))}"
            return None, [_Issue("error", "unknown-name", msg)]
        except ImportError as exc:
            msg = f"{path} is exported but fails to import: {type(exc).__name__}: {exc}"
            return None, [_Issue("error", "import-failed", msg)]
        except Exception:
            return None, []  # a property that needs a real instance: cannot tell statically
        for w in caught:
            if issubclass(w.category, (DeprecationWarning, FutureWarning)):
                issues.append(_Issue("warning", "deprecated", str(w.message)))
                break
        return _Ref(path, value), issues

    def _deprecated(self, parent: _Ref, attr: str, entry: Any) -> tuple[_Ref | None, list[_Issue]]:
        """A name listed in its module's ``_DEPRECATED`` map (old -> new, or (new, ...))."""
        new = entry[0] if isinstance(entry, (tuple, list)) and entry else entry
        new = str(getattr(new, "__name__", new))
        new_path = new if "." in new else f"{parent.path}.{new}"
        message = f"{parent.path}.{attr} is deprecated; use {new_path}"
        value: Any = None
        try:
            # The module's own warning may say more (a changed signature, say); the new
            # spelling's module may not exist yet, and then the map alone names it.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                value = getattr(parent.obj, attr)
        except Exception:  # `caught` is bound by then: the with-statement ran
            value = None
        for w in caught:
            if issubclass(w.category, (DeprecationWarning, FutureWarning)) and new in str(
                w.message
            ):
                message = str(w.message)
                break
        ref = _Ref(f"{parent.path}.{attr}", value) if value is not None else None
        return ref, [_Issue("warning", "deprecated", message)]

    def _inside_package(self, obj: Any) -> bool:
        owner = obj if isinstance(obj, type) else type(obj)
        return self.owns(getattr(owner, "__module__", "") or "")


# Optional heavy dependencies: a module that imports one (directly or through another
# module of the package) is read from its source instead of imported, so a static check
# of a chapter that uses ``mlsys.emulate`` does not spend a second importing torch.
HEAVY_DEPENDENCIES = frozenset({"torch", "jax", "tensorflow"})
_OPAQUE = object()  # stands for a name defined in a statically read module
_HEAVY_CACHE: dict[str, bool] = {}


def _source_tree(name: str) -> tuple[Any, ast.Module] | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        return spec, ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None


def _imported_modules(tree: ast.Module, package: str) -> list[str]:
    """Modules a source imports at import time (top level, incl. try/if blocks)."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                out.append(f"{base}.{node.module}" if node.module else base)
            elif node.module:
                out.append(node.module)
    return out


def _function_scoped(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            ids.update(id(n) for n in ast.walk(node) if n is not node)
    return ids


def _imports_heavy(name: str, owns: Any, seen: frozenset[str] = frozenset()) -> bool:
    if name in _HEAVY_CACHE:
        return _HEAVY_CACHE[name]
    found = _source_tree(name)
    heavy = False
    if found is not None:
        spec, tree = found
        package = name if spec.submodule_search_locations else name.rpartition(".")[0]
        inner = _function_scoped(tree)
        top = [n for n in ast.walk(tree) if id(n) not in inner]
        for mod in _imported_modules(
            ast.Module(
                body=[n for n in top if isinstance(n, (ast.Import, ast.ImportFrom))],
                type_ignores=[],
            ),
            package,
        ):
            if mod.split(".")[0] in HEAVY_DEPENDENCIES or (
                owns(mod)
                and mod not in seen
                and mod != name
                and _imports_heavy(mod, owns, seen | {name})
            ):
                heavy = True
                break
    _HEAVY_CACHE[name] = heavy
    return heavy


def _static_module(name: str, owns: Any) -> types.ModuleType | None:
    """A stand-in module holding the top-level names of ``name``'s source, or None.

    Used only for the package's own modules that import a heavy optional dependency
    and define no module ``__getattr__`` (whose names a reading of the source cannot
    know).
    """
    if not owns(name) or name.split(".")[0] in HEAVY_DEPENDENCIES:
        return None
    if not _imports_heavy(name, owns):
        return None
    spec, tree = _source_tree(name)  # type: ignore[misc]
    names: set[str] = set()
    exported: Any = ()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                with contextlib.suppress(ValueError, TypeError, SyntaxError):
                    exported = ast.literal_eval(node.value) if node.value else ()
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return None
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    if "__getattr__" in names:
        return None
    stub = types.ModuleType(name, f"static reading of {spec.origin}")
    for attr in names:
        if not attr.startswith("__"):
            setattr(stub, attr, _OPAQUE)
    stub.__all__ = [str(n) for n in exported]
    if spec.submodule_search_locations:
        stub.__path__ = list(spec.submodule_search_locations)
    return stub


def _public_names(obj: Any) -> list[str]:
    names: set[str] = set()
    with contextlib.suppress(Exception):  # a broken __dir__ only costs suggestions
        names.update(dir(obj))
    if isinstance(obj, types.ModuleType):
        names.update(getattr(obj, "__all__", ()) or ())
        deprecated = vars(obj).get("_DEPRECATED")
        if isinstance(deprecated, dict):
            names.difference_update(deprecated)
        if hasattr(obj, "__path__"):
            names.update(m.name for m in pkgutil.iter_modules(obj.__path__))
    return sorted(n for n in names if not n.startswith("_"))


def _suggest(name: str, candidates: Sequence[str]) -> str:
    """``"; did you mean 'A' or 'B'?"``, or ``""`` when nothing is close."""
    best = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    if not best:
        lowered = {c.lower(): c for c in candidates}
        best = [lowered[c] for c in difflib.get_close_matches(name.lower(), lowered, 3, 0.5)]
    if not best:
        return ""
    return "; did you mean " + " or ".join(repr(b) for b in best) + "?"


# ---------------------------------------------------------------------------------------
# walking a chapter's code


def _char_col(line_text: str, byte_offset: int) -> int:
    """ast column offsets count UTF-8 bytes; messages count characters."""
    return len(line_text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))


class _Location:
    """Maps positions inside one piece of code to .qmd line and column."""

    def __init__(self, code: str, first_line: int, first_col: int, same_line: bool) -> None:
        self.lines = code.split("\n")
        self.first_line = first_line
        self.first_col = first_col  # 1-based column of the code's first character
        self.same_line = same_line  # inline expression: columns offset on every line

    def at(self, lineno: int, byte_col: int) -> tuple[int, int]:
        text = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        col = _char_col(text, byte_col)
        return self.first_line + lineno - 1, self.first_col + col


def _mask_magics(code: str) -> str | None:
    """Blank IPython line magics and shell escapes; ``None`` for a cell magic cell."""
    out = []
    for line in code.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("%%") and not any(s.strip() for s in out):
            return None
        if stripped.startswith(("%", "!")):
            line = ""
        out.append(line)
    return "\n".join(out)


def _target_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Checker(ast.NodeVisitor):
    """Resolves mlsys names used by a chapter, in document order."""

    def __init__(self, index: _Index, report: Any) -> None:
        self.index = index
        self.report = report  # callable(lineno, byte_col, issue)
        self.env: dict[str, _Ref] = {}
        self.guarded = 0  # inside `try:` whose handlers catch import/attribute errors

    def _report(self, lineno: int, col: int, issue: _Issue) -> None:
        if self.guarded and issue.severity == "error":
            # A fallback handles it at run time (try: new spelling / except: old one).
            issue = _Issue("warning", issue.code, issue.message + " (guarded by try/except)")
        self.report(lineno, col, issue)

    def visit_Try(self, node: ast.Try) -> None:
        guards = {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception"}
        caught: set[str] = set()
        for handler in node.handlers:
            if handler.type is None:
                caught.add("Exception")
            for n in ast.walk(handler.type) if handler.type is not None else ():
                if isinstance(n, ast.Name):
                    caught.add(n.id)
        guarded = bool(caught & guards)
        self.guarded += guarded
        for stmt in node.body:
            self.visit(stmt)
        self.guarded -= guarded
        for part in [*node.handlers, *node.orelse, *node.finalbody]:
            self.visit(part)

    visit_TryStar = visit_Try

    # -- imports -------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            if not self.index.owns(alias.name):
                self.env.pop(bound, None)
                continue
            ref, issues = self.index.resolve_module(alias.name)
            for issue in issues:
                self._report(alias.lineno, alias.col_offset, issue)
            if ref is None:
                self.env.pop(bound, None)
            elif alias.asname:
                self.env[bound] = ref
            else:
                top, _ = self.index.resolve_module(bound)
                if top is not None:
                    self.env[bound] = top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        names = [a.asname or a.name for a in node.names if a.name != "*"]
        if node.level or not node.module or not self.index.owns(node.module):
            for name in names:
                self.env.pop(name, None)
            return
        mod, issues = self.index.resolve_module(node.module)
        for issue in issues:
            self._report(node.lineno, node.col_offset + len("from "), issue)
        for alias in node.names:
            if alias.name == "*":
                continue
            bound = alias.asname or alias.name
            self.env.pop(bound, None)
            if mod is None:
                continue
            ref, issues = self.index.attribute(mod, alias.name)
            for issue in issues:
                self._report(alias.lineno, alias.col_offset, issue)
            if ref is not None:
                self.env[bound] = ref

    # -- uses ----------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain: list[ast.Attribute] = []
        base: ast.AST = node
        while isinstance(base, ast.Attribute):
            chain.append(base)
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in self.env):
            self.visit(base)
            return
        ref: _Ref | None = self.env[base.id]
        for attr_node in reversed(chain):
            if ref is None:
                break
            if isinstance(attr_node.ctx, (ast.Store, ast.Del)) and attr_node is node:
                break  # assigning an attribute is the chapter's business
            ref, issues = self.index.attribute(ref, attr_node.attr)
            end_line = attr_node.end_lineno or attr_node.lineno
            end_col = (attr_node.end_col_offset or 0) - len(attr_node.attr.encode("utf-8"))
            for issue in issues:
                self._report(end_line, max(end_col, 0), issue)

    # -- bindings that shadow an imported name -------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._unbind(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self._unbind(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self._unbind(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.env.pop(node.target.id, None)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._unbind(node.target)
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._unbind(item.optional_vars)
        for stmt in node.body:
            self.visit(stmt)

    visit_AsyncWith = visit_With

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._unbind(target)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        self._scoped(node.args, node.body)
        self.env.pop(node.name, None)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._scoped(node.args, [node.body])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(expr)
        saved = dict(self.env)
        for stmt in node.body:
            self.visit(stmt)
        self.env = saved
        self.env.pop(node.name, None)

    def _comprehension(self, node: ast.AST, parts: list[ast.AST]) -> None:
        saved = dict(self.env)
        for gen in node.generators:  # type: ignore[attr-defined]
            self.visit(gen.iter)
            self._unbind(gen.target)
            for cond in gen.ifs:
                self.visit(cond)
        for part in parts:
            self.visit(part)
        self.env = saved

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_ListComp
    visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node, [node.key, node.value])

    def _scoped(self, args: ast.arguments, body: list[ast.AST]) -> None:
        saved = dict(self.env)
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        for a in params:
            self.env.pop(a.arg, None)
        for stmt in body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    self.env.pop(sub.id, None)
        for stmt in body:
            self.visit(stmt)
        self.env = saved

    def _unbind(self, target: ast.AST) -> None:
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            self.visit(target)
            return
        for name in _target_names(target):
            self.env.pop(name, None)


_INDEXES: dict[tuple[str, ...], _Index] = {}


def _index_for(packages: Sequence[str]) -> _Index:
    key = tuple(packages)
    if key not in _INDEXES:
        _INDEXES[key] = _Index(key)
    return _INDEXES[key]


def check_document_static(
    doc: QmdDocument, *, display: str | None = None, packages: Sequence[str] = ("mlsys",)
) -> list[Finding]:
    """Static findings for one parsed document.

    Parameters
    ----------
    doc : QmdDocument
        The parsed chapter.
    display : str, optional
        File name to put in findings (default: the document's path).
    packages : sequence of str
        Top-level packages whose names are resolved (default ``("mlsys",)``).

    Returns
    -------
    list of Finding
        In document order.
    """
    name = display or (doc.path.as_posix() if doc.path else "<qmd>")
    findings: list[Finding] = []
    index = _index_for(packages)

    def add(line: int, col: int, severity: str, code: str, message: str) -> None:
        findings.append(Finding(name, line, col, severity, code, message))

    if doc.front_matter_error:
        add(1, 1, "error", "front-matter", f"invalid YAML front matter: {doc.front_matter_error}")

    checker = _Checker(index, None)
    # Cells and inline expressions share one namespace, visited in document order, with
    # {{< include >}} files spliced in where they stand (Quarto does it before running).
    steps = iter_steps(doc)
    while True:
        try:
            owner, item = next(steps)
        except StopIteration:
            break
        except IncludeError as exc:
            where = name if exc.doc is doc else _display_path(exc.doc.path or Path(name))
            findings.append(Finding(where, exc.include.line, 1, "error", "include", str(exc)))
            break
        where = name if owner is doc else _display_path(owner.path or Path(name))

        def add_here(
            line: int, col: int, sev: str, code: str, msg: str, where: str = where
        ) -> None:
            findings.append(Finding(where, line, col, sev, code, msg))

        if isinstance(item, CodeCell):
            _check_cell(doc, item, checker, add_here)
        else:
            loc = _Location(item.expression, item.line, item.col, same_line=True)
            try:
                tree = ast.parse(item.expression, mode="eval")
            except SyntaxError as exc:
                add_here(item.line, item.col, "error", "syntax", f"inline expression: {exc.msg}")
                continue
            empty = _renders_empty(tree)
            if empty:
                add_here(
                    item.line,
                    item.col,
                    "error",
                    "inline-empty",
                    f"`{item.expression}` {empty}, so Quarto leaves the expression in the "
                    "page as code; move it into a cell with `#| include: false`",
                )
            checker.report = _reporter(loc, add_here)
            checker.visit(tree)
    return findings


def _check_renders_empty() -> bool:
    """Whether ``mlsys.core.fmt.check`` of a true claim renders as nothing in a page.

    Quarto inserts the ``text/markdown`` of a value when it has one, else its text, so
    ``check`` may return a value whose Markdown is invisible but not empty (an HTML
    comment) and sit inline again.
    """
    from mlsys.core.fmt import check

    value = check(True, "a true claim")
    markdown = getattr(value, "_repr_markdown_", None)
    shown = markdown() if callable(markdown) else None
    return not (shown if shown is not None else str(value))


def _renders_empty(tree: ast.Expression) -> str | None:
    """Why an inline expression is known, without running it, to have an empty value.

    Quarto (``executeInlineCodeHandler`` in quarto-cli's ``execute-inline.ts``) puts an
    inline value into the page only when its text is non-empty; otherwise the
    expression stays in the page as code. Known before running: the literals ``""`` and
    ``None`` (shown as "None"), and ``check(...)`` while it returns an empty string.
    """
    body = tree.body
    if isinstance(body, ast.Constant) and body.value in ("", None):
        return f"is the literal {body.value!r}"
    if isinstance(body, ast.Call):
        func = body.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name == "check" and _check_renders_empty():
            return "calls check(), whose value is the empty string"
    return None


def _reporter(loc: _Location, add: Any) -> Any:
    def report(lineno: int, byte_col: int, issue: _Issue) -> None:
        line, col = loc.at(lineno, byte_col)
        add(line, col, issue.severity, issue.code, issue.message)

    return report


def _check_cell(doc: QmdDocument, cell: CodeCell, checker: _Checker, add: Any) -> None:
    if cell.language != "python":
        return
    if cell.options_error:
        add(
            cell.code_line,
            1,
            "warning",
            "cell-options",
            f"invalid #| options: {cell.options_error}",
        )
    if not doc.runs(cell):
        return  # eval: false cells are shown, not run, and may hold pseudo-code
    if cell.nested:
        add(
            cell.header_line,
            cell.indent + 1,
            "warning",
            "nested-cell",
            "Quarto executes a ```{python} cell even inside a fenced block; "
            "write ```{{python}} to show it without running it",
        )
    code = _mask_magics(cell.source)
    if code is None:
        return  # a %%magic cell is not Python
    loc = _Location(code, cell.code_line, cell.indent + 1, same_line=False)
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        if cell.options.get("error") is True:
            return  # "#| error: true": the page shows the error on purpose
        line, col = loc.at(exc.lineno or 1, 0)
        col += max((exc.offset or 1) - 1, 0)
        add(line, col, "error", "syntax", f"syntax error: {exc.msg}")
        return
    checker.report = _reporter(loc, add)
    checker.visit(tree)


def check_static(
    files: Iterable[str | Path], packages: Sequence[str] = ("mlsys",)
) -> list[Finding]:
    """Static findings for every file.

    Parameters
    ----------
    files : iterable of str or Path
        .qmd files.
    packages : sequence of str
        Top-level packages whose names are resolved.

    Returns
    -------
    list of Finding
        Sorted by file, line, column.
    """
    findings: list[Finding] = []
    for f in files:
        p = Path(f)
        try:
            doc = read_qmd(p)
        except (OSError, UnicodeDecodeError) as exc:
            findings.append(Finding(_display_path(p), 1, 1, "error", "read", str(exc)))
            continue
        findings.extend(check_document_static(doc, display=_display_path(p), packages=packages))
    return sorted(findings)


def check_files(
    files: Sequence[str | Path],
    *,
    execute: bool = False,
    jobs: int = 2,
    timeout: float = 120.0,
    packages: Sequence[str] = ("mlsys",),
    freeze: bool = True,
    progress: Callable[[Any, int, int], None] | None = None,
) -> list[Finding]:
    """Run the build check on a list of .qmd files.

    Parameters
    ----------
    files : sequence of str or Path
        .qmd files.
    execute : bool
        Also run every chapter in a Jupyter kernel (see :mod:`mlsys.book.kernel`).
    jobs : int
        Chapters executed at once.
    timeout : float
        Seconds allowed to each cell.
    packages : sequence of str
        Top-level packages whose names are resolved statically.
    freeze : bool
        With ``execute``, leave out the chapters ``quarto render`` would not execute
        either: those whose project (or front matter) sets ``execute: freeze`` and whose
        frozen results are fresh (:mod:`mlsys.book.freeze`). Their frozen output is read
        instead, for inline values Quarto left as code. False executes every chapter.
    progress : callable, optional
        With ``execute``, called as ``progress(result, finished, total)`` as each chapter
        finishes running (see :func:`mlsys.book.kernel.execute_documents`).

    Returns
    -------
    list of Finding
        Sorted by file, line and column.
    """
    paths = [Path(f) for f in files]
    findings = check_static(paths, packages=packages)
    if execute:
        from mlsys.book.kernel import execute_documents

        # A chapter that cannot be parsed cannot run: its static error says why.
        broken = {
            f.file for f in findings if f.code in {"syntax", "front-matter", "read", "include"}
        }
        runnable = [p for p in paths if _display_path(p) not in broken]
        if freeze:
            from mlsys.book.freeze import split_frozen

            runnable, frozen = split_frozen(runnable)
            for chapter in frozen:
                findings.extend(_frozen_findings(chapter))
        for result in execute_documents(runnable, jobs=jobs, timeout=timeout, progress=progress):
            findings.extend(result.findings)
    return sorted(set(findings))


# An inline expression Quarto left in its output as code: its value was empty or None.
_LEFT_INLINE = re.compile(r"`\{python\}\s+([^`]+?)\s*`")


def _frozen_findings(chapter: Any) -> list[Finding]:
    """Inline values a frozen chapter's stored output shows as code (as a render would)."""
    loc = _display_path(chapter.path)
    try:
        inlines = read_qmd(chapter.path).inlines
    except (OSError, UnicodeDecodeError):
        inlines = []
    where = {" ".join(e.expression.split()): (e.line, e.col) for e in inlines}
    found: dict[str, Finding] = {}
    for result in chapter.results:
        try:
            markdown = json.loads(result.read_text(encoding="utf-8"))["result"]["markdown"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for m in _LEFT_INLINE.finditer(markdown):
            expr = " ".join(m.group(1).split())
            line, col = where.get(expr, (1, 1))
            found[expr] = Finding(
                loc,
                line,
                col,
                "error",
                "inline-empty",
                f"the frozen output ({result.name}) shows `{{python}} {expr}` as code: "
                "its value was empty or None, which Quarto leaves in place",
            )
    return list(found.values())


def check_paths(paths: Sequence[str | Path], **kwargs: Any) -> list[Finding]:
    """Run the build check on files and directories (searched recursively).

    Parameters
    ----------
    paths : sequence of str or Path
        .qmd files and directories.
    **kwargs
        ``execute``, ``jobs``, ``timeout``, ``packages``: as for :func:`check_files`.

    Returns
    -------
    list of Finding
    """
    return check_files(find_qmd_files(paths), **kwargs)


# ---------------------------------------------------------------------------------------
# output


def format_human(findings: Sequence[Finding], n_files: int | None = None) -> str:
    """Compiler-style lines and a summary line.

    Parameters
    ----------
    findings : sequence of Finding
    n_files : int, optional
        How many files were checked, for the summary.

    Returns
    -------
    str
    """
    lines = [f.format() for f in findings]
    errors = sum(f.severity == "error" for f in findings)
    warns = len(findings) - errors
    checked = f" in {n_files} file{'s' if n_files != 1 else ''}" if n_files is not None else ""
    lines.append(
        f"mlsys check: {errors} error{'s' if errors != 1 else ''}, "
        f"{warns} warning{'s' if warns != 1 else ''}{checked}"
    )
    return "\n".join(lines)


def findings_to_json(findings: Sequence[Finding]) -> str:
    """A JSON list of findings (``file line col severity code message``), stable order."""
    return json.dumps([f.to_dict() for f in sorted(findings)], indent=2, sort_keys=True)


def exit_status(findings: Sequence[Finding], strict: bool = False) -> int:
    """``1`` when any error (or, with ``strict``, any warning) was found, else ``0``."""
    bad = {"error", "warning"} if strict else {"error"}
    return int(any(f.severity in bad for f in findings))
