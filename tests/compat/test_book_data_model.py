"""The book's DataModel: the slowest data path against the ingestion rate, derived here."""

from __future__ import annotations

import math

import pytest

from mlsys import Q_, Hardware
from mlsys.compat.solvers import DataModel
from mlsys.core.errors import MlsysError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_h100_is_fed_by_its_drive_not_its_host_link():
    h100 = Hardware.Cloud.H100
    drive = h100.storage.bandwidth.m_as("B/s")
    link = h100.interconnect.bandwidth.m_as("B/s")
    assert drive < link  # the book's H100 drive (7 GB/s) is slower than PCIe Gen5 x16
    res = DataModel().solve(Q_(2, "GB/s"), h100)
    assert res.bottleneck == "Storage"
    assert res.supply_bw.m_as("B/s") == drive
    assert res.utilization == pytest.approx(2e9 / drive, rel=1e-12)
    assert res.margin.m_as("B/s") == pytest.approx(drive - 2e9, rel=1e-12)
    assert res.is_stalled is False


def test_a100_is_fed_by_its_host_link():
    a100 = Hardware.Cloud.A100  # the book gives it a host link and no drive
    res = DataModel().solve(Q_(16, "GB/s"), a100)
    link = a100.interconnect.bandwidth.m_as("B/s")
    assert res.bottleneck == "Interconnect" and res.supply_bw.m_as("B/s") == link
    assert res.utilization == pytest.approx(16e9 / link, rel=1e-12)


def test_a_rate_above_the_drive_stalls():
    res = DataModel().solve(Q_(36, "TB/hour"), Hardware.Cloud.H100)  # 10 GB/s
    assert res.demand_bw.m_as("GB/s") == pytest.approx(10.0, rel=1e-12)
    assert res.is_stalled is True and res.margin.m_as("B/s") < 0


def test_hardware_without_data_paths_and_bad_rates():
    res = DataModel().solve(Q_(1, "GB/s"), Hardware.Mobile.Pixel8)  # the book gives it none
    assert res.bottleneck == "Unknown" and math.isinf(res.utilization)
    for bad in (Q_(-1, "GB/s"), Q_(1, "GB"), float("nan")):
        with pytest.raises(MlsysError, match="workload_data_rate"):
            DataModel().solve(bad, Hardware.Cloud.H100)
