"""The book's solver rules: recorded beside the figures, switched on only by request.

Two rules of the book's package differ from mlsys's (``[rules]`` of
``book_assumptions.toml``): its TrainingMemoryModel keeps Adam's fp32 master copy at every
precision (12 B/param, Rajbhandari et al. 2020, "ZeRO", Sec. 3.1), and its Engine moves the
weights plus 10% of them per sample. The numbers below are derived here.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from mlsys import Hardware, MemoryModel, Models, SingleNodeModel
from mlsys.book.migration import book_values, differences, format_report, migration_report
from mlsys.compat._unwrap import as_catalog
from mlsys.compat.engine import Engine
from mlsys.compat.solver_rules import BOOK_RULES_ON, book_rule_active, book_rules
from mlsys.compat.solvers import TrainingMemoryModel
from mlsys.core.errors import MlsysError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

GPT3_PARAMS = 174_604_259_328  # counted from GPT-3's shape (96 layers, d 12,288, 50,257 vocab)
CHECKPOINT_BW_BPS = 100e9  # the fault-tolerance chapter's 100 GB/s storage path
RESNET50_FP16_WEIGHT_BYTES = 25_557_032 * 2  # torchvision's parameter count, 2 B each
A100_BW_BPS = 2.039e12  # A100 SXM4 80GB HBM2e, NVIDIA datasheet


def _rules() -> list:
    return [d for d in differences() if d.is_rule]


def _rule(name: str) -> list:
    return [d for d in _rules() if d.key == name]


def _gpt3_fp32():
    return TrainingMemoryModel().solve(
        Models.Language.GPT3, Hardware.Cloud.A100, batch_size=1, precision="fp32"
    )


def _resnet(batch_size: int = 1):
    return Engine.solve(
        Models.Vision.ResNet50,
        Hardware.Cloud.A100,
        batch_size=batch_size,
        precision="fp16",
        efficiency=1.0,
    )


def test_rules_are_listed_with_both_rules_reason_and_source():
    rules = {d.key: d for d in _rules()}
    assert (
        set(rules)
        == set(book_rules())
        == {
            "OPTIMIZER_MASTER_COPY",
            "ENGINE_ACTIVATION_TRAFFIC",
        }
    )
    master = rules["OPTIMIZER_MASTER_COPY"]
    assert master.applies_to == "TrainingMemoryModel" and master.token == "TrainingMemoryModel"
    assert "12 bytes" in master.book and "8 bytes" in master.mlsys_rule
    assert "Rajbhandari" in master.source and master.reason
    traffic = rules["ENGINE_ACTIVATION_TRAFFIC"]
    assert traffic.token == "Engine" and "10%" in traffic.book and traffic.reason
    # a rule is neither a constant nor a registry path
    assert not traffic.is_path and not master.is_path
    # every rule is off unless asked for
    assert not any(book_rule_active(name) for name in book_rules())


def test_unknown_rule_name_is_refused():
    with pytest.raises(MlsysError, match="OPTIMIZER_MASTER_COPY"):
        book_rule_active("NO_SUCH_RULE")


def test_gpt3_fp32_training_memory_keeps_the_master_copy_under_the_books_rule():
    mlsys_res = _gpt3_fp32()
    # mlsys: pure fp32 Adam keeps 8 B/param of state (no second fp32 copy)
    assert mlsys_res.optimizer_bytes_per_param == 8.0
    assert mlsys_res.optimizer_state.m_as("B") == pytest.approx(8 * GPT3_PARAMS, rel=1e-12)
    with book_values(_rule("OPTIMIZER_MASTER_COPY")):
        book_res = _gpt3_fp32()
    # the book: 12 B/param (master 4 + m 4 + v 4), so 4 B x 174.6e9 = 698.4 GB more
    assert book_res.optimizer_bytes_per_param == 12.0
    assert book_res.optimizer_state.m_as("B") == pytest.approx(12 * GPT3_PARAMS, rel=1e-12)
    extra = book_res.total_memory.m_as("B") - mlsys_res.total_memory.m_as("B")
    assert extra == pytest.approx(4 * GPT3_PARAMS, rel=1e-9)
    assert book_res.model_state.m_as("B") == pytest.approx((4 + 4 + 12) * GPT3_PARAMS, rel=1e-12)
    # everything else as mlsys solved it
    assert book_res.weights == mlsys_res.weights and book_res.activations == mlsys_res.activations
    # the chapter's checkpoint at 100 GB/s: (20 B x 174.6e9 + 160.0 GB activations) / 100
    # GB/s = 36.5 s with the book's rule (its guard: 34-38 s); mlsys's 16 B/param: 29.5 s
    acts = mlsys_res.activations.m_as("B")
    assert book_res.total_memory.m_as("B") / CHECKPOINT_BW_BPS == pytest.approx(
        (20 * GPT3_PARAMS + acts) / CHECKPOINT_BW_BPS, rel=1e-9
    )
    assert 36.4 < book_res.total_memory.m_as("B") / CHECKPOINT_BW_BPS < 36.6
    assert 29.4 < mlsys_res.total_memory.m_as("B") / CHECKPOINT_BW_BPS < 29.6
    assert book_res.utilization == pytest.approx(
        book_res.total.m_as("B") / book_res.capacity.m_as("B")
    )
    assert not book_res.feasible and "master copy" in book_res.infeasibility_reason
    # restored on exit
    assert _gpt3_fp32().total_memory == mlsys_res.total_memory


def test_master_copy_rule_changes_nothing_where_mlsys_keeps_the_copy():
    def fp16():
        return TrainingMemoryModel().solve(
            Models.Language.GPT3, Hardware.Cloud.A100, batch_size=1, precision="fp16"
        )

    mixed = fp16()
    assert mixed.optimizer_bytes_per_param == 12.0  # mixed precision: ZeRO's K = 12
    with book_values(_rule("OPTIMIZER_MASTER_COPY")):
        assert fp16().total_memory == mixed.total_memory


def test_plain_sgd_in_fp32_gains_the_books_4_byte_master_copy():
    def sgd():
        return TrainingMemoryModel().solve(
            Models.Language.GPT3,
            Hardware.Cloud.A100,
            batch_size=1,
            precision="fp32",
            optimizer="sgd",
        )

    assert sgd().optimizer_state.m_as("B") == 0.0  # mlsys: SGD without momentum keeps none
    with book_values(_rule("OPTIMIZER_MASTER_COPY")):
        assert sgd().optimizer_state.m_as("B") == pytest.approx(4 * GPT3_PARAMS, rel=1e-12)


def test_mlsys_memory_model_never_follows_the_books_rule():
    def own():
        return MemoryModel().solve(
            as_catalog(Models.Language.GPT3),
            as_catalog(Hardware.Cloud.A100),
            batch_size=1,
            seq_len=2048,
            precision="fp32",
            mode="training",
            recompute="selective",
        )

    before = own()
    with book_values(_rules()):
        during = own()
    assert during.optimizer_bytes_per_param == 8.0 and during.total == before.total


def test_resnet50_memory_traffic_is_weights_times_1_1_under_the_books_rule():
    own = _resnet()
    assert own.memory_footprint.m_as("B") == pytest.approx(RESNET50_FP16_WEIGHT_BYTES)
    # mlsys prices the layer shapes: 60.1 MB at the peak bandwidth, not 1.1 x 51.1 MB
    own_traffic = own.latency_memory.m_as("s") * own.peak_bw_actual.m_as("B/s")
    assert own_traffic / 1e6 == pytest.approx(60.1, abs=0.05)
    with book_values(_rule("ENGINE_ACTIVATION_TRAFFIC")):
        book = _resnet()
        book8 = _resnet(batch_size=8)
    traffic = book.latency_memory.m_as("s") * book.peak_bw_actual.m_as("B/s")
    # (1 + 0.1 x 1) x 51.11 MB = 56.23 MB; at 2.039 TB/s: 27.6 us
    assert traffic == pytest.approx(1.1 * RESNET50_FP16_WEIGHT_BYTES, rel=1e-9)
    assert book.latency_memory.m_as("s") == pytest.approx(
        1.1 * RESNET50_FP16_WEIGHT_BYTES / A100_BW_BPS, rel=1e-9
    )
    # batch 8: (1 + 0.8) x the weights
    traffic8 = book8.latency_memory.m_as("s") * book8.peak_bw_actual.m_as("B/s")
    assert traffic8 == pytest.approx(1.8 * RESNET50_FP16_WEIGHT_BYTES, rel=1e-9)
    # the rule alone: mlsys's 8.18 GFLOP at 312 TFLOP/s = 26.2 us; memory-bound at 27.6 us
    assert book.latency_compute.m_as("s") == pytest.approx(8.18e9 / 312e12, rel=1e-9)
    assert book.latency.m_as("s") == pytest.approx(book.latency_memory.m_as("s"))
    assert book.bottleneck == "Memory"
    assert book.arithmetic_intensity.m_as("FLOP/B") == pytest.approx(
        8.18e9 / (1.1 * RESNET50_FP16_WEIGHT_BYTES), rel=1e-9
    )
    assert _resnet().latency_memory == own.latency_memory  # restored on exit


def test_engine_rule_with_the_books_figures_reads_its_flop_figure():
    with book_values(differences()):
        book = _resnet()
    # the book's 4.1 G multiply-adds as FLOPs at 312 TFLOP/s: 13.1 us; memory 27.6 us, so
    # the chapter's memory/compute ratio of ~2 and an intensity of 4.1e9 / 56.2e6 = 72.9
    # FLOP/B, below the A100's ridge of 312 / 2.039 = 153 FLOP/B
    assert book.latency_compute.m_as("s") == pytest.approx(4.1e9 / 312e12, rel=1e-9)
    ratio = book.latency_memory.m_as("s") / book.latency_compute.m_as("s")
    memory_s = 1.1 * RESNET50_FP16_WEIGHT_BYTES / A100_BW_BPS
    assert ratio == pytest.approx(memory_s / (4.1e9 / 312e12), rel=1e-9)
    assert 1.5 <= ratio <= 2.5
    assert book.arithmetic_intensity.m_as("FLOP/B") == pytest.approx(72.92, abs=0.01)


def test_mlsys_single_node_model_never_follows_the_books_rule():
    def own():
        return SingleNodeModel().solve(
            as_catalog(Models.Vision.ResNet50),
            as_catalog(Hardware.Cloud.A100),
            batch_size=1,
            precision="fp16",
            efficiency=1.0,
        )

    before = own()
    with book_values(_rules()):
        assert own().memory_time == before.memory_time


def test_rules_are_process_local_and_on_after_serve_book_figures():
    code = (
        "from mlsys.compat.solver_rules import book_rule_active\n"
        "from mlsys.book.migration import serve_book_figures\n"
        "before = book_rule_active('OPTIMIZER_MASTER_COPY')\n"
        "serve_book_figures()\n"
        "print(before, book_rule_active('OPTIMIZER_MASTER_COPY'),"
        " book_rule_active('ENGINE_ACTIVATION_TRAFFIC'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True"]
    assert BOOK_RULES_ON == {}  # this process never asked


GUARDED = """---
title: "A chapter whose guard expects the book's optimizer state"
---

```{python}
#| label: ckpt
from mlsysim import Models, Hardware
from mlsysim.engine.solver import TrainingMemoryModel
from mlsysim.fmt import check
mem = TrainingMemoryModel().solve(Models.Language.GPT3, Hardware.Cloud.A100, batch_size=1,
                                  precision="fp32")
ckpt_write_s = mem.total_memory.m_as("GB") / 100
check(34 < ckpt_write_s < 38, f"GPT-3 checkpoint write should be ~36 s, got {ckpt_write_s:.1f}")
```
"""


def test_report_attributes_a_failure_to_the_books_rule():
    report = migration_report(GUARDED, name="ckpt.qmd")
    (failure,) = report.cell_failures
    assert "29.5" in failure.error
    assert [d.key for d in failure.causes] == ["OPTIMIZER_MASTER_COPY"]
    text = format_report(report)
    assert (
        "[runs with the book's rule OPTIMIZER_MASTER_COPY for TrainingMemoryModel: "
        "a recorded difference]" in text
    )
    assert "failures a recorded difference explains: 1 of 1" in text
    assert not migration_report(GUARDED, name="ckpt.qmd", book_figures=True).failed
