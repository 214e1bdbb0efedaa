"""The error-band table (``mlsys/core/catalog/data/error_bands.toml``): read, parsed and
checked once per process, the same read-only mapping for every result that asks."""

from __future__ import annotations

import sys

import pytest

from mlsys.core.catalog import _tables, bands
from mlsys.core.catalog._tables import CatalogError
from mlsys.core.catalog.bands import ErrorBand, error_bands

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def test_the_bands_are_the_shipped_file_row_for_row():
    shipped = tomllib.loads((_tables.DATA_DIR / "error_bands.toml").read_text("utf-8"))
    got = error_bands()
    assert list(got) == list(shipped)  # file order kept
    for kind, row in shipped.items():
        assert got[kind] == ErrorBand(kind, row["band"], row["mean"], row["cases"])


def test_the_file_is_read_once_and_the_table_cannot_be_changed(monkeypatch):
    from mlsys import DistributedModel, Models
    from mlsys.core.catalog import Fabrics, Nodes
    from mlsys.core.types import Fleet

    reads = []

    def counting(filename):
        reads.append(filename)
        return _tables.load_table.__wrapped__(filename)  # a fresh parse of the file

    monkeypatch.setattr(bands, "load_table", counting)
    bands.error_bands.cache_clear()
    try:
        fleet = Fleet(node=Nodes.DGX_H100, count=2, fabric=Fabrics.IB_NDR)
        res = DistributedModel().solve(Models.Llama3_8B, fleet, batch_size=16)
        # 16 accelerators: the "9-256 accelerators" band, asked for five times
        answers = {res.error_band for _ in range(5)}
        assert answers == {error_bands()["training dense, 9-256 accelerators"].fraction}
        assert error_bands() is error_bands()
        assert reads == ["error_bands.toml"]
    finally:
        bands.error_bands.cache_clear()  # later tests read the file as shipped
    table = error_bands()
    with pytest.raises(TypeError):
        table["serving decode"] = ErrorBand("serving decode", 0.0, 0.0, 1)  # type: ignore[index]
    with pytest.raises(AttributeError):
        table["serving decode"].fraction = 0.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"band": 0.1, "mean": 0.05}, "expected the fields band, mean, cases"),
        ({"band": 0.1, "mean": 0.05, "cases": 3, "p50": 0.02}, "p50"),
        ({"band": -0.1, "mean": 0.05, "cases": 3}, "band=-0.1"),
        ({"band": float("nan"), "mean": 0.05, "cases": 3}, "band=nan"),
        ({"band": 0.1, "mean": "5%", "cases": 3}, "mean='5%'"),
        ({"band": 0.1, "mean": 0.05, "cases": 0}, "cases=0"),
        ({"band": 0.1, "mean": 0.05, "cases": 2.5}, "cases=2.5"),
        ({"band": True, "mean": 0.05, "cases": 3}, "band=True"),
        (0.1, "got float"),
    ],
)
def test_a_malformed_row_is_a_catalog_error_naming_the_kind_and_field(row, says):
    with pytest.raises(CatalogError, match="serving decode") as err:
        bands._parse_band("serving decode", row)
    assert says in str(err.value)


def test_a_well_formed_row_is_read_as_given():
    row = {"band": 0.2, "mean": 0.07, "cases": 12}
    assert bands._parse_band("k", row) == ErrorBand("k", 0.2, 0.07, 12)
    assert bands._parse_band("k", {**row, "band": 1}).fraction == 1.0  # an integer TOML value
