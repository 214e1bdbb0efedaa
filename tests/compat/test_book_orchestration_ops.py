"""The book's Systems.Orchestration assumptions and its Ops registry."""

from __future__ import annotations

import math

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


def test_monitoring_psi_bands_are_siddiqis():
    m = Monitoring
    # Siddiqi (2006), ch. 8: PSI < 0.1 no shift, 0.1-0.25 review, > 0.25 significant
    assert (m.PsiWarnThreshold, m.PsiCriticalThreshold) == (0.1, 0.25)
    assert m.PsiWarnThreshold < m.PsiReviewThreshold < m.PsiCriticalThreshold
    assert m.sources["PsiCriticalThreshold"]["kind"] == "estimate"


def test_ks_coefficient_is_smirnovs_critical_value_at_five_percent():
    # Smirnov (1948): c(alpha) = sqrt(-ln(alpha / 2) / 2); c(0.05) = 1.3581, rounded to 1.36
    c_alpha = math.sqrt(-math.log(0.05 / 2) / 2)
    assert Monitoring.KsTestCoefficient == pytest.approx(c_alpha, abs=0.005)
    # two samples of 1,000: D_crit = c sqrt((n + m) / (n m)) = 1.36 * sqrt(2e-3) = 0.0608
    d_crit = Monitoring.KsTestCoefficient * math.sqrt(2000 / 1000**2)
    assert d_crit == pytest.approx(0.0608, abs=5e-5)
    assert Monitoring.sources["KsTestCoefficient"]["kind"] == "derived"


def test_memory_bit_error_rate_gives_the_books_errors_per_hour():
    from mlsys import Hardware

    # V100 HBM2 at 900 GB/s = 7.2e12 bit/s; x 1e-17 errors/bit x 3,600 s = 0.2592 per hour
    bits_per_s = Hardware.Cloud.V100.memory.bandwidth.m_as("byte/s") * 8
    errors_per_hour = bits_per_s * Monitoring.MemoryBitErrorRatePerBit * 3600
    assert errors_per_hour == pytest.approx(0.2592, rel=1e-9)


def test_kernel_launch_latency_is_the_books_plain_microseconds():
    from mlsys.compat.engine import calibration

    launch_us = calibration.KERNEL_LAUNCH_LATENCY_US
    assert launch_us == 15.0  # mlsysim engine/calibration.py at e0fde03
    # Same order as Gray (2019): a 2.9 us kernel synchronised one at a time costs 9.6 us.
    assert 9.6 <= launch_us < 2 * 9.6
    # The book's dispatch tax: a 1 us kernel spends 15 / 16 = 93.75 % of its time launching,
    # a 100 us kernel 15 / 115 = 13.0 % (its guards: above 90 % and below 20 %).
    assert launch_us / (launch_us + 1.0) == pytest.approx(0.9375)
    assert launch_us / (launch_us + 100.0) == pytest.approx(0.13043, rel=1e-4)
