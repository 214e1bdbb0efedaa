"""Every name the textbook's older chapters import resolves, has its call shape and its value.

The textbook *Machine Learning Systems* (harvard-edge/cs249r_book) imports about 210 names
from ``mlsys``, ``mlsys.constants``, ``mlsys.formulas`` and ``mlsys.formatting``; its newer
chapters (the ``mlsysim`` era) about 85 more unit, constant, formula and formatting names.
The facts about those names (module, name, kind, the value the book's own package gave
it) are copied into ``data/`` from the measurement in ``shared/compat``; no code of the
book is used. For each value: mlsys's value equals the book's to the book's printed
precision (0.5 %), or ``mlsys.constants.book_differences()`` records the book's value and
the reason mlsys's differs.
"""

from __future__ import annotations

import csv
import importlib
import inspect
import re
from pathlib import Path

import pint
import pytest

import mlsys
import mlsys.constants as C
from mlsys.core.units import Q_

# Old mlsys spellings among the book's names warn; that is tested in test_upstream_behaviour.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DATA = Path(__file__).with_name("data")
BOOK_PRECISION = 5e-3  # the book prints 3-4 digits (989 for 989.4 TFLOP/s)


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(newline="") as handle:
        return list(csv.DictReader(handle))


UPSTREAM = _rows("upstream_names.csv")
SIGNATURES = {
    (r["module"], r["name"]): r["params"].split() for r in _rows("upstream_signatures.csv")
}
MLSYSIM_ERA = _rows("mlsysim_era_names.csv")
ATTRIBUTE_PATHS = [r["path"] for r in _rows("upstream_attribute_paths.csv")]

# Names of the top level that serve the newest era of the textbook: registry views and
# chapter helpers. Skipped (not passed) while absent, so the report shows them.

_POSITIONAL_ONLY_MATCH = {"md_math", "sci"}

# The book's unit spellings -> mlsys's registry (counts are the book's dimensionless ones).
_BOOK_TOKENS = {
    "TFLOPs": "teraflop_count",
    "flop": "flop_count",
    "param": "parameter_count",
    "dollar": "dollar_count",
    "NS": "ns",
}


def _book_quantity(text: str) -> pint.Quantity:
    """The book's printed value ("312 TFLOPs / s", "1.1 pJ / flop") as a Quantity."""
    pattern = r"\b(" + "|".join(_BOOK_TOKENS) + r")\b"
    return Q_(re.sub(pattern, lambda m: _BOOK_TOKENS[m.group(1)], text))


def _resolve(module: str, name: str):
    return getattr(importlib.import_module(module), name)


def _close(value: float, book: float) -> bool:
    return value == pytest.approx(book, rel=BOOK_PRECISION, abs=1e-12)


# Sizes of the book's units, derived from their definitions (SI prefixes, 2^30 for GiB,
# 3600 s an hour), not read from the code under test.
UNIT_SIZES = {
    "second": (1, "s"),
    "NS": (1e-9, "s"),
    "US": (1e-6, "s"),
    "MS": (1e-3, "s"),
    "hour": (3600, "s"),
    "day": (86400, "s"),
    "byte": (1, "byte"),
    "KB": (1e3, "byte"),
    "MB": (1e6, "byte"),
    "GB": (1e9, "byte"),
    "TB": (1e12, "byte"),
    "PB": (1e15, "byte"),
    "GiB": (2**30, "byte"),
    "Gbps": (1e9, "bit/s"),
    "watt": (1, "W"),
    "joule": (1, "J"),
    "meter": (1, "m"),
    "flop": (1, ""),
    "MFLOPs": (1e6, ""),
    "GFLOPs": (1e9, ""),
    "TFLOPs": (1e12, ""),
    "PFLOPs": (1e15, ""),
    "ZFLOPs": (1e21, ""),
    "param": (1, ""),
    "Kparam": (1e3, ""),
    "Mparam": (1e6, ""),
    "Bparam": (1e9, ""),
    "USD": (1, ""),
}


@pytest.mark.parametrize("row", UPSTREAM, ids=[f"{r['module']}.{r['name']}" for r in UPSTREAM])
def test_upstream_name(row):
    module, name, kind, book = row["module"], row["name"], row["kind"], row["book_value"]
    value = _resolve(module, name)
    assert value is not None
    differences = C.book_differences()
    if kind == "unit":
        assert isinstance(value, pint.Unit), name
        size, base = UNIT_SIZES[name]
        assert Q_(1, value).m_as(base) == pytest.approx(size, rel=1e-12), name
    elif kind == "function":
        assert callable(value)
        expected = SIGNATURES.get((module, name))
        if expected:
            # an adapter of an old spelling lists its argument names; functions their signature
            params = list(getattr(value, "arg_names", None) or inspect.signature(value).parameters)
            by_name = [p for p in params if p in expected] == expected
            # mlsys's own md_math(value, ...) and sci(value, digits, ..., *, precision) take
            # the book's arguments positionally (and sci the book's precision= by name)
            positional = len(params) >= len(expected) and name in _POSITIONAL_ONLY_MATCH
            assert by_name or positional, (name, params)
    elif kind in ("number", "quantity"):
        if name in differences:
            # mlsys serves its catalog's value; the record keeps what the book printed
            recorded = differences[name]["book"]
            if kind == "quantity":
                book_q = _book_quantity(book)
                assert _close(_book_quantity(recorded).m_as(book_q.units), book_q.magnitude)
                assert value.dimensionality == book_q.dimensionality, name
            else:
                assert float(recorded) == pytest.approx(float(book))
            assert len(differences[name]["reason"]) > 30
        elif kind == "quantity":
            expected = _book_quantity(book)
            assert isinstance(value, pint.Quantity), name
            assert _close(value.m_as(expected.units), expected.magnitude), (name, value, book)
        else:
            assert isinstance(value, (int, float)) and not isinstance(value, bool), name
            assert _close(float(value), float(book)), (name, value, book)
    elif kind == "module":
        assert value is C
    elif kind == "class":
        assert value is getattr(mlsys, name)


@pytest.mark.parametrize("row", MLSYSIM_ERA, ids=[r["path"] for r in MLSYSIM_ERA])
def test_mlsysim_era_name(row):
    path, kind = row["path"], row["kind"]
    name = path.removesuffix("()").split(".")[0].split("(")[0]
    if kind == "units_constants":
        if path.startswith("ureg."):
            unit = getattr(C.ureg, path.split(".", 1)[1])
            assert Q_(1, unit).dimensionality is not None
        else:
            assert getattr(C, name) is not None
    elif kind == "physics_formula":
        import mlsys.formulas as F

        assert callable(getattr(F, name))
    else:
        import mlsys.formatting as fmt_module

        target = {"fmt_qty": "fmt_qty", "fmt().replace": "fmt"}.get(name, name)
        assert callable(getattr(fmt_module, target))


@pytest.mark.parametrize("path", ATTRIBUTE_PATHS)
def test_attribute_path(path):
    obj = mlsys
    for part in path.split("."):
        obj = getattr(obj, part)
    assert obj is not None


def test_every_difference_is_a_served_name():
    # A recorded difference names a value this module serves, from a cited source.
    for name in C.book_differences():
        assert C.provenance(name)["source"] in ("catalog", "book_assumptions.toml"), name
        assert getattr(C, name) is not None


def test_book_differences_numbers():
    # The documented corrections, from the catalog's sources.
    # B200 dense FP16 is half the 2:4-sparse 4,500 TFLOP/s the book printed.
    assert C.B200_FLOPS_FP16_TENSOR.m_as(C.TFLOPs / C.second) == pytest.approx(4500 / 2)
    # ResNet-50: 4.09e9 multiply-adds (torchvision) x 2 FLOPs each = 8.18e9 FLOPs.
    assert C.RESNET50_FLOPs.m_as(C.flop) == pytest.approx(2 * 4.09e9)
    # MobileNetV2: 300e6 multiply-adds (Sandler et al. 2018, Table 4) x 2 FLOPs each.
    assert C.MOBILENETV2_FLOPs.m_as(C.flop) == pytest.approx(2 * 300e6)
    # H100: 81,559 MiB exposed = 79.65 GiB, not 80 GiB.
    assert C.H100_MEM_CAPACITY.m_as(C.GiB) == pytest.approx(81559 / 1024)


def test_nvlink_names_keep_the_books_convention():
    # A convention, not a correction: the book's name sums both directions as NVIDIA's
    # datasheets do; mlsys's accessor stays per direction (what collective formulas use).
    # Links x 25 GB/s per direction x 2 directions: NVLink 4 (18), 3 (12), 2 (6 links).
    for name, key, links in (
        ("NVLINK_H100_BW", "H100", 18),
        ("NVLINK_A100_BW", "A100_80GB", 12),
        ("NVLINK_V100_BW", "V100", 6),
    ):
        per_direction = mlsys.Hardware.get(key).scaleup_bandwidth.m_as("GB/s")
        assert per_direction == pytest.approx(links * 25), key
        assert getattr(C, name).m_as("GB/s") == pytest.approx(2 * links * 25), name
        assert name in C.book_conventions() and name not in C.book_differences()
        info = C.provenance(name)
        assert info["source"] == "catalog" and "book_value" not in info
        assert "both directions" in info["convention"].lower()
        assert info["mlsys_accessor"].startswith(f"Hardware.{key}.scaleup_bandwidth")
    # the fleet appendix's check: NVLink over an NDR port (50 GB/s) is more than 10x
    assert int(C.NVLINK_H100_BW.m_as("GB/s") / C.INFINIBAND_NDR_BW_GBS) == 18


def test_conventions_and_differences_are_disjoint_and_served():
    conventions, differences = C.book_conventions(), C.book_differences()
    assert not set(conventions) & set(differences)
    for name, row in conventions.items():
        assert getattr(C, name) is not None
        assert len(row["book"]) > 30 and len(row["mlsys"]) > 30, name
