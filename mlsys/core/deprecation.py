"""One way to keep an old public name alive: warn once per place, name the new spelling.

Every module of mlsys that renames a public name keeps the old one through
:func:`deprecated_getattr` (a PEP 562 module ``__getattr__``) and warns through
:func:`warn_renamed`. ``mlsys check`` reads the same ``_DEPRECATED`` map to suggest the
new name to authors.

Why ``from mlsys import OldName`` used to warn twice: for a *package*, the import
statement first asks ``hasattr(package, "OldName")`` (inside importlib's
``_handle_fromlist``, to decide whether a submodule must be imported) and then reads the
attribute. Both reached ``__getattr__``, so one line warned twice. The helper here serves
the ``hasattr`` probe silently and warns on the real read, so one statement gives exactly
one warning, attributed to the author's line. A deprecated value is never cached in the
module's globals: a cached name would skip ``__getattr__`` and stop warning.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["warn_renamed", "deprecated_getattr"]


def warn_renamed(old: str, new: str, stacklevel: int = 2, *, note: str | None = None) -> None:
    """Emit one ``DeprecationWarning`` saying ``old`` is now spelled ``new``.

    Parameters
    ----------
    old : str
        The deprecated spelling, fully qualified (``"mlsys.SingleNodeSolver"``).
    new : str
        The spelling to use instead (``"mlsys.SingleNodeModel"``).
    stacklevel : int, default 2
        As for :func:`warnings.warn`: 2 points at the caller of the function that calls
        ``warn_renamed``.
    note : str, optional
        A short remark appended in parentheses (e.g. how arguments changed).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_renamed("mlsys.Old", "mlsys.New")
    >>> str(caught[0].message)
    'mlsys.Old is deprecated; use mlsys.New'
    """
    message = f"{old} is deprecated; use {new}"
    if note:
        message += f" ({note})"
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel + 1)


def deprecated_getattr(
    module: str,
    renamed: Mapping[str, str],
    resolve: Callable[[str], Any] | None = None,
    *,
    fallback: Callable[[str], Any] | None = None,
    notes: Mapping[str, str] | None = None,
) -> Callable[[str], Any]:
    """Build a module ``__getattr__`` that serves renamed names with one warning each.

    Parameters
    ----------
    module : str
        The module's dotted name, used in messages (``"mlsys.formulas"``).
    renamed : Mapping[str, str]
        Old name -> new name (the module's ``_DEPRECATED`` map).
    resolve : callable, optional
        ``resolve(old)`` returns the object served for an old name; by default the new
        name is looked up in the module (``getattr(import_module(module), new)``).
    fallback : callable, optional
        ``fallback(name)`` for names that are not deprecated (e.g. lazy imports); it
        raises ``AttributeError`` for unknown names. Without it unknown names raise.
    notes : Mapping[str, str], optional
        Old name -> remark added to its warning.

    Returns
    -------
    callable
        A function to assign to the module's ``__getattr__``.

    Examples
    --------
    >>> __getattr__ = deprecated_getattr("mlsys.example", {"old": "new"})
    """
    notes = dict(notes or {})

    def module_getattr(name: str) -> Any:
        if name in renamed:
            new = renamed[name]
            if sys._getframe(1).f_code.co_name == "_handle_fromlist":
                # importlib's hasattr probe before ``from package import name``: the
                # statement reads the attribute right after, and that read warns.
                return resolve(name) if resolve else getattr(importlib.import_module(module), new)
            # stacklevel 2 from here = the line that wrote ``module.old`` (or the import).
            warn_renamed(f"{module}.{name}", f"{module}.{new}", 2, note=notes.get(name))
            if resolve is not None:
                return resolve(name)
            return getattr(importlib.import_module(module), new)
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return module_getattr
