"""Grouped numpy-docstring parameters must share one default.

The API reference is built by quartodoc (griffe's numpy parser).  An entry
that groups several names, e.g. ``a, b : int``, is rendered as one row per
name, but every row shows the *first* name's default and the group's single
type.  Grouping is therefore only allowed when every grouped name has the
same signature default (``tp_size, pp_size : int`` with both defaulting to 1
is fine); otherwise the reference shows wrong defaults.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import mlsys

_SKIP_MODULES = ("mlsys.emulate",)

# ``name1, name2[, ...] [: type]`` -- at least two comma-separated identifiers.
_GROUP_RE = re.compile(
    r"^(?P<names>\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)+)\s*(?::.*)?$"
)
_SECTION_UNDERLINE = re.compile(r"^-{3,}\s*$")


def _public_modules():
    yield mlsys
    for info in pkgutil.walk_packages(mlsys.__path__, prefix="mlsys."):
        name = info.name
        if any(part.startswith("_") for part in name.split(".")):
            continue
        if any(name == skip or name.startswith(skip + ".") for skip in _SKIP_MODULES):
            continue
        try:
            yield importlib.import_module(name)
        except Exception:  # optional extras missing, etc.
            continue


def _public_callables(module):
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            yield f"{module.__name__}.{name}", obj
        elif inspect.isclass(obj):
            yield f"{module.__name__}.{name}", obj
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if inspect.isfunction(member):
                    yield f"{module.__name__}.{name}.{attr}", member


def _parameter_entries(doc: str):
    """Yield the entry lines (``name : type``) of the numpy Parameters section."""
    lines = doc.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].strip() == "Parameters" and _SECTION_UNDERLINE.match(lines[i + 1].strip()):
            break
        i += 1
    else:
        return
    body = []
    for j in range(i + 2, len(lines)):
        line = lines[j]
        nxt = lines[j + 1] if j + 1 < len(lines) else ""
        if line.strip() and _SECTION_UNDERLINE.match(nxt.strip()):
            break  # next section heading
        body.append(line)
    indents = [len(ln) - len(ln.lstrip()) for ln in body if ln.strip()]
    if not indents:
        return
    entry_indent = min(indents)
    for line in body:
        if line.strip() and len(line) - len(line.lstrip()) == entry_indent:
            yield line.strip()


def _signature_defaults(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    return {name: p.default for name, p in sig.parameters.items()}


def _same(a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:
        return False


def _offenders():
    found = []
    seen = set()
    for module in _public_modules():
        for qualname, obj in _public_callables(module):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            doc = inspect.getdoc(obj)
            if not doc:
                continue
            defaults = None
            for entry in _parameter_entries(doc):
                match = _GROUP_RE.match(entry)
                if not match:
                    continue
                names = [n.strip().lstrip("*") for n in match["names"].split(",")]
                if defaults is None:
                    defaults = _signature_defaults(obj) or {}
                missing = object()
                values = [defaults.get(n, missing) for n in names]
                if not all(_same(values[0], v) for v in values[1:]):
                    shown = ", ".join(
                        f"{n}={'?' if v is missing else repr(v)}"
                        for n, v in zip(names, values, strict=True)
                    )
                    found.append(f"{qualname}: {entry!r} ({shown})")
    return found


def test_parameter_entry_parser_finds_groups():
    doc = (
        "Summary.\n\nParameters\n----------\na, b : int\n    Text.\nc : str\n\n"
        "Returns\n-------\nx, y : int\n"
    )
    assert list(_parameter_entries(doc)) == ["a, b : int", "c : str"]
    assert _GROUP_RE.match("a, b : int")
    assert _GROUP_RE.match("a, b")
    assert not _GROUP_RE.match("c : str")


def test_grouped_docstring_parameters_share_defaults():
    offenders = _offenders()
    assert not offenders, (
        "numpy docstring entries group parameters with different defaults; "
        "quartodoc shows the first name's default for every name -- split them:\n  "
        + "\n  ".join(offenders)
    )
