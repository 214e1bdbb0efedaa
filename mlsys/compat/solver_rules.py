"""The book's solver rules, switched on per process for a chapter that asks for them.

Where the book's package differs from mlsys by a RULE of a solver rather than by a figure
(``[rules]`` of ``book_assumptions.toml``), mlsys keeps its rule and records the book's.
:func:`mlsys.book.migration.serve_book_figures` and
:func:`~mlsys.book.migration.book_values` switch a rule on in this process; the compat
solvers that :func:`book_rule_active` names then follow the book's rule. Off by default;
mlsys's own solvers (``mlsys.MemoryModel``, ``mlsys.SingleNodeModel``) never read it.
"""

from __future__ import annotations

from typing import Any

from mlsys.core.errors import ParameterError

__all__ = ["book_rules", "book_rule_active", "BOOK_RULES_ON"]

# rule name -> whether the compat solvers follow the book's rule in this process
BOOK_RULES_ON: dict[str, bool] = {}


def book_rules() -> dict[str, dict[str, Any]]:
    """The book's solver rules mlsys records, by name.

    Returns
    -------
    dict
        Name -> ``{"applies_to", "book", "mlsys", "reason", "source"}``: the book's class
        the rule changes, the book's rule, mlsys's rule, why mlsys keeps its own, and the
        reference of each (``[rules]`` of ``book_assumptions.toml``).

    Examples
    --------
    >>> book_rules()["OPTIMIZER_MASTER_COPY"]["applies_to"]
    'TrainingMemoryModel'
    """
    from mlsys.core.catalog import load_table

    return {name: dict(row) for name, row in load_table("book_assumptions.toml")["rules"].items()}


def book_rule_active(name: str) -> bool:
    """Whether the compat solvers follow the book's rule ``name`` in this process.

    Parameters
    ----------
    name : str
        A rule of :func:`book_rules` (``"OPTIMIZER_MASTER_COPY"``).

    Returns
    -------
    bool
        ``False`` unless :func:`mlsys.book.migration.serve_book_figures` or
        :func:`~mlsys.book.migration.book_values` switched it on.

    Raises
    ------
    ParameterError
        For a name :func:`book_rules` does not record.
    """
    if name not in book_rules():
        raise ParameterError("name", name, f"one of {sorted(book_rules())}")
    return BOOK_RULES_ON.get(name, False)
