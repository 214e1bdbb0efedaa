"""A prediction as a tree of named, cited terms that add up.

A solver prices a step (or a memory footprint, or a token) as a sum of terms, each from a
cited formula. :class:`Term` is one node of that sum: its name, its value in SI units,
its share of the root, what it overlaps with (and how much of it runs hidden under other
work, not counted), the formula it comes from and the inputs that formula used. A
parent's value is the sum of its children's, exactly: whatever a parent holds beyond its
named children is a child of its own (``"other"``), never a gap.

The data is separate from its display: :meth:`Term.to_dict` exports it,
:meth:`Term.to_markdown` writes a Markdown table for a Quarto chapter (a cell whose value
is the tree renders it, through ``_repr_markdown_``), :meth:`Term.to_text` an aligned
plain-text table for a terminal. Nothing prints on its own.

>>> leaf = Term.tree("step", "s", [("compute", 3.0), ("communication", 1.0)])
>>> leaf.value, [c.share for c in leaf.children]
(4.0, [0.75, 0.25])
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mlsys.core.errors import ParameterError

__all__ = ["Term"]

# display units per SI unit: (symbol, factor), largest first; the root picks one
_SCALES: dict[str, tuple[tuple[str, float], ...]] = {
    "s": (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)),
    "byte": (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 1.0)),
}
_INDENT = "\u00b7\u2002"  # a visible marker per level: Markdown keeps it, unlike spaces
_TEXT_INDENT = "  "


@dataclass(frozen=True)
class Term:
    """One named term of a prediction, and the terms it is the sum of.

    Attributes
    ----------
    name : str
        What the term is, in words ("tensor-parallel collectives").
    value : float
        Its value in the SI unit ``unit`` (seconds, bytes).
    unit : str
        ``"s"`` or ``"byte"`` (the SI unit of ``value``).
    key : str
        A stable identifier (the solver's field or term name), for code.
    share : float
        ``value`` over the root's value (1.0 at the root; 0.0 when the root is 0).
    overlaps : str
        What this work runs beside, if anything ("the backward pass").
    hidden : float
        Time (or bytes) of this work that runs under other work and is not counted in
        ``value``, in ``unit``; 0.0 when nothing is hidden.
    source : str
        The formula it comes from: the function that computes it and its citation.
    inputs : Mapping of str to str
        The inputs the formula used, as displayed values.
    children : tuple of Term
        The terms whose values sum to ``value``.
    """

    name: str
    value: float
    unit: str = "s"
    key: str = ""
    share: float = 1.0
    overlaps: str = ""
    hidden: float = 0.0
    source: str = ""
    inputs: Mapping[str, str] = field(default_factory=dict)
    children: tuple[Term, ...] = ()

    # -- building -------------------------------------------------------------------
    @classmethod
    def tree(
        cls,
        name: str,
        unit: str,
        parts: Sequence[Any],
        *,
        key: str = "",
        total: float | None = None,
        **fields: Any,
    ) -> Term:
        """A tree from nested parts, every parent the sum of its children.

        Parameters
        ----------
        name : str
            The root's name.
        unit : str
            SI unit of every value (``"s"`` or ``"byte"``).
        parts : sequence
            Children: each a :class:`Term` (its ``unit`` must match), or
            ``(name, value)``, or ``(name, [parts...])``, or ``(name, value_or_parts,
            {field: value})`` with :class:`Term` fields (``key``, ``source``,
            ``overlaps``, ``hidden``, ``inputs``).
        key : str
            The root's key.
        total : float, optional
            The root's value when the parts do not cover all of it: the difference
            becomes a child named ``"other"``. Without it the root is the sum of the
            parts.
        **fields
            Further :class:`Term` fields of the root.

        Returns
        -------
        Term
            The root, with every node's ``share`` of it set.

        Raises
        ------
        ParameterError
            For a unit other than ``"s"`` or ``"byte"``, or a child in another unit.
        """
        if unit not in _SCALES:
            raise ParameterError("unit", unit, "'s' or 'byte'")
        children = tuple(_node(p, unit) for p in parts)
        if total is not None:
            rest = float(total) - _sum(children)
            if rest != 0.0:
                children = (*children, cls("other", rest, unit, key="other"))
        root = cls(name, _sum(children), unit, key=key, children=children, **fields)
        return root.with_shares()

    def with_shares(self, root_value: float | None = None) -> Term:
        """This tree with every node's ``share`` of ``root_value`` (default: its own).

        Parameters
        ----------
        root_value : float, optional
            The value shares are measured against, in ``unit``.

        Returns
        -------
        Term
        """
        whole = self.value if root_value is None else root_value
        share = self.value / whole if whole else 0.0
        kids = tuple(c.with_shares(whole) for c in self.children)
        return replace(self, share=share, children=kids)

    # -- reading --------------------------------------------------------------------
    def walk(self, depth: int = 0) -> Iterator[tuple[int, Term]]:
        """Every node with its depth (the root at 0), parents before children.

        Parameters
        ----------
        depth : int
            Depth of this node.

        Returns
        -------
        Iterator of tuple of (int, Term)
            Each node with its depth, parents before children.
        """
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)

    def leaves(self) -> list[Term]:
        """The terms without children, in order: their values sum to the root's.

        Returns
        -------
        list of Term
        """
        return [t for _, t in self.walk() if not t.children]

    def find(self, key: str) -> Term:
        """The node whose ``key`` (or ``name``) is ``key``.

        Parameters
        ----------
        key : str
            A node's key or name.

        Returns
        -------
        Term

        Raises
        ------
        ParameterError
            Naming the keys there are.
        """
        for _, term in self.walk():
            if key in (term.key, term.name):
                return term
        keys = [t.key or t.name for _, t in self.walk()]
        raise ParameterError("key", key, "one of " + ", ".join(keys))

    def __getitem__(self, key: str) -> Term:
        return self.find(key)

    def __float__(self) -> float:
        return float(self.value)

    # -- export ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The tree as plain data (JSON-friendly).

        Returns
        -------
        dict
            ``name, key, value, unit, share, overlaps, hidden, source, inputs, children``
            (children a list of the same).
        """
        return {
            "name": self.name,
            "key": self.key,
            "value": float(self.value),
            "unit": self.unit,
            "share": float(self.share),
            "overlaps": self.overlaps,
            "hidden": float(self.hidden),
            "source": self.source,
            "inputs": dict(self.inputs),
            "children": [c.to_dict() for c in self.children],
        }

    def _rows(self, depth: int | None) -> list[tuple[int, Term]]:
        limit = math.inf if depth is None else depth
        return [(d, t) for d, t in self.walk() if d <= limit]

    def _scale(self) -> tuple[str, float]:
        """The one display unit of the value column, chosen from the root."""
        magnitude = abs(self.value) or max((abs(t.value) for _, t in self.walk()), default=0.0)
        scales = _SCALES[self.unit]
        for symbol, factor in scales:
            if magnitude >= factor:
                return symbol, factor
        return scales[-1]

    def to_markdown(self, depth: int | None = None, *, sources: bool = True) -> str:
        """A Markdown table: one row per term, indented by level, one unit, a total row.

        Parameters
        ----------
        depth : int, optional
            Deepest level shown (the root's children are level 1); a hidden node's value
            stays in its parent's. None: all.
        sources : bool
            Add the column naming each term's formula and citation, and the inputs it
            used.

        Returns
        -------
        str
        """
        symbol, factor = self._scale()
        head = f"| term | {symbol} | share | runs beside (hidden {symbol}) |"
        rule = "|:---|---:|---:|:---|"
        if sources:
            head, rule = head + " source |", rule + ":---|"
        lines = [head, rule]
        for d, t in self._rows(depth)[1:]:
            cells = [
                _INDENT * (d - 1) + _escape(t.name),
                _number(t.value / factor),
                f"{100.0 * t.share:.1f}%",
                _escape(_beside(t, factor)),
            ]
            if sources:
                cells.append(_escape(_source(t)))
            lines.append("| " + " | ".join(cells) + " |")
        total = [f"**{_escape(self.name)}**", f"**{_number(self.value / factor)}**", "**100%**", ""]
        if sources:
            total.append(_escape(self.source))
        lines.append("| " + " | ".join(total) + " |")
        return "\n".join(lines)

    def to_text(self, depth: int | None = None) -> str:
        """An aligned plain-text table for a terminal (indented names, one unit).

        Parameters
        ----------
        depth : int, optional
            Deepest level shown. None: all.

        Returns
        -------
        str
        """
        symbol, factor = self._scale()
        rows = [("term", symbol, "share", "runs beside")]
        for d, t in self._rows(depth)[1:]:
            name = _TEXT_INDENT * (d - 1) + t.name
            value = _number(t.value / factor)
            rows.append((name, value, f"{100 * t.share:.1f}%", _beside(t, factor)))
        rows.append((self.name, _number(self.value / factor), "100%", ""))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        lines = [
            f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}".rstrip()
            for r in rows
        ]
        rule = "-" * max(len(x) for x in lines)
        return "\n".join([lines[0], rule, *lines[1:-1], rule, lines[-1]])

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/markdown": self.to_markdown()}

    def __str__(self) -> str:
        return self.to_text()


def _node(part: Any, unit: str) -> Term:
    """One child of :meth:`Term.tree` from its spelling."""
    if isinstance(part, Term):
        if part.unit != unit:
            raise ParameterError("unit", part.unit, f"{unit!r}, the tree's unit")
        return part
    name, body, *rest = part
    extra = dict(rest[0]) if rest else {}
    if isinstance(body, (list, tuple)):
        kids = tuple(_node(p, unit) for p in body)
        return Term(name, _sum(kids), unit, children=kids, **extra)
    return Term(name, float(body), unit, **extra)


def _sum(terms: Sequence[Term]) -> float:
    """Left-to-right sum of the terms' values (the order a solver adds them in)."""
    total = 0.0
    for t in terms:
        total = total + t.value
    return total


def _number(x: float) -> str:
    """A value in the column's unit: four significant figures, thousands separated."""
    if x == 0.0:
        return "0"
    digits = max(0, 3 - math.floor(math.log10(abs(x))))
    return f"{x:,.{digits}f}"


def _beside(t: Term, factor: float) -> str:
    if not t.overlaps:
        return ""
    return f"{t.overlaps} ({_number(t.hidden / factor)})" if t.hidden else t.overlaps


def _source(t: Term) -> str:
    """A term's formula and, after it, the inputs it used."""
    used = ", ".join(f"{k} {v}" for k, v in t.inputs.items())
    if not used:
        return t.source
    return f"{t.source} ({used})" if t.source else used


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("$", "\\$")
