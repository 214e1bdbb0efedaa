"""Where a number comes from: the catalog entry and source behind a value, or the solver.

A reader who hovers a number in an HTML page of the book sees its origin: for a catalog
value, the entry and the source the catalog cites for that field (a datasheet, a paper,
an estimate); for a solver's result, the solver, its inputs and the catalog entries those
inputs came from. :func:`mlsys.core.fmt.fmt` and its family look the origin up here and
attach it to the :class:`~mlsys.core.fmt.Formatted` string they return; its
``_repr_markdown_`` then writes a Pandoc span, ``[3.35 TB/s]{.mlsys-num title="…"}``,
which Quarto turns into ``<span class="mlsys-num" title="…">`` (plain text in PDF).

How a value carries its origin
------------------------------
Catalog Quantities (given their origin by :func:`register_entry` when an entry that cites
sources is built), the fields read from a :class:`~mlsys.core.results.Result` whose
solver called :func:`record`, and the numbers an author marks with :func:`sourced` hold
their magnitude as a :class:`~mlsys.core.traced.TracedFloat` or
:class:`~mlsys.core.traced.TracedInt`: a float or int that carries its origins and hands
them on through arithmetic and pint's unit conversions. ``fmt(res.step_time * 1000)``,
``times(a / b)`` and ``fmt(bw * 8)`` therefore name every origin they came from
(:class:`DerivedOrigin`), and looking one up is two attribute reads. ``float()``,
``int()``, ``math.*``, f-strings and numpy arrays built from numbers strip them (see
:mod:`mlsys.core.traced`); the solvers rely on that to run on plain floats.

A few values are handed out as plain objects that solvers also use at full speed
(``Models.X.total_params``): :func:`register_value` records those in a table keyed by
``id()`` that holds the object itself, so the ``id`` is never reused by another object.

Examples
--------
>>> from mlsys import Hardware
>>> origin = origin_of(Hardware.H100.memory_bandwidth)
>>> origin.describe().startswith("NVIDIA H100 SXM5 80GB, memory bandwidth: datasheet")
True
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from mlsys.core.traced import (
    TextOrigin,
    TracedFloat,
    TracedInt,
    merge,
    traced,
    traced_magnitude,
)

__all__ = [
    "CatalogOrigin",
    "ResultOrigin",
    "TextOrigin",
    "DerivedOrigin",
    "Origin",
    "origin_of",
    "origins_of",
    "sourced",
    "register_entry",
    "register_value",
    "record",
    "entries_used",
    "span",
    "split_span",
    "MAX_TITLE_CHARS",
]

MAX_TITLE_CHARS = 1000
"""The full text of a hover box is cut (between words, with "…") beyond this length."""

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

    def __eq__(self, other: object) -> bool:
        # Two reads of the same field are one origin (a derived value lists it once).
        return (
            isinstance(other, CatalogOrigin)
            and other.entry is self.entry
            and other.field == self.field
            and other.key == self.key
        )

    def __hash__(self) -> int:
        return hash((id(self.entry), self.field, self.key))

    def __repr__(self) -> str:
        return f"CatalogOrigin({self.describe()!r})"

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
            self._text = f"{self.entry.label}, {self.what}: {self.source_text}"
        return self._text

    @property
    def what(self) -> str:
        """The field in words, with its key: ``"peak flops (bf16)"``."""
        return self.field.replace("_", " ") + (f" ({self.key})" if self.key else "")

    @property
    def source_text(self) -> str:
        """The field's source in words: ``"datasheet, NVIDIA H100 … (2023)"``."""
        # The entry's default note is about other fields (often its peak FLOP/s):
        # only a field's own source record brings its note along.
        own = self.field in self.entry.provenance
        return _source_text(self.source, note=own)


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

    def __eq__(self, other: object) -> bool:
        # Each read of a field builds its own origin: same result and field, same origin.
        return (
            isinstance(other, ResultOrigin)
            and other.inputs is self.inputs
            and other.solver == self.solver
            and other.field == self.field
        )

    def __hash__(self) -> int:
        return hash((self.solver, id(self.inputs), self.field))

    def __repr__(self) -> str:
        return f"ResultOrigin({self.describe()!r})"

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


class DerivedOrigin:
    """The origin of a number computed from several others: each of their origins.

    Parameters
    ----------
    parts : tuple of CatalogOrigin, ResultOrigin or TextOrigin
        The origins the number was computed from, each once, first-seen order.

    Examples
    --------
    >>> DerivedOrigin((TextOrigin("a paper"), TextOrigin("a datasheet"))).describe()
    'Computed from: a paper; a datasheet'
    """

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Any, ...]) -> None:
        self.parts = parts

    def describe(self) -> str:
        """``"Computed from: "`` and each origin's line, joined by semicolons.

        Lines that read the same (two fields of one entry citing one datasheet are two
        lines; the same field read twice is one) appear once; the whole is cut to
        :data:`MAX_TITLE_CHARS` when it becomes a tooltip.

        Returns
        -------
        str
        """
        # Fields of one entry citing one source share a line:
        # "Llama 2 70B, heads, kv heads: paper, Touvron et al. (2023) …".
        lines: dict[Any, list[str]] = {}
        for part in self.parts:
            if isinstance(part, CatalogOrigin):
                what = lines.setdefault((id(part.entry), part.source_text), [part.entry.label])
                if part.what not in what:
                    what.append(part.what)
            else:
                lines.setdefault(part.describe(), [])
        text = [
            f"{', '.join(names)}: {key[1]}" if isinstance(key, tuple) else key
            for key, names in lines.items()
        ]
        return "Computed from: " + "; ".join(text)


Origin = CatalogOrigin | ResultOrigin | TextOrigin | DerivedOrigin
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


def _short_text(value: Any) -> str:
    """pint's short form (``"1.436e+06 s"``), four significant digits for a bare float."""
    return f"{value:~P}" if hasattr(value, "units") else f"{value:.4g}"


# How a solver's numeric input is written in ResultOrigin.describe. The display policy
# lives above this module (mlsys.core.fmt reads provenance, never the reverse), so fmt
# installs it here when it is imported (every formatted number imports it); until then
# pint's short form stands in.
_VALUE_TEXT: list[Callable[[Any], str]] = [_short_text]


def use_value_text(render: Callable[[Any], str]) -> None:
    """Set how :meth:`ResultOrigin.describe` writes a solver's numeric inputs.

    :mod:`mlsys.core.fmt` installs its display policy (``16.62 d`` rather than
    ``1435805.3943772556 s``) when it is imported.

    Parameters
    ----------
    render : callable
        Takes a Quantity or float, returns its text; an exception falls back to pint's
        short form.
    """
    _VALUE_TEXT[0] = render


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
    if isinstance(value, bool) or value is None:
        return repr(value)
    if (hasattr(value, "units") and hasattr(value, "magnitude")) or isinstance(value, float):
        # as a reader would print it (display policy), not 1435805.3943772556 s
        try:
            return _VALUE_TEXT[0](value)
        except Exception:  # an array or an odd unit: pint's own short form
            return _short_text(value)
    if isinstance(value, int):
        return f"{value:,}"
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
    """Give every Quantity of a catalog entry (and in its mapping fields) its origin.

    Called by :mod:`mlsys.core.types` when an entry that cites sources is built. Each
    Quantity field is replaced by an equal Quantity whose magnitude is a
    :class:`~mlsys.core.traced.TracedFloat` carrying a :class:`CatalogOrigin`, so the
    value and everything computed from it name the entry and its source. A Quantity
    that already carries an origin (shared with an entry built earlier, e.g. by
    ``model_copy``) keeps it: the first entry it was read from.

    Parameters
    ----------
    entry : mlsys.core.types model
        An entry whose ``provenance`` is not empty.
    """
    fields = entry.__dict__  # a frozen pydantic model: its field values live here
    for name in type(entry).model_fields:
        value = fields.get(name)
        if hasattr(value, "_units"):
            fields[name] = _traced_quantity(value, entry, name, None)
        elif (
            isinstance(value, dict)
            and name != "provenance"
            and any(hasattr(item, "_units") for item in value.values())
        ):
            fields[name] = {
                key: _traced_quantity(item, entry, name, key) if hasattr(item, "_units") else item
                for key, item in value.items()
            }


def _traced_quantity(value: Any, entry: Any, name: str, key: str | None) -> Any:
    magnitude = value._magnitude
    if getattr(magnitude, "_origins", None):
        return value
    out = traced_magnitude(magnitude, (CatalogOrigin(entry, name, key),))
    if out is magnitude:  # an array magnitude: it cannot carry an origin
        return value
    return value.__class__(out, value._units)


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

    Raises
    ------
    ParameterError
        For a bool or an int from -5 to 256: Python shares one object per such value,
        so every 8 in the program would take this origin. Use :func:`sourced`, whose
        value is an object of its own and keeps its origin through arithmetic.

    Notes
    -----
    Identity is lost by arithmetic; a traced value (:func:`sourced`, catalog Quantities,
    result fields) is the way to give a number an origin that lasts. This table serves
    objects handed out as they are (``Models.X.total_params``, a float solvers also use).
    """
    if isinstance(value, bool) or (type(value) is int and -5 <= value <= 256):
        from mlsys.core.errors import ParameterError

        raise ParameterError(
            "value",
            value,
            "an object of its own (a Quantity, a float, a large int)",
            "Use sourced(value, source): small ints are shared by the whole program.",
        )
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
    """The origin of a value about to be formatted, or None.

    An origin recorded for this very object (:func:`register_value`) comes first; then
    the origins its magnitude carries through arithmetic (one origin as it is, several
    as a :class:`DerivedOrigin`).

    Parameters
    ----------
    value : Any
        A Quantity or number about to be formatted.

    Returns
    -------
    CatalogOrigin, ResultOrigin, TextOrigin, DerivedOrigin or None
    """
    key = id(value)
    hit = _CATALOG.get(key) or _RECENT.get(key)
    if hit is not None and hit[0] is value:
        return hit[1]
    found = getattr(getattr(value, "_magnitude", value), "_origins", None)
    if not found:
        return None
    return found[0] if len(found) == 1 else DerivedOrigin(found)


def origins_of(value: Any) -> tuple[Any, ...]:
    """Every origin a value carries, each once (empty when it has none).

    Parameters
    ----------
    value : Any
        A number or Quantity.

    Returns
    -------
    tuple of CatalogOrigin, ResultOrigin or TextOrigin
        The identity-registered origin first (if any), then those its magnitude carries.
    """
    found = getattr(getattr(value, "_magnitude", value), "_origins", None) or ()
    hit = _CATALOG.get(id(value)) or _RECENT.get(id(value))
    if hit is not None and hit[0] is value:
        return merge((hit[1],), found)
    return found


def sourced(value: Any, source: str) -> Any:
    """``value`` marked with where it comes from, an origin it keeps through arithmetic.

    For a chapter's own numbers (``gpus = sourced(1024, "Meta 2024, Llama 3 paper §3.3")``):
    formatted by :func:`~mlsys.core.fmt.fmt`, ``count``, ``pct``, ``times`` or ``money``,
    the number, and any number computed from it, shows the source on hover.

    Parameters
    ----------
    value : int, float, numpy scalar or pint.Quantity
        The number, in any unit (a Quantity keeps its unit).
    source : str
        Where it comes from, as the tooltip should say it (a paper and section, a
        datasheet, "author's assumption").

    Returns
    -------
    TracedInt, TracedFloat or pint.Quantity
        A new object equal to ``value`` (same type family: an int stays an int) whose
        magnitude carries a :class:`TextOrigin` before any origin ``value`` already had.

    Raises
    ------
    ParameterError
        When ``source`` is not a non-empty string, or ``value`` is not one number or
        Quantity (booleans, strings, arrays).

    Examples
    --------
    >>> gpus = sourced(1024, "assumed cluster size")
    >>> gpus == 1024, isinstance(gpus, int)
    (True, True)
    >>> origin_of(gpus * 8).describe()
    'assumed cluster size'
    """
    from mlsys.core.errors import ParameterError

    if not isinstance(source, str) or not source.strip():
        raise ParameterError("source", source, "a non-empty string naming where the value is from")
    mine = (TextOrigin(source),)
    magnitude = getattr(value, "_magnitude", None)
    if magnitude is not None and hasattr(value, "_units"):
        out = traced_magnitude(magnitude, mine)
        if out is magnitude:  # an array, or not a number
            raise ParameterError(
                "value", value, "one number or a Quantity of one number, not an array"
            )
        return value.__class__(_front(out, mine), value._units)
    if isinstance(value, (bool, str)):
        raise ParameterError("value", value, "an int, a float or a pint Quantity")
    out = traced(value, mine)
    if out is value and not isinstance(value, (TracedFloat, TracedInt)):
        raise ParameterError("value", value, "an int, a float or a pint Quantity")
    return _front(out, mine)


def _front(value: Any, mine: tuple[Any, ...]) -> Any:
    """A new traced number equal to ``value`` whose origins start with ``mine``."""
    return type(value)(value._plain(), merge(mine, value._origins))


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

_HEADLINE_CHARS = 110  # the first line of a hover box: what the number is, where from
_URL = re.compile(r"https?://[^\s<>\"')\]]+")


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters between words, with "…" if cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = max(head.rfind("; "), head.rfind(" "))
    return (head[:cut] if cut > limit // 3 else head).rstrip(" ;,:") + "…"


@lru_cache(maxsize=2048)
def _escaped_title(title: str, limit: int = MAX_TITLE_CHARS) -> str:
    """The title cut to ``limit`` characters between words, escaped for a Pandoc attribute."""
    return _cut(title, limit).translate(_TITLE_ESCAPES)


def _headline(origin: Origin) -> str:
    """One short line: what the number is and where it comes from (the hover box's head)."""
    if isinstance(origin, CatalogOrigin):
        text = f"{origin.entry.label}, {origin.what}: {_brief(origin.source)}"
    elif isinstance(origin, ResultOrigin):
        head = origin.solver + (f" → {origin.field}" if origin.field else "")
        labels = [e.label for e in origin.entries]
        text = f"{head}, computed from {', '.join(labels)}" if labels else head
    elif isinstance(origin, DerivedOrigin):
        names: list[str] = []
        for part in origin.parts:
            name = (
                f"{part.entry.label} {part.what}"
                if isinstance(part, CatalogOrigin)
                else _headline(part)
            )
            if name not in names:
                names.append(name)
        text = "Computed from " + "; ".join(names)
    else:
        text = origin.describe()
    return _cut(text, _HEADLINE_CHARS)


def _links(origin: Origin) -> list[str]:
    """The public addresses of the sources behind an origin, each once."""
    sources: list[Any] = []
    if isinstance(origin, CatalogOrigin):
        sources.append(origin.source)
    elif isinstance(origin, ResultOrigin):
        sources += [e.provenance_of("default") or _first(e) for e in origin.entries]
    elif isinstance(origin, DerivedOrigin):
        return list(dict.fromkeys(u for part in origin.parts for u in _links(part)))
    urls = [getattr(s, "url", None) for s in sources]
    urls += _URL.findall(origin.describe())
    return list(dict.fromkeys(u.rstrip(".,;") for u in urls if u))


def span(markdown: str, origin: Origin) -> str:
    """A Pandoc span carrying the origin: ``[3.35 TB/s]{.mlsys-num title="…"}``.

    The ``title`` is one short line (what the number is, where it comes from), cut
    between words; when the origin says more, ``data-detail`` holds the whole text (to
    :data:`MAX_TITLE_CHARS`) and ``data-links`` the addresses of its sources, which the
    ``mlsys`` Quarto extension shows on demand as links.

    Parameters
    ----------
    markdown : str
        The number as Markdown (dollar signs already escaped).
    origin : CatalogOrigin, ResultOrigin, TextOrigin or DerivedOrigin
        Where it came from.

    Returns
    -------
    str
        Markdown that Pandoc reads as ``<span class="mlsys-num" title="…">``; in LaTeX
        output the span is its text alone.

    Examples
    --------
    >>> span("8", TextOrigin("Meta (2024), Table 5"))
    '[8]{.mlsys-num title="Meta (2024), Table 5"}'
    """
    full = " ".join(origin.describe().split())
    head = _headline(origin)
    attrs = f'title="{_escaped_title(head)}"'
    if full != head:
        attrs += f' data-detail="{_escaped_title(full)}"'
    links = _links(origin)
    if links:
        attrs += f' data-links="{_escaped_title(" ".join(links), 10_000)}"'
    return f"[{markdown}]{{.mlsys-num {attrs}}}"


def split_span(markdown: str) -> tuple[str, str | None]:
    """Undo :func:`span`: the number's text and its origin's full text (None if plain).

    The text is as the formatting function returned it (the page's no-break spaces
    read as spaces again); the origin is the ``data-detail`` of the span, else its title.

    Parameters
    ----------
    markdown : str
        What an inline expression inserted.

    Returns
    -------
    (str, str or None)

    Examples
    --------
    >>> split_span('[3.35\u00a0TB/s]{.mlsys-num title="H100 \\\\"SXM\\\\""}')
    ('3.35 TB/s', 'H100 "SXM"')
    >>> split_span("[16,384]{.mlsys-num}"), split_span("16,384")
    (('16,384', None), ('16,384', None))
    """
    if markdown.startswith("[") and markdown.endswith("]{.mlsys-num}"):
        return markdown[1 : -len("]{.mlsys-num}")].replace("\u00a0", " "), None
    head = "]{.mlsys-num "
    cut = markdown.find(head)
    if not (markdown.startswith("[") and markdown.endswith('"}')) or cut < 0:
        return markdown, None
    attrs = _attributes(markdown[cut + len(head) : -1])
    text = markdown[1:cut].replace("\u00a0", " ")
    return text, attrs.get("data-detail", attrs.get("title"))


def _attributes(body: str) -> dict[str, str]:
    """``key="value"`` pairs of a Pandoc attribute list, backslash escapes undone."""
    out: dict[str, str] = {}
    i = 0
    while i < len(body):
        eq = body.find('="', i)
        if eq < 0:
            break
        key = body[i:eq].strip()
        j, value = eq + 2, []
        while j < len(body) and body[j] != '"':
            if body[j] == "\\" and j + 1 < len(body):
                j += 1
            value.append(body[j])
            j += 1
        out[key] = "".join(value)
        i = j + 1
    return out
