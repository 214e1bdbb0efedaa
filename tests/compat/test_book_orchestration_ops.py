"""The book's Systems.Orchestration assumptions and its Ops registry."""

from __future__ import annotations

import pytest

from mlsys import Monitoring, Ops, Systems


def test_orchestration_assumptions_and_the_queue_they_imply():
    o = Systems.Orchestration
    assert o.target_cluster_utilization == 0.8
    assert o.queue_discipline == "FIFO"
    assert o.average_researcher_job_days == 2.0
    # M/M/1 (Kleinrock 1975, Sec. 3.2): mean wait = rho / (1 - rho) service times
    rho = o.target_cluster_utilization
    wait_days = rho / (1 - rho) * o.average_researcher_job_days
    assert wait_days == pytest.approx(8.0, rel=1e-12)
    assert o.sources["target_cluster_utilization"]["kind"] == "estimate"


def test_ops_holds_the_monitoring_thresholds():
    assert Ops.Monitoring is Monitoring
    psi = Ops.Monitoring.PsiReviewThreshold
    assert 0.1 <= psi <= 0.25  # Siddiqi (2006): a PSI shift worth review
    with pytest.raises(AttributeError):
        Ops.RuntimeOverheads
