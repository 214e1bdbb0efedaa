"""Point-to-point ring collectives equal gloo's and send exactly the formula's bytes."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mlsys.core.formulas.collectives import (
    collective_bytes_per_rank,
    ring_allreduce_bytes_per_rank,
)

pytestmark = pytest.mark.emulate

M, N = 1 << 16, 4


def test_ring_allreduce_equals_library_and_sends_the_bound(collectives_4):
    for rank_report in collectives_4:
        ar = rank_report["all_reduce"]
        assert ar["equal"]
        # Patarasuk & Yuan 2009: 2(N-1)/N · M per rank; here 1.5 × 64 KiB = 98304 bytes.
        assert ar["bytes_sent"] == ar["bytes_recv"] == 2 * (N - 1) / N * M == 98304
        assert ar["bytes_sent"] == ring_allreduce_bytes_per_rank(M, N)


@pytest.mark.parametrize("kind", ["all_gather", "reduce_scatter", "all_to_all"])
def test_other_collectives(collectives_4, kind):
    for rank_report in collectives_4:
        rep = rank_report[kind]
        assert rep["equal"], kind
        assert rep["message_bytes"] == M
        assert rep["bytes_sent"] == (N - 1) / N * M == collective_bytes_per_rank(kind, M, N)


@pytest.mark.parametrize("kind", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"])
def test_library_collectives_are_accounted_by_the_model(collectives_4, kind):
    # gloo hides its wire traffic: its calls are labelled "model" and carry the ring's
    # algorithmic bytes, equal to what the measured point-to-point ring sent.
    for rank_report in collectives_4:
        rep = rank_report[kind]
        assert rep["library_accounting"] == "model"
        assert rep["library_bytes_sent"] == rep["predicted_bytes"] == rep["bytes_sent"]


def test_link_calibration_is_physical(collectives_4):
    link = collectives_4[0]["link"]
    # A fit of t = (n-1)α + (n-1)/n·M/β to ring all-gathers: non-negative latency below
    # a second per step, positive bandwidth.
    assert 0 <= link["latency_s"] < 1.0
    assert link["bandwidth_Bps"] > 0
    # Every rank received the same calibration.
    assert all(r["link"] == link for r in collectives_4)
