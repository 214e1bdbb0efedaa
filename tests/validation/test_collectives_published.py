"""mlsys's collective formulas against published nccl-tests figures
(``mlsys/validation/data/collectives.toml``), each derived by hand here."""

from __future__ import annotations

import pytest

from mlsys.core.formulas.collectives import NVLINK_WIRE_EFFICIENCY
from mlsys.validation import run_group
from mlsys.validation._case import load_data, records
from mlsys.validation.collectives import (
    latency_us,
    multi_node_busbw,
    nccl_tests_cases,
    nic_GBps,
    single_node_busbw,
)

GIB = 2**30
DATA = load_data("collectives")


def _row(name: str) -> dict:
    return next(r for r in DATA["single_node"] if r["name"] == name)


def _ring_busbw(link_GBps: float, kind: str, n: int, m: float) -> float:
    """Simple-protocol ring busbw by hand: base 8.4 µs + steps × 3.4 µs + f·M / (β·η)."""
    steps = (2 if kind == "all_reduce" else 1) * (n - 1)
    f = (2 if kind == "all_reduce" else 1) * (n - 1) / n
    t = 8.4e-6 + steps * 3.4e-6 + f * m / (link_GBps * 1e9 * NVLINK_WIRE_EFFICIENCY)
    return f * m / t / 1e9


def test_published_figures_are_the_sources():
    # the quoted figures, as printed in the sources
    assert _row("8x A100 SXM, ring all-reduce, 8 GiB (Jeaugey)")["published"] == 230.0
    assert _row("8x A100 SXM, ring all-reduce, 4 GiB (measured)")["published"] == 232.54
    assert _row("8x A800 SXM, ring all-reduce, 8 GiB (Jeaugey)")["published"] == 160.0
    assert _row("8x H100 SXM, ring all-reduce (NCCL_ALGO=RING)")["published"] == 370.0
    assert _row("8x H100 SXM, NVLS all-reduce (default)")["published"] == 480.0
    assert _row("8x H200, NVLS all-reduce, 16 GiB")["published"] == 480.70
    lat = {r["ranks"]: r["published_us"] for r in records("collectives", "latency")}
    assert lat == {2: 10.0, 4: 16.88, 8: 33.7}
    # NDR: AddyLaddy's "46-48GB/s per NIC", taken at its middle
    assert DATA["nic"][1]["published"] == 47.0 and "46-48GB/s" in DATA["nic"][1]["quote"]
    for row in DATA["single_node"] + DATA["nic"][:1] + DATA["multi_node"]:
        # every other figure appears in its quote
        assert f"{row['published']:g}"[:3] in row["quote"].replace(",", ""), row["name"]


def test_a100_ring_allreduce_is_a_prediction_within_7_percent():
    # 8 GiB on 8 A100 (300 GB/s per direction): 8.4 + 14 × 3.4 = 56 µs of latency plus
    # 1.75 × 8 GiB / (300 × 370/450 = 246.7 GB/s) = 60.93 ms, busbw 246.4 GB/s;
    # Jeaugey (nccl-tests issue 149) expects ~230: +7.1%. At 4 GiB, 246.2 against the
    # measured 232.54 (nccl issue 1048): +5.9%.
    row = _row("8x A100 SXM, ring all-reduce, 8 GiB (Jeaugey)")
    assert single_node_busbw(row) == pytest.approx(246.44, abs=0.01)
    assert single_node_busbw(row) == pytest.approx(_ring_busbw(300, "all_reduce", 8, 8 * GIB))
    assert single_node_busbw(row) / 230.0 - 1 == pytest.approx(0.071, abs=0.001)
    measured = _row("8x A100 SXM, ring all-reduce, 4 GiB (measured)")
    assert single_node_busbw(measured) / 232.54 - 1 == pytest.approx(0.059, abs=0.001)
    # A800: 8 of the 12 links, 200 GB/s: 200 × 0.822 = 164.4 GB/s against ~160 (+2.7%)
    a800 = _row("8x A800 SXM, ring all-reduce, 8 GiB (Jeaugey)")
    assert single_node_busbw(a800) == pytest.approx(_ring_busbw(200, "all_reduce", 8, 8 * GIB))
    assert single_node_busbw(a800) == pytest.approx(164.34, abs=0.01)


def test_h100_ring_and_nvls_are_fits():
    ring = _row("8x H100 SXM, ring all-reduce (NCCL_ALGO=RING)")
    nvls = _row("8x H100 SXM, NVLS all-reduce (default)")
    assert ring["basis"] == nvls["basis"] == "fit"
    # ring: 450 × 370/450 = 370 GB/s less 56 µs over a ~40 ms operation: 369.5
    assert single_node_busbw(ring) == pytest.approx(_ring_busbw(450, "all_reduce", 8, 8 * GIB))
    assert single_node_busbw(ring) == pytest.approx(369.49, abs=0.01)
    # NVLS: 25 µs + 8 GiB / 275 GB/s = 31.26 ms; busbw 1.75 × 8 GiB / 31.26 ms = 480.9
    t = 25e-6 + 8 * GIB / 275e9
    assert single_node_busbw(nvls) == pytest.approx(1.75 * 8 * GIB / t / 1e9)
    assert single_node_busbw(nvls) == pytest.approx(480.87, abs=0.01)


def test_h100_allgather_reduce_scatter():
    # all-gather of 16 GiB: 8.4 + 7 × 3.4 µs + 0.875 × 16 GiB / 370 GB/s; busbw 369.7
    # against the ~360 measured (nccl-tests issue 326): +2.7%
    ag = _row("8x H100 SXM, all-gather, 16 GiB")
    assert single_node_busbw(ag) == pytest.approx(_ring_busbw(450, "all_gather", 8, 16 * GIB))
    assert single_node_busbw(ag) / 360.0 - 1 == pytest.approx(0.027, abs=0.001)
    rs = _row("8x H100 SXM, reduce-scatter")
    assert single_node_busbw(rs) == pytest.approx(_ring_busbw(450, "reduce_scatter", 8, 8 * GIB))


def test_h200_nvls_sweep():
    # NVLS on H200's NVLink 4: busbw 1.75 · M / (25 µs + M / 275 GB/s)
    expected = {16 * GIB: 481.06, GIB: 478.19, 256 * 2**20: 469.23, 64 * 2**20: 436.53}
    published = {16 * GIB: 480.70, GIB: 464.00, 256 * 2**20: 442.27, 64 * 2**20: 369.82}
    for row in DATA["single_node"]:
        if row["node"] != "HGX_H200":
            continue
        m = row["size_bytes"]
        assert row["published"] == published[m]
        assert single_node_busbw(row) == pytest.approx(
            1.75 * m / (25e-6 + m / 275e9) / 1e9, rel=1e-9
        )
        assert single_node_busbw(row) == pytest.approx(expected[m], abs=0.01)
    # the 64 MiB point is 18% high (noted): mlsys is at 91% of its peak there, the
    # measurement at 77% of its own (369.82 / 480.70)
    assert 436.53 / 481.06 == pytest.approx(0.907, abs=0.001)
    assert 369.82 / 480.70 == pytest.approx(0.769, abs=0.001)


def test_dgx_a100_small_message_latency_is_a_fit():
    # LL: base 6.6 µs + 2(n − 1) steps × 1.98 µs (the measured NVLink 3 step); 8 B of
    # transfer is negligible. n = 2: 6.6 + 2 × 1.98 = 10.56 µs (published 10.0); n = 4:
    # 6.6 + 6 × 1.98 = 18.48 (16.88); n = 8: 6.6 + 14 × 1.98 = 34.32 (33.7)
    lat = DATA["latency"]
    for n, us in ((2, 10.56), (4, 18.48), (8, 34.32)):
        assert latency_us(lat, n) == pytest.approx(us, abs=0.01)


def test_nic_bandwidth_across_nodes():
    # DistributedModel's inter-node bandwidth per GPU: line rate × 0.90
    hdr, ndr = DATA["nic"]
    assert nic_GBps(hdr) == pytest.approx(25 * 0.9)  # 22.5 against 24 (Jeaugey): −6.2%
    assert nic_GBps(ndr) == pytest.approx(50 * 0.9)  # 45 against 46-48 (AddyLaddy): −4.3%


def test_two_dgx_a100_allreduce_runs_as_ncls_rings_one_per_nic():
    # NCCL's 16-rank rings, one per NIC: bus bandwidth min(NVLink 300 × 0.8 = 240 GB/s,
    # 8 NICs × 25 × 0.9 = 180 GB/s) = 180 GB/s, less the ring's 30 steps of latency on
    # 8 GiB (negligible): 6.3% under NVIDIA's 192 (nccl issue 812). The two-level
    # all-reduce, phases one after another, would give 2 × 0.875 / 240 + (1/8) / 22.5 ps
    # per byte: 1.875 / 12.85 ps/B = 145.9 GB/s (24% low); the faster is what NCCL runs.
    row = DATA["multi_node"][0]
    assert multi_node_busbw(row) == pytest.approx(180.0, rel=2e-3)
    assert multi_node_busbw(row) / 192.0 - 1 == pytest.approx(-0.063, abs=0.002)
    two_level = 1.875 / (2 * 0.875 / 240e9 + 1.0 / 8 / 22.5e9) / 1e9
    assert two_level == pytest.approx(145.9, abs=0.1) and multi_node_busbw(row) > two_level


def test_cases_are_in_the_parallelism_topic_and_honestly_labelled():
    cases = nccl_tests_cases()
    assert len(cases) == 17
    names = {c.name for c in run_group("parallelism")}
    assert {c.name for c in cases} <= names
    fits = {c.name for c in cases if c.basis == "fit"}
    assert fits == {
        "8x H100 SXM, ring all-reduce (NCCL_ALGO=RING)",
        "8x H100 SXM, NVLS all-reduce (default)",
        "8x H100 SXM, all-gather, 16 GiB",
        "8x H100 SXM, reduce-scatter",
        "DGX A100, 2 GPUs, 8 B all-reduce (1 channel)",
        "DGX A100, 4 GPUs, 8 B all-reduce (1 channel)",
        "DGX A100, 8 GPUs, 8 B all-reduce (1 channel)",
    }
    for c in cases:
        assert c.passed and c.url.startswith("https://")
        assert "“" in c.citation  # an exact quote
        if abs(c.rel_error) > 0.10:
            assert c.note
