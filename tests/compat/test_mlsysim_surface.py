"""The textbook package's whole public surface, resolved on mlsys.

``data/mlsysim_surface.csv`` inventories the public surface of the book's own package
(harvard-edge/cs249r_book, ``mlsysim/mlsysim/`` at commit e0fde03): every name of its
units/constants module, its physics and older formula modules, its formatter, its top
level, and every registry path (tiers, entries and the fields chapters read). Its first
line states the count and where it was read. Each row says whether mlsys serves it now
(``mlsys_now``); this test holds both directions: a served row resolves with the book's
call shape, and a row marked "not yet" still fails (flip it when it starts to resolve,
so the count of what is missing is always the true one).
"""

from __future__ import annotations

import re

import pytest

from mlsys.core.units import Q_, to_book_counts
from tests.compat._surface import header, lookup, resolve, rows

ROWS = rows()
SERVED = [r for r in ROWS if r["mlsys_now"] == "served"]
NOT_YET = [r for r in ROWS if r["mlsys_now"] != "served"]


def _id(row: dict[str, str]) -> str:
    return f"{row['module']}:{row['path']}"


def test_header_states_count_and_source():
    first = header()
    assert "e0fde03f4a5570d4fb4d45686762ebcbdfc85ca7" in first
    count = int(re.search(r": (\d+) names and paths", first).group(1))
    assert count == len(ROWS)
    served = int(re.search(r"\((\d+) served by mlsys", first).group(1))
    assert served == len(SERVED)
    assert all(r["read_from"] for r in ROWS)


def test_inventory_covers_every_group_of_the_package():
    # the registries and modules the package exports at its top level (mlsysim/__init__.py)
    paths = {r["path"].split(".")[0] for r in ROWS if r["module"] == "mlsysim"}
    for group in ("Hardware", "Models", "Systems", "Infrastructure", "Literature", "Scenarios",
                  "Applications", "Platforms", "Datasets", "Engine", "fmt", "count"):  # fmt: skip
        assert group in paths, group
    modules = {r["module"] for r in ROWS}
    assert modules >= {"mlsysim.core.constants", "mlsysim.physics", "mlsysim.fmt",
                       "mlsysim.core.formulas"}  # fmt: skip


@pytest.mark.parametrize("row", SERVED, ids=_id)
def test_served_row_resolves_with_its_call_shape(row):
    assert resolve(row) is None, resolve(row)


@pytest.mark.parametrize("row", NOT_YET, ids=_id)
def test_not_yet_row_is_still_missing(row):
    assert resolve(row) is not None, "mlsys serves this now: mark it 'served' in the data"


# -- values of the constants: the book's definition, in mlsys's registry ------------------
_BOOK_TOKENS = {
    "flop": "flop_count",
    "param": "parameter_count",
    "dollar": "dollar_count",
    "OPS": "(count / second)",
}


def _book_quantity(text: str):
    expr = re.sub(r"[A-Za-z_]+", lambda m: _BOOK_TOKENS.get(m.group(0), m.group(0)), text)
    return to_book_counts(Q_(expr))


VALUED = [r for r in SERVED if r["unit_value"] and r["kind"] in ("unit", "scalar", "quantity")]


@pytest.mark.parametrize("row", VALUED, ids=_id)
def test_constant_has_the_books_value(row):
    ours = lookup(row)
    if row["kind"] == "scalar":
        assert float(ours) == pytest.approx(float(row["unit_value"]), rel=1e-12)
        return
    ours_q = to_book_counts(Q_(1.0, ours) if row["kind"] == "unit" else ours)
    book = _book_quantity(row["unit_value"])
    assert ours_q.m_as(book.units) == pytest.approx(book.magnitude, rel=1e-9)
