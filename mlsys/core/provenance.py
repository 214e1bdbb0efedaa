"""Where a number comes from: the catalog entry and source behind a value, or the solver.

A reader who hovers a number in an HTML page of the book sees its origin: for a catalog
value, the entry and the source the catalog cites for that field (a datasheet, a paper,
an estimate); for a solver's result, the solver, its inputs and the catalog entries those
inputs came from. :func:`mlsys.core.fmt.fmt` and its family look the origin up here and
attach it to the :class:`~mlsys.core.fmt.Formatted` string they return; its
``_repr_markdown_`` then writes a Pandoc span, ``[3.35 TB/s]{.mlsys-num title="…"}``,
which Quarto turns into ``<span class="mlsys-num" title="…">`` (plain text in PDF).

How a value is found, cheaply
-----------------------------
Catalog Quantities are built once and live as long as their entry. When an entry that
cites sources is built (:class:`mlsys.core.types` registers it), each of its Quantities is
recorded in a table keyed by ``id()``; the table holds the Quantity itself, so its ``id``
can never be reused by another object, and a lookup is one dict access plus an ``is``
check. A :class:`~mlsys.core.results.Result` whose solver called :func:`record` registers
each field value as it is read in a bounded table of recent values (the pattern is
``fmt(res.step_time)``: read, then format at once). Arithmetic makes a new object, so a
value computed in a chapter has no origin unless the author passes ``source=``.

Examples
--------
>>> from mlsys import Hardware
>>> origin = origin_of(Hardware.H100.memory_bandwidth)
>>> origin.describe().startswith("NVIDIA H100 SXM5 80GB, memory bandwidth: datasheet")
True
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

__all__ = [
    "CatalogOrigin",
    "ResultOrigin",
    "TextOrigin",
    "Origin",
    "origin_of",
    "register_entry",
    "register_value",
    "record",
    "entries_used",
    "span",
    "split_span",
    "MAX_TITLE_CHARS",
]

MAX_TITLE_CHARS = 700
"""A tooltip longer than this is cut (with "…"): a hover box, not a bibliography."""

_RECENT_LIMIT = 4096  # result values read recently; a chapter formats a value just after reading it

# id(value) -> (value, origin). Holding the value keeps its id from being reused.
_CATALOG: dict[int, tuple[Any, Origin]] = {}
_RECENT: OrderedDict[int, tuple[Any, Origin]] = OrderedDict()


class CatalogOrigin:
    """A value read from a catalog entry's field.

    Parameters
    ----------
    entry : mlsys.core.types model
        The catalog object (an Accelerator, Fabric, Node, TransformerWorkload, ...).
    field : str
        The field the value was read from (``"memory_bandwidth"``, ``"peak_flops"``).
    key : str, optional
        The key inside a mapping field (``"bf16"`` of ``peak_flops``).
    """

    __slots__ = ("_text", "entry", "field", "key")

    def __init__(self, entry: Any, field: str, key: str | None = None) -> None:
        self.entry = entry
        self.field = field
        self.key = key
        self._text: str | None = None

    @property
    def source(self) -> Any:
        """The :class:`~mlsys.core.types.Provenance` the catalog gives for this field."""
        return self.entry.provenance_of(self.field)

    def describe(self) -> str:
        """One line: entry, field and its source (kind: reference; note).

        Returns
        -------
        str
            E.g. ``"NVIDIA H100 SXM5 80GB, memory bandwidth: datasheet, NVIDIA H100 …"``.
        """
        if self._text is None:
            what = self.field.replace("_", " ") + (f" ({self.key})" if self.key else "")
            # The entry's default note is about other fields (often its peak FLOP/s):
            # only a field's own source record brings its note along.
            own = self.field in self.entry.provenance
            text = _source_text(self.source, note=own)
            self._text = f"{self.entry.label}, {what}: {text}"
        return self._text


class ResultOrigin:
    """A field of a solver's result.

    Parameters
    ----------
    solver : str
        The solver's class name (``"DistributedModel"``).
    inputs : mapping of str to Any
        The arguments the solver was called with (catalog objects, numbers, strings).
    field : str, optional
        The result field this value is (``"step_time"``); None for the result as a whole.
    """

    __slots__ = ("field", "inputs", "solver")

    def __init__(self, solver: str, inputs: Mapping[str, Any], field: str | None = None) -> None:
        self.solver = solver
        self.inputs = inputs
        self.field = field

    def at(self, field: str) -> ResultOrigin:
        """The same result's origin, for one of its fields.

        Parameters
        ----------
        field : str
            Field name (a nested result's fields are written ``"memory.weights"``).

        Returns
        -------
        ResultOrigin
        """
        name = field if self.field is None else f"{self.field}.{field}"
        return ResultOrigin(self.solver, self.inputs, name)

    @property
    def entries(self) -> tuple[Any, ...]:
        """The catalog entries the inputs came from (see :func:`entries_used`)."""
        return entries_used(self.inputs.values())

    def describe(self) -> str:
        """One line: solver and field, its inputs, and the sources of its catalog entries.

        Returns
        -------
        str
        """
        head = self.solver + (f" → {self.field}" if self.field else "")
        args = ", ".join(f"{k}={_input_text(v)}" for k, v in self.inputs.items() if v is not None)
        sources = "; ".join(
            f"{e.label}: {_brief(e.provenance_of('default') or _first(e))}" for e in self.entries
        )
        text = f"{head}({args})"
        return f"{text}. Sources: {sources}" if sources else text


class TextOrigin:
    """An origin the author states in words (``fmt(x, source="Patterson et al. 2021")``).

    Parameters
    ----------
    text : str
        The origin, as it should appear in the tooltip.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def describe(self) -> str:
        """The text as given.

        Returns
        -------
        str
        """
        return self.text


Origin = CatalogOrigin | ResultOrigin | TextOrigin
"""Any of the origins a formatted number can carry."""


def _first(entry: Any) -> Any:
    return next(iter(entry.provenance.values()), None)


def _source_text(source: Any, *, note: bool = True) -> str:
    if source is None:
        return "no source recorded"
    text = f"{source.kind}, {source.reference}"
    return f"{text} ({source.note})" if note and source.note else text


def _brief(source: Any) -> str:
    """A source in a few words, for a list of several: kind and the reference's head."""
    if source is None:
        return "no source recorded"
    reference = source.reference.split(":")[0].split(";")[0]
    if len(reference) > _BRIEF_CHARS:
        reference = reference[: _BRIEF_CHARS - 1] + "…"
    return f"{source.kind}, {reference}"


_BRIEF_CHARS = 80


def _input_text(value: Any) -> str:
    label = getattr(value, "label", None)
    if isinstance(label, str):
        count = getattr(value, "count", None)
        node = getattr(value, "node", None)
        if node is not None and isinstance(count, int):  # a Fleet: say what it is made of
            fabric = getattr(value, "fabric", None)
            on = f" on {fabric.label}" if fabric is not None and count > 1 else ""
            return f"{count} × {node.label}{on}"
        return label
    if hasattr(value, "units") and hasattr(value, "magnitude"):
        return f"{value:~P}"
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def entries_used(values: Iterable[Any]) -> tuple[Any, ...]:
    """The catalog entries reachable from solver inputs, each once, in first-seen order.

    A Fleet contributes its node, the node's accelerator and fabric and the fleet's
    fabric; a Datacenter its grid. Only entries that cite a source are listed.

    Parameters
    ----------
    values : iterable
        Solver arguments (catalog objects and plain values).

    Returns
    -------
    tuple
        Catalog objects.
    """
    seen: dict[int, Any] = {}
    stack = list(values)[::-1]
    while stack:
        value = stack.pop()
        if not hasattr(value, "provenance_of") or id(value) in seen:
            continue
        seen[id(value)] = value
        fields = getattr(type(value), "model_fields", {})
        for part in ("grid", "fabric", "intra_fabric", "accelerator", "node"):
            if part in fields and getattr(value, part) is not None:
                stack.append(getattr(value, part))
    return tuple(v for v in seen.values() if v.provenance)


# ---------------------------------------------------------------------------------------
# The tables
# ---------------------------------------------------------------------------------------


def register_entry(entry: Any) -> None:
    """Record every Quantity (and Quantity in a mapping field) of a catalog entry.

    Called by :mod:`mlsys.core.types` when an entry that cites sources is built. An
    earlier registration of the same object wins, so a Quantity shared by a copy still
    names the entry it was first read from.

    Parameters
    ----------
    entry : mlsys.core.types model
        An entry whose ``provenance`` is not empty.
    """
    for name in type(entry).model_fields:
        value = getattr(entry, name)
        if hasattr(value, "_units"):
            _CATALOG.setdefault(id(value), (value, CatalogOrigin(entry, name)))
        elif isinstance(value, dict) and name != "provenance":
            for key, item in value.items():
                if hasattr(item, "_units"):
                    _CATALOG.setdefault(id(item), (item, CatalogOrigin(entry, name, key)))


def register_value(value: Any, origin: Origin, *, permanent: bool = False) -> Any:
    """Record the origin of one value object (a Quantity or a float).

    Parameters
    ----------
    value : Any
        The object formatted later (identity matters, not value).
    origin : CatalogOrigin, ResultOrigin or TextOrigin
        Where it came from.
    permanent : bool
        Keep it for the life of the process (catalog values); otherwise it is one of
        the most recent values read from results and is forgotten after a few thousand
        newer ones.

    Returns
    -------
    Any
        ``value``, for chaining.
    """
    if permanent:
        _CATALOG.setdefault(id(value), (value, origin))
        return value
    key = id(value)
    recent = _RECENT
    recent[key] = (value, origin)
    recent.move_to_end(key)
    if len(recent) > _RECENT_LIMIT:
        recent.popitem(last=False)
    return value


def origin_of(value: Any) -> Origin | None:
    """The origin recorded for this very object, or None.

    Parameters
    ----------
    value : Any
        A Quantity or number about to be formatted.

    Returns
    -------
    CatalogOrigin, ResultOrigin, TextOrigin or None
    """
    hit = _CATALOG.get(id(value)) or _RECENT.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    return None


def record(result: Any, solver: Any, /, **inputs: Any) -> Any:
    """Tell a result which solver made it and from what inputs; return the result.

    A solver ends with ``return record(result, self, model=model, fleet=fleet, ...)``:
    it costs one small object, and the text is built only when a number is shown.

    Parameters
    ----------
    result : mlsys.core.results.Result
        The result to annotate.
    solver : object or str
        The solver (its class name is used) or a name.
    **inputs
        The solver's arguments, by name.

    Returns
    -------
    Result
        ``result``.
    """
    name = solver if isinstance(solver, str) else type(solver).__name__
    object.__setattr__(result, "_origin", ResultOrigin(name, inputs))
    return result


# ---------------------------------------------------------------------------------------
# Markup
# ---------------------------------------------------------------------------------------

# A pipe would end a Markdown table cell even inside an attribute: it becomes a slash.
_TITLE_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": " ", "|": "/"})


@lru_cache(maxsize=2048)
def _escaped_title(title: str) -> str:
    """The title cut to :data:`MAX_TITLE_CHARS` and escaped for a Pandoc attribute."""
    if len(title) > MAX_TITLE_CHARS:
        title = title[: MAX_TITLE_CHARS - 1] + "…"
    return title.translate(_TITLE_ESCAPES)


def span(markdown: str, origin: Origin) -> str:
    """A Pandoc span carrying the origin as its title: ``[3.35 TB/s]{.mlsys-num title="…"}``.

    Parameters
    ----------
    markdown : str
        The number as Markdown (dollar signs already escaped).
    origin : CatalogOrigin, ResultOrigin or TextOrigin
        Where it came from.

    Returns
    -------
    str
        Markdown that Pandoc reads as ``<span class="mlsys-num" title="…">``; in LaTeX
        output the span is its text alone.
    """
    return f'[{markdown}]{{.mlsys-num title="{_escaped_title(origin.describe())}"}}'


def split_span(markdown: str) -> tuple[str, str | None]:
    """Undo :func:`span`: the number's Markdown and its origin text (None if plain).

    Parameters
    ----------
    markdown : str
        What an inline expression inserted.

    Returns
    -------
    (str, str or None)

    Examples
    --------
    >>> split_span('[3.35 TB/s]{.mlsys-num title="H100 \\\\"SXM\\\\""}')
    ('3.35 TB/s', 'H100 "SXM"')
    >>> split_span("[16,384]{.mlsys-num}"), split_span("16,384")
    (('16,384', None), ('16,384', None))
    """
    if markdown.startswith("[") and markdown.endswith("]{.mlsys-num}"):
        return markdown[1 : -len("]{.mlsys-num}")], None
    head = '{.mlsys-num title="'
    if not (markdown.startswith("[") and markdown.endswith('"}')):
        return markdown, None
    cut = markdown.find("]" + head)
    if cut < 0:
        return markdown, None
    body = markdown[cut + 1 + len(head) : -2]
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            out.append(body[i + 1])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return markdown[1:cut], "".join(out)
