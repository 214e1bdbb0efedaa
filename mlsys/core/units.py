"""The one pint unit registry of mlsys, and the converters at the edges of the API.

Every Quantity mlsys makes or accepts belongs to :data:`ureg`. Besides pint's defaults
it has dimensions of its own for the things ML-systems arithmetic must never mix up:

* ``flop`` (``[compute]``): floating-point operations;
* ``token`` (``[token]``) and ``parameter`` (``[parameter]``);
* ``USD`` (``[currency]``);
* ``gCO2e`` / ``kgCO2e`` / ``tCO2e`` (``[co2e]``): carbon as mass of CO2-equivalent;
* ``bit`` / ``byte`` (``[information]``): pint >= 0.25 treats information as
  dimensionless; mlsys restores it as a dimension so ``1 GB + 1`` and a bandwidth given
  in ``GB`` are errors. SI (``GB``) and IEC (``GiB``) prefixes both work.

The textbook *Machine Learning Systems* (harvard-edge/cs249r_book) counts FLOPs,
parameters, tokens and dollars as plain numbers instead; :func:`to_book_counts` turns a
Quantity into that arithmetic (``flop_count``, ``parameter_count``, ``token_count``,
``dollar_count``: dimensionless units of size one) for the book's names in
:mod:`mlsys.constants`, without weakening the dimensions above.

The registry is built on first use, not at import, from the definitions that ship with
pint and mlsys (about 10 ms: pint's parse of the text ships with mlsys as data and is
used when it was made from this very text and pint, :mod:`mlsys.core._units_parsed`;
otherwise pint parses the text, about 0.1 s); nothing is read from or written to a cache.
pint's unit systems, contexts and table of units by dimension are built when first used.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import pint

from mlsys.core.errors import ParameterError, UnitError

__all__ = [
    "ureg",
    "Q_",
    "Quantity",
    "get_registry",
    "cache_dir",
    "as_si",
    "as_quantity",
    "si_unit",
    "to_book_counts",
    "BOOK_COUNT_UNITS",
    "from_book_count_units",
    "book_count_quantity_class",
]

_OWN_DEFINITIONS = Path(__file__).with_name("units_definitions.txt")


def cache_dir() -> None:
    """Where mlsys keeps start-up caches on disk: nowhere, so always None.

    mlsys reads nothing at run time but the files it ships and the arguments it is
    given: no cache, so nothing on disk can change a number or run code. Kept so that
    code which asked for the folder keeps working.

    Returns
    -------
    NoneType
        No folder: mlsys keeps no cache.
    """
    return None


def _definitions_text() -> str:
    """pint's defaults with ``bit`` as ``[information]``, plus our own units."""
    pint_dir = Path(pint.__file__).parent
    default_text = (pint_dir / "default_en.txt").read_text(encoding="utf-8")
    own_text = _OWN_DEFINITIONS.read_text(encoding="utf-8")
    patched = default_text.replace("\nbit = []", "\nbit = [information]")
    # flexparser refuses absolute @import paths, so the constants are inlined.
    constants = (pint_dir / "constants_en.txt").read_text(encoding="utf-8")
    patched = patched.replace("@import constants_en.txt", constants)
    return patched + "\n\n" + own_text


_ALL = object()  # _LazyTable._build: build every pending entry


class _LazyTable(dict):  # type: ignore[type-arg]
    """One of pint's tables (unit systems, contexts) whose entries are built when read.

    pint builds its seven unit systems (``mks``, ``cgs``, ``imperial`` ...) and its
    contexts (``spectroscopy``, ``Boltzmann`` ...) while it loads the definitions,
    computing the root units or dimensionality of every unit each one names: milliseconds
    of a fresh interpreter that no catalog number needs. Here each definition waits in
    ``_pending`` until the table is read: a lookup of one key (``ureg.get_system("mks")``,
    ``ureg.enable_contexts("sp")``) builds pending entries in file order until that key
    is there; anything else (iteration, ``len``, deletion) builds them all. Built in file
    order, by pint's own adders, the table ends up exactly as pint's eager load leaves it.
    """

    __slots__ = ("_building", "_lock", "_pending")

    def __init__(self) -> None:
        super().__init__()
        self._pending: list[Any] = []  # zero-argument builders, in definition order
        self._building = False
        self._lock = threading.RLock()  # two threads reading first: one builds, one waits

    def _build(self, until: Any = _ALL) -> None:
        if not self._pending:
            return
        with self._lock:
            if self._building:
                return  # read from inside a build (pint checks that a new name is new)
            self._building = True
            try:
                while self._pending and (until is _ALL or not dict.__contains__(self, until)):
                    self._pending[0]()
                    self._pending.pop(0)  # a build that raised stays pending, raises again
            finally:
                self._building = False

    def __getitem__(self, key: Any) -> Any:
        self._build(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._build(key)
        return super().__contains__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._build(key)
        return super().get(key, default)

    def __delitem__(self, key: Any) -> None:
        self._build()
        super().__delitem__(key)

    def pop(self, key: Any, *default: Any) -> Any:
        self._build()
        return super().pop(key, *default)

    def __iter__(self) -> Iterator[Any]:
        self._build()
        return super().__iter__()

    def __len__(self) -> int:
        self._build()
        return super().__len__()

    def __repr__(self) -> str:
        self._build()
        return super().__repr__()

    def keys(self) -> Any:
        self._build()
        return super().keys()

    def values(self) -> Any:
        self._build()
        return super().values()

    def items(self) -> Any:
        self._build()
        return super().items()


def _one_word(text: str) -> bool:
    """An ASCII identifier (``[A-Za-z_][A-Za-z0-9_]*``): one NAME token to tokenize."""
    return text.isascii() and text.isidentifier()  # no regex: its compile costs 0.1 ms


@lru_cache(maxsize=1)
def _equivalents_on_read() -> type:
    """pint's ``RegistryCache`` whose table of units by dimension is built when read.

    pint's start-up computes the root units and dimensionality of every one of its 431
    units to fill that table; the other tables fill on use with the same function. The
    first read of ``dimensional_equivalents`` runs pint's own build
    (``GenericPlainRegistry._build_cache``) on the registry and keeps its table, so the
    table is the one pint's eager build makes.
    """
    from pint.facets.plain.registry import GenericPlainRegistry, RegistryCache

    class _EquivalentsOnRead(RegistryCache):  # type: ignore[misc]
        def __init__(self, registry: Any) -> None:
            super().__init__()  # sets an empty table through the setter below
            self._registry: Any = registry
            self._equivalents: Any = None
            self._lock = threading.Lock()

        @property  # type: ignore[override]
        def dimensional_equivalents(self) -> Any:
            if self._equivalents is None:
                with self._lock:
                    if self._equivalents is None:
                        self._equivalents = self._full_build()
            return self._equivalents

        @dimensional_equivalents.setter
        def dimensional_equivalents(self, value: Any) -> None:
            self._equivalents = value

        def _full_build(self) -> Any:
            registry = self._registry
            current = registry._cache
            try:
                full = GenericPlainRegistry._build_cache(registry)
            finally:
                registry._cache = current
            self.root_units.update(full.root_units)
            self.dimensionality.update(full.dimensionality)
            self._registry = None  # no cycle kept: the table is all it was needed for
            return full.dimensional_equivalents

    return _EquivalentsOnRead


class _Registry(pint.UnitRegistry):
    """pint's ``UnitRegistry``, quicker to start; every unit and behaviour is pint's.

    Built from the definitions text in every process (nothing is read from disk but
    the files pint and mlsys ship; pint's parse of that text ships with mlsys as data,
    :mod:`mlsys.core._units_parsed`), with three things deferred until first needed:

    1. pint's table of dimensionally equivalent units, read only by
       ``get_compatible_units`` and by contexts: pint computes it for all of its units
       at start-up (a third of the build); here pint's own build runs when the table is
       first read (:func:`_equivalents_on_read`).
    2. Unit systems (``@system``) and contexts (``@context``) loaded with the
       definitions are built when their table is first read (:class:`_LazyTable`). One
       defined later (``ureg.define``, ``add_context``) is built at once, as pint does.
    3. A one-word unit name is named without pint's expression tokenizer.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._systems = _LazyTable()  # type: ignore[assignment]
        self._contexts = _LazyTable()  # type: ignore[assignment]
        self._pint_preprocessors = list(self.preprocessors)  # pint's own (%, ‰, ×)
        self._loading_defaults = True

    def _after_init(self) -> None:
        super()._after_init()
        self._loading_defaults = False

    def load_definitions(self, file: Any, is_resource: bool = False) -> Any:
        if isinstance(file, _Parsed):  # what pint's own load does after it parses
            for definition in file.definitions:
                self._helper_dispatch_adder(definition)
            return file
        return super().load_definitions(file, is_resource)

    def _build_cache(self, loaded_files: Any = None) -> None:
        if getattr(self, "_loading_defaults", False):
            self._cache = _equivalents_on_read()(self)
            self._caches[()] = self._cache  # the context facet's no-context cache
            return
        super()._build_cache(loaded_files)

    def _switch_context_cache_and_units(self) -> None:
        # The first context switch reads the equivalents of the registry as loaded:
        # build them while no context's redefinitions are in place.
        self._caches[()].dimensional_equivalents  # noqa: B018 - builds it if pending
        super()._switch_context_cache_and_units()

    def define(self, definition: Any) -> None:
        # pint's eager build knows the units of the definitions alone: so do these.
        self._caches[()].dimensional_equivalents  # noqa: B018 - builds it if pending
        super().define(definition)

    def _register_definition_adders(self) -> None:
        super()._register_definition_adders()
        from pint.facets.context.definitions import ContextDefinition
        from pint.facets.system.definitions import SystemDefinition

        self._register_adder(SystemDefinition, self._add_system_when_read)
        self._register_adder(ContextDefinition, self._add_context_when_read)

    def _add_system_when_read(self, definition: Any) -> None:
        systems = self._systems
        if getattr(self, "_loading_defaults", False) and isinstance(systems, _LazyTable):
            systems._pending.append(lambda: self._add_pending_system(definition))
        else:
            self._add_system(definition)

    def _add_context_when_read(self, definition: Any) -> None:
        contexts = self._contexts
        if getattr(self, "_loading_defaults", False) and isinstance(contexts, _LazyTable):
            contexts._pending.append(lambda: self.add_context(definition))
        else:
            self.add_context(definition)

    def _add_pending_system(self, definition: Any) -> None:
        """pint's ``_add_system``, with root units whose text ignores the display format.

        pint checks that a unit a system replaces is a root unit by comparing its name
        with ``str()`` of its root unit, which follows the registry's default format:
        right while the file loads, wrong once mlsys has set ``"~P"`` (``"m"`` is not
        ``"meter"``). A units container prints its full names in any format.
        """
        from pint.errors import DefinitionError
        from pint.util import to_units_container

        def root_units(name: Any) -> tuple[Any, Any]:
            return self._get_root_units(to_units_container(name, self))

        if definition.name in dict.keys(self._systems):
            raise ValueError(f"System {definition.name} already present in registry")
        try:
            self.System.from_definition(definition, root_units)
        except KeyError as exc:
            raise DefinitionError(f"unknown dimension {exc} in context") from None

    def _parse_units_as_container(
        self, input_string: str, as_delta: bool = True, case_sensitive: bool = True
    ) -> Any:
        # One word ("terabyte", "second", "W") is one unit to the power 1. pint gets there
        # through its expression tokenizer (Python's tokenize, whose first use compiles
        # a large regular expression: ~3 ms of a fresh interpreter) and then names the
        # word with get_name, as here. Anything else (a product, a power, "nan", text a
        # user's preprocessor may rewrite) goes through pint's own parser.
        if (
            _one_word(input_string)
            and input_string.lower() != "nan"
            and self.preprocessors == getattr(self, "_pint_preprocessors", None)
        ):
            name = self.get_name(input_string, case_sensitive=case_sensitive)
            return self.UnitsContainer({name: 1} if name else {})
        return super()._parse_units_as_container(input_string, as_delta, case_sensitive)


class _Parsed:
    """pint's definition objects for the definitions text, as shipped (``_units_parsed``)."""

    __slots__ = ("definitions",)

    def __init__(self, definitions: list[Any]) -> None:
        self.definitions = definitions


def _new_registry(*, shipped: bool = True) -> pint.UnitRegistry:
    """A fresh registry of the mlsys definitions.

    With ``shipped`` (the default) and a shipped parse made from this very text and pint
    (:mod:`mlsys.core._units_parsed`), pint's adders take its definition objects (about
    10 ms); otherwise pint parses the text (about 0.1 s). Either way the adders run on
    the same definitions in the same order.
    """
    text = _definitions_text()
    source: Any = None
    if shipped:
        from mlsys.core import _units_parsed

        definitions = _units_parsed.load(text)
        source = None if definitions is None else _Parsed(definitions)
    if source is None:
        source = text.splitlines()  # pint reads a list of lines as it reads a file
    try:
        return _Registry(source)
    except Exception:  # pragma: no cover - pint's internals moved: pint's own registry
        return pint.UnitRegistry(text.splitlines())


def _write_parsed(path: str | None = None) -> str:
    """Write pint's parse of the current definitions text (:mod:`mlsys.core._units_parsed`).

    A maintainer's command, after changing ``units_definitions.txt`` or upgrading pint.
    """
    import json

    from mlsys.core import _units_parsed

    text = _definitions_text()
    parsed = _units_parsed.parse(text)
    content = _units_parsed.encode(parsed, text)
    if _units_parsed.decode(json.loads(json.dumps(content))) != parsed:  # pragma: no cover
        raise RuntimeError("the encoded definitions do not rebuild pint's parse")
    target = path or _units_parsed.PATH
    with open(target, "w", encoding="utf-8") as file:
        json.dump(content, file, ensure_ascii=False, separators=(",", ":"))
        file.write("\n")
    return target


@lru_cache(maxsize=1)
def get_registry() -> pint.UnitRegistry:
    """Return the mlsys unit registry, building it on first call.

    From the definitions text (pint's defaults with ``bit`` as ``[information]``, and
    mlsys's own units), once per process, through pint's parse of it shipped with mlsys
    (:mod:`mlsys.core._units_parsed`) when that was made from this very text; nothing is
    read from or written to a cache.
    It has every pint default unit and behaves as ``pint.UnitRegistry`` of the same
    definitions (:class:`_Registry` says what it builds later than pint would).

    Returns
    -------
    pint.UnitRegistry
        The registry, also installed as pint's application registry so that
        Quantities made by ``pint.Quantity`` elsewhere interoperate with mlsys ones.
    """
    registry = _new_registry()
    registry.formatter.default_format = "~P"
    registry.autoconvert_offset_to_baseunit = True
    pint.set_application_registry(registry)
    return registry


class _LazyRegistry:
    """Stand-in for the registry that builds it on first attribute access."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return getattr(get_registry(), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return get_registry()(*args, **kwargs)

    def __getitem__(self, item: str) -> Any:
        return get_registry()[item]

    def __contains__(self, item: str) -> bool:
        return item in get_registry()

    def __repr__(self) -> str:
        return "<mlsys unit registry>"


ureg: Any = _LazyRegistry()
"""The mlsys unit registry (lazily built; behaves as a ``pint.UnitRegistry``)."""


def Q_(value: Any, units: Any = None) -> pint.Quantity:
    """Make a Quantity in the mlsys registry: ``Q_(3.35, "TB/s")`` or ``Q_("3.35 TB/s")``.

    Parameters
    ----------
    value : float, ndarray or str
        Magnitude, or a string holding magnitude and unit.
    units : str or pint.Unit, optional
        Unit of ``value``; dimensionless when omitted and ``value`` is a number.

    Returns
    -------
    pint.Quantity
    """
    return get_registry().Quantity(value, units)


Quantity = pint.Quantity


@lru_cache(maxsize=512)
def _unit(unit: str) -> Any:
    return get_registry().Unit(unit)


@lru_cache(maxsize=512)
def _si_factor(unit: str) -> tuple[float, Any]:
    """Factor from ``unit`` to its SI base unit and that base unit's dimensionality."""
    registry = get_registry()
    q = registry.Quantity(1.0, unit)
    base = q.to_base_units()
    return float(base.magnitude), q.dimensionality


@lru_cache(maxsize=1024)
def _factor(units: Any, unit: str) -> float | None:
    """Multiplicative factor from ``units`` to ``unit`` (None for offset units like degC)."""
    registry = get_registry()
    one = registry.Quantity(1.0, units)
    if not one._is_multiplicative:
        return None
    return float(one.m_as(_unit(unit)))


def _convert(value: pint.Quantity, unit: str) -> Any:
    # pint's m_as costs tens of microseconds; a cached factor per unit pair costs one.
    if value._REGISTRY is get_registry():
        factor = _factor(value._units, unit)
        if factor is not None:
            return value._magnitude * factor
    return value.m_as(_unit(unit))


def si_unit(unit: str) -> str:
    """The base unit that ``as_si`` returns magnitudes in, for a unit string.

    Parameters
    ----------
    unit : str
        Any unit pint understands, e.g. ``"TB/s"``.

    Returns
    -------
    str
        Base-unit spelling, e.g. ``"bit / second"``.
    """
    return str(get_registry().Quantity(1.0, unit).to_base_units().units)


def as_si(
    value: Any,
    unit: str,
    name: str = "value",
    *,
    allow_zero: bool = True,
    allow_negative: bool = False,
) -> Any:
    """Convert an input to a float (or ndarray) in ``unit``, checking its dimension.

    This is the one door through which Quantities enter the inner, float-only code.
    A plain number is taken to be in ``unit`` already; a Quantity or a string such as
    ``"3.35 TB/s"`` is converted; a wrong dimension, NaN, infinity, zero or a negative
    value raises an error that names the parameter.

    Parameters
    ----------
    value : float, int, ndarray, str or pint.Quantity
        The input.
    unit : str
        The unit the caller computes in (e.g. ``"byte/s"``); ``value`` is returned as a
        magnitude in this unit, so pick SI base-like units for inner code.
    name : str
        Parameter name, quoted in error messages.
    allow_zero : bool
        Whether a zero magnitude is legal.
    allow_negative : bool
        Whether negative magnitudes are legal.

    Returns
    -------
    float or ndarray
        Magnitude in ``unit``.

    Raises
    ------
    UnitError
        When the dimension of ``value`` is not that of ``unit``.
    ParameterError
        When the value is NaN, infinite, zero (unless allowed) or negative (unless
        allowed), or is None.
    """
    import numpy as np

    if value is None:
        raise ParameterError(name, value, f"a number or Quantity in {unit}")
    if isinstance(value, str):
        try:
            value = get_registry().Quantity(value)
        except Exception as exc:
            raise UnitError(name, value, unit, detail=str(exc)) from None
    if isinstance(value, pint.Quantity):
        try:
            magnitude = _convert(value, unit)
        except pint.DimensionalityError:
            raise UnitError(name, value, unit) from None
        except Exception:
            # Quantity from another registry: go through its string form once.
            try:
                magnitude = get_registry().Quantity(value.magnitude, str(value.units)).m_as(unit)
            except Exception:
                raise UnitError(name, value, unit) from None
    else:
        magnitude = value
    if isinstance(magnitude, bool):
        raise ParameterError(name, value, f"a number in {unit}, not a boolean")
    if isinstance(magnitude, (int, float)):
        x = float(magnitude)
        if math.isnan(x) or math.isinf(x):
            raise ParameterError(name, value, f"a finite number in {unit}")
        if x == 0 and not allow_zero:
            raise ParameterError(name, value, f"a positive number in {unit}")
        if x < 0 and not allow_negative:
            what = "a positive" if not allow_zero else "a non-negative"
            raise ParameterError(name, value, f"{what} number in {unit}")
        return x
    try:
        arr = np.asarray(magnitude, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(name, value, f"a number or Quantity in {unit}") from None
    if not np.all(np.isfinite(arr)):
        raise ParameterError(name, value, f"finite numbers in {unit}")
    if not allow_zero and np.any(arr == 0):
        raise ParameterError(name, value, f"positive numbers in {unit}")
    if not allow_negative and np.any(arr < 0):
        raise ParameterError(name, value, f"non-negative numbers in {unit}")
    return arr


def as_quantity(value: Any, unit: str, name: str = "value") -> pint.Quantity:
    """Return ``value`` as a Quantity in ``unit`` (numbers are taken to be in ``unit``).

    Parameters
    ----------
    value : float, str or pint.Quantity
        The input.
    unit : str
        Expected unit; its dimension is checked.
    name : str
        Parameter name for error messages.

    Returns
    -------
    pint.Quantity
        In the unit given by the caller (a plain number gets ``unit``).
    """
    registry = get_registry()
    if isinstance(value, str):
        try:
            value = registry.Quantity(value)
        except Exception as exc:
            raise UnitError(name, value, unit, detail=str(exc)) from None
    as_si(value, unit, name, allow_negative=True)  # validates dimension and finiteness
    if isinstance(value, pint.Quantity):
        # Keep the unit the author wrote ("80 GB" stays in GB), in our registry.
        if value._REGISTRY is registry:
            return value
        return registry.Quantity(value.magnitude, str(value.units))
    return registry.Quantity(value, _unit(unit))


BOOK_COUNT_UNITS: dict[str, str] = {
    "flop": "flop_count",
    "parameter": "parameter_count",
    "token": "token_count",
    "US_dollar": "dollar_count",
}
"""mlsys count unit -> the book's dimensionless count unit of the same size."""

_COUNT_DIMENSIONS = {"[compute]": "flop", "[parameter]": "parameter", "[token]": "token"}
_COUNT_DIMENSIONS["[currency]"] = "US_dollar"

_MLSYS_COUNT_UNITS = {book: ours for ours, book in BOOK_COUNT_UNITS.items()}


@lru_cache(maxsize=256)
def from_book_count_units(units: Any) -> Any:
    """``units`` with the book's count units read as mlsys's (``flop_count`` -> ``flop``).

    The two are the same size, so only the name changes (a prefix is kept: ``Tflop_count /
    second`` -> ``TFLOP / second``). Display uses it: a Quantity of the book's counts then
    prints as mlsys's FLOPs, parameters, tokens and dollars do ("4.1 GFLOP", "312 TFLOP/s",
    "7 billion parameters"), not under the counts' internal names.

    Parameters
    ----------
    units : pint UnitsContainer
        A Quantity's ``_units``.

    Returns
    -------
    UnitsContainer
        The same container when no book count unit is in it.

    Examples
    --------
    >>> from mlsys.core.units import Q_
    >>> str(from_book_count_units(Q_(1.0, "Tflop_count / second")._units))
    'teraflop / second'
    """
    registry = get_registry()
    renamed = {}
    for name, power in units.items():
        prefix, unit_name, _ = registry.parse_unit_name(name)[0]
        ours = _MLSYS_COUNT_UNITS.get(unit_name)
        renamed[prefix + ours if ours else name] = power
    if list(renamed) == list(units):
        return units
    return registry.UnitsContainer(renamed)


@lru_cache(maxsize=256)
def _book_units(units: Any) -> tuple[float, Any] | None:
    """Factor and unit that replace mlsys's count units in ``units`` (None: nothing to do)."""
    registry = get_registry()
    factor = 1.0
    result = registry.Unit("")
    changed = False
    for name, power in units.items():
        dims = registry.Unit(name).dimensionality
        base = _COUNT_DIMENSIONS.get(next(iter(dims), "")) if len(dims) == 1 else None
        if base is None:
            result = result * registry.Unit(name) ** power
            continue
        changed = True
        prefix, unit_name, _ = registry.parse_unit_name(name)[0]
        if unit_name == base:
            # keep the prefix the author wrote: 989 TFLOP/s -> 989 Tflop_count/s
            result = result * registry.Unit(prefix + BOOK_COUNT_UNITS[base]) ** power
        else:  # another unit of the dimension (cent): convert to the base count
            factor *= registry.Quantity(1.0, name).m_as(base) ** power
            result = result * registry.Unit(BOOK_COUNT_UNITS[base]) ** power
    return (factor, result) if changed else None


def to_book_counts(q: Any) -> Any:
    """``q`` with FLOPs, parameters, tokens and dollars as plain counts (the book's arithmetic).

    mlsys gives ``flop``, ``parameter``, ``token`` and ``USD`` dimensions of their own, so
    ``Q_(175e9, "param") * 4 * ureg.byte`` cannot become megabytes. The textbook
    *Machine Learning Systems* (harvard-edge/cs249r_book) counts them as plain numbers;
    its chapters do that arithmetic. This returns the same amount with each such unit
    replaced by its dimensionless count unit of equal size (``flop_count``,
    ``parameter_count``, ``token_count``, ``dollar_count``; a prefix is kept), so the
    book's expressions work while mlsys's own registry keeps refusing ``flop + byte``.

    Parameters
    ----------
    q : pint.Quantity or float
        Any Quantity (magnitude a float or an array); other values are returned as they
        are.

    Returns
    -------
    pint.Quantity or float
        Equal amount, count dimensions removed: 989 TFLOP/s -> 989 Tflop_count/s, which
        converts to ``1/s``.

    Examples
    --------
    >>> params = to_book_counts(Q_(175e9, "parameter"))
    >>> (params * 4 * ureg.byte).m_as("GB")
    700.0
    >>> to_book_counts(Q_(989, "TFLOP/s")).m_as("1/s")
    989000000000000.0
    >>> to_book_counts(Q_(25.6e6, "parameter")).m_as("param")   # the book writes 'param'
    25600000.0
    """
    if not isinstance(q, pint.Quantity):
        return q
    if q._REGISTRY is not get_registry():
        q = get_registry().Quantity(q.magnitude, str(q.units))
    plan = _book_units(q._units)
    if plan is None:
        return q
    factor, unit = plan
    magnitude = q.magnitude * factor if factor != 1.0 else q.magnitude
    return book_count_quantity_class()(magnitude, unit)


@lru_cache(maxsize=1)
def book_count_quantity_class() -> type:
    """The Quantity class of :func:`to_book_counts` results.

    The book writes unit strings such as ``.m_as("param")`` or ``.m_as("flop")``; in
    mlsys's registry those names are dimensions of their own, so a count Quantity could
    not be converted to them. Quantities of this class (and every Quantity computed from
    them, since pint builds results with the operand's class) retry a failed conversion
    with the target read as the book's count (``"param"`` as ``param_count``); other
    Quantities of the registry are unchanged.

    Arithmetic with a Quantity in mlsys's own count dimensions reads that operand as the
    book's count too, whichever side it is on: the book writes
    ``n * ureg.flop / peak_flops`` with ``peak_flops`` a count rate (989.4 TFLOP/s for an
    H100 at FP16), and FLOPs over FLOP/s is seconds. Without this the quotient would keep
    ``flop / flop_count``, which no unit of time accepts. mlsys's own Quantities still
    refuse ``flop + byte``.

    Returns
    -------
    type
        A subclass of the registry's ``Quantity``.

    Examples
    --------
    >>> BookQ = book_count_quantity_class()
    >>> BookQ(3.0, "gigaflop_count").m_as("GFLOP")
    3.0
    >>> rate = BookQ(989.4, "teraflop_count / second")    # H100 dense FP16
    >>> round((Q_(1978.8e12, "flop") / rate).m_as("s"), 6)  # twice its one-second work
    2.0
    """
    base = get_registry().Quantity

    class BookCountQuantity(base):  # type: ignore[valid-type, misc]
        """A Quantity counted as the book counts: FLOPs, parameters and dollars as numbers."""

        def to(self, other: Any = None, *contexts: Any, **ctx_kwargs: Any) -> Any:
            try:
                return super().to(other, *contexts, **ctx_kwargs)
            except pint.DimensionalityError:
                if other is None or isinstance(other, pint.Quantity):
                    raise
                target = to_book_counts(get_registry().Quantity(1.0, other))
                if not isinstance(target, pint.Quantity) or target.units == _unit(str(other)):
                    raise
                converted = super().to(target.units, *contexts, **ctx_kwargs)
                return self.__class__(converted.magnitude / target.magnitude, target.units)

        # Python tries a subclass's reflected operator first, so ``plain / book`` lands
        # here as well as ``book / plain``. pint's reflected operators take the other
        # operand for a number; a Quantity on the left is computed from its own side.
        def __mul__(self, other: Any) -> Any:
            return super().__mul__(_as_book_operand(other))

        def __rmul__(self, other: Any) -> Any:
            if isinstance(other, pint.Quantity):
                return _as_book_operand(other).__mul__(self)
            return super().__rmul__(other)

        def __truediv__(self, other: Any) -> Any:
            return super().__truediv__(_as_book_operand(other))

        def __rtruediv__(self, other: Any) -> Any:
            if isinstance(other, pint.Quantity):
                return _as_book_operand(other).__truediv__(self)
            return super().__rtruediv__(other)

        def __add__(self, other: Any) -> Any:
            return super().__add__(_as_book_operand(other))

        def __radd__(self, other: Any) -> Any:
            if isinstance(other, pint.Quantity):
                return _as_book_operand(other).__add__(self)
            return super().__radd__(other)

        def __sub__(self, other: Any) -> Any:
            return super().__sub__(_as_book_operand(other))

        def __rsub__(self, other: Any) -> Any:
            if isinstance(other, pint.Quantity):
                return _as_book_operand(other).__sub__(self)
            return super().__rsub__(other)

    return BookCountQuantity


def _as_book_operand(other: Any) -> Any:
    """``other`` with mlsys's count dimensions read as the book's counts; else unchanged."""
    if isinstance(other, pint.Unit):
        one = get_registry().Quantity(1, other)
        counted = to_book_counts(one)
        return other if counted is one else counted
    return to_book_counts(other)
