"""The book's application scenarios and scorecard on mlsys (``mlsys.Applications``).

The newest ``ml_systems`` chapter of *Machine Learning Systems* (harvard-edge/cs249r_book)
tightens the smart doorbell's SLA to 50 ms, evaluates it and plots the scorecard. The
figures below are derived here from the cited inputs: the book's Wake Vision model
(0.25 M parameters, 25 MFLOPs per inference) and its ESP32-S3 estimate (0.5 GFLOP/s,
4 MB of flash for weights, 0.4 W), both in ``book_models.toml`` / ``book_hardware.toml``.
"""

from __future__ import annotations

import pytest

from mlsys import Q_, Applications, Hardware, Models
from mlsys.compat import Engine
from mlsys.core.errors import UnknownEntryError

WAKEVISION_PARAMS = 0.25e6
WAKEVISION_FLOPS = 25e6
ESP32_PEAK_FLOPS = 0.5e9
ESP32_FLASH_BYTES = 4e6
ESP32_TDP_W = 0.4


def test_the_doorbell_is_the_books_scenario() -> None:
    doorbell = Applications.Doorbell
    assert doorbell.workload.parameters.m_as("") == WAKEVISION_PARAMS
    assert doorbell.workload.inference_flops.m_as("") == WAKEVISION_FLOPS
    assert doorbell.system.memory.capacity.m_as("B") == ESP32_FLASH_BYTES
    assert doorbell.sla_latency.m_as("ms") == 200
    assert doorbell.power_budget.m_as("mW") == 100
    assert "scenarios.py" in doorbell.sources["reference"]


def test_strict_doorbell_scorecard_from_first_principles() -> None:
    strict = Applications.Doorbell.model_copy(update={"sla_latency": Q_("40 ms")})
    ev = strict.evaluate(efficiency=1.0)
    # fp16 weights: 0.25e6 x 2 B = 0.5 MB of 4 MB flash -> 12.5 %
    assert ev.feasibility.metrics["weight_size"].m_as("B") == 2 * WAKEVISION_PARAMS
    assert ev.feasibility.status == "PASS"
    # compute-bound at full efficiency: 25e6 FLOP / 0.5e9 FLOP/s = 50 ms > 40 ms
    assert ev.performance.metrics["latency"].m_as("ms") == pytest.approx(50.0)
    assert ev.performance.metrics["bottleneck"] == "Compute"
    assert ev.performance.status == "FAIL"
    assert ev.utilization() == pytest.approx({"Memory (RAM)": 0.125, "Latency (SLA)": 1.25})
    # energy at TDP: 0.4 W x 50 ms = 20 mJ; 0.4 W board power exceeds a 100 mW budget
    assert ev.macro.metrics["energy_per_inference"].m_as("mJ") == pytest.approx(20.0)
    assert ev.macro.status == "FAIL"
    assert not ev.passed_all
    assert "Level 2: Performance [FAIL]" in ev.scorecard()
    # the copy leaves the book's scenario as it was
    assert Applications.Doorbell.sla_latency.m_as("ms") == 200


def test_int8_halves_the_weights() -> None:
    ev = Applications.Doorbell.evaluate(precision="int8", efficiency=1.0)
    # 0.25e6 x 1 B = 0.25 MB of 4 MB -> 6.25 %
    assert ev.utilization()["Memory (RAM)"] == pytest.approx(0.0625)


def test_latency_is_the_engines() -> None:
    # one source: the scenario's latency is Engine.solve's (mlsys's roofline solver)
    ev = Applications.Doorbell.evaluate()
    solved = Engine.solve(Models.Tiny.WakeVision, Hardware.Tiny.ESP32_S3, precision="fp16")
    assert ev.performance.metrics["latency"].m_as("s") == pytest.approx(solved.latency.m_as("s"))
    # and no faster than the roofline at full efficiency (50 ms)
    assert ev.performance.metrics["latency"].m_as("ms") >= 50.0


def test_autodrive_fits_its_weights() -> None:
    ev = Applications.AutoDrive.evaluate()
    # ResNet-50 (torchvision: 25,557,032 parameters) at 2 B on a 16 GB Jetson Orin NX
    assert ev.feasibility.metrics["weight_size"].m_as("B") == 2 * 25_557_032
    assert ev.utilization()["Memory (RAM)"] == pytest.approx(2 * 25_557_032 / 16e9)
    assert ev.feasibility.status == "PASS"


def test_scorecard_plot_bars_lines_and_labels() -> None:
    pytest.importorskip("matplotlib")
    from mlsys import plot_evaluation_scorecard

    ev = Applications.Doorbell.model_copy(update={"sla_latency": Q_("40 ms")}).evaluate(
        efficiency=1.0
    )
    fig, ax = plot_evaluation_scorecard(ev)
    try:
        # the chapter restyles exactly two bars, one limit line and two labels
        assert [p.get_width() for p in ax.patches] == pytest.approx([0.125, 1.25])
        assert len(ax.lines) == 1 and list(ax.lines[0].get_xdata()) == [1.0, 1.0]
        assert [t.get_text() for t in ax.texts] == ["12.5%", "125.0%"]
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_unknown_application_names_the_known_ones() -> None:
    with pytest.raises(UnknownEntryError, match="Doorbell"):
        Applications.Doorbel
    names = {"Doorbell", "KWS", "AutoDrive", "Chatbot", "Frontier", "Workstation"}
    assert set(Applications.list()) == names
