"""The book's CompressionModel: sizes and speed-up from the roofline, accuracy as the book's."""

from __future__ import annotations

import math

import pytest

from mlsys import Hardware, Models
from mlsys.compat.solvers import CompressionModel
from mlsys.core.errors import ParameterError

LLAMA = Models.Language.Llama3_8B
RESNET = Models.Vision.ResNet50
H100 = Hardware.H100  # 3.35 TB/s, 989.4 TFLOP/s fp16 dense, no int4 peak
P_LLAMA = LLAMA.as_workload().parameters.magnitude  # mlsys's count, 8,030,261,248


def test_int4_on_a_memory_bound_decode_is_as_fast_as_its_bytes_shrink():
    res = CompressionModel().solve(LLAMA, H100, target_bitwidth=4)
    assert res.original_size_gb.m_as("GB") == pytest.approx(4 * P_LLAMA / 1e9)
    assert res.compressed_size_gb.m_as("GB") == pytest.approx(0.5 * P_LLAMA / 1e9)
    assert res.compression_ratio == pytest.approx(8.0)
    assert res.memory_savings_pct == pytest.approx(87.5)
    # one token: 2P FLOPs against 4P then P/2 bytes; memory binds on both sides
    assert res.inference_speedup == pytest.approx(8.0)
    assert res.estimated_accuracy_delta == -0.025  # the book's QUANT_ACCURACY_DELTA_INT4


def test_int4_without_a_4_bit_peak_becomes_compute_bound():
    res = CompressionModel().solve(RESNET, H100, target_bitwidth=4)
    w = RESNET.as_workload()
    params, flops = w.parameters.magnitude, w.inference_flops.magnitude  # 25.6 M, 8.18 GFLOP
    before = max(flops / 989.4e12, 4 * params / 3.35e12)  # 30.5 us, memory-bound
    after = max(flops / 989.4e12, 0.5 * params / 3.35e12)  # 8.27 us at the fp16 peak
    assert before == 4 * params / 3.35e12 and after == flops / 989.4e12
    assert res.inference_speedup == pytest.approx(before / after, rel=1e-6)  # 3.69, not 8
    assert res.estimated_accuracy_delta == -0.025


@pytest.mark.parametrize(
    ("bits", "delta"), [(32, 0.0), (16, 0.0), (8, -0.002), (5, -0.025), (3, -0.05)]
)
def test_the_books_quantisation_accuracy_table(bits, delta):
    res = CompressionModel().solve(LLAMA, H100, target_bitwidth=bits)
    assert res.estimated_accuracy_delta == delta  # calibration.py at e0fde03; FP8's at 8 bits
    assert res.compression_ratio == pytest.approx(32 / bits)


def test_pruning_sizes_speedups_and_the_books_curve():
    a100 = Hardware.A100  # catalog sparsity_speedup 2 (2:4 structured sparsity)
    two_four = CompressionModel().solve(LLAMA, a100, "pruning", sparsity=0.5, sparsity_type="n_m")
    assert two_four.compressed_size_gb.m_as("GB") == pytest.approx(2 * P_LLAMA / 1e9)
    assert two_four.inference_speedup == 2.0
    assert two_four.estimated_accuracy_delta == -0.001  # at most 50%: the book's mild delta
    structured = CompressionModel().solve(
        LLAMA, a100, "pruning", sparsity=0.9, sparsity_type="structured"
    )
    assert structured.compression_ratio == pytest.approx(10.0)
    assert structured.inference_speedup == pytest.approx(10.0)  # work and bytes both x 0.1
    assert structured.estimated_accuracy_delta == pytest.approx(-0.01 * math.exp(1.8))  # -6.05%
    loose = CompressionModel().solve(LLAMA, a100, "pruning", sparsity=0.7)
    assert loose.inference_speedup == 1.0  # unstructured: storage only
    off_pattern = CompressionModel().solve(
        LLAMA, a100, "pruning", sparsity=0.7, sparsity_type="n_m"
    )
    assert off_pattern.inference_speedup == 1.0


def test_distillation_sizes_no_student():
    res = CompressionModel().solve(LLAMA, H100, "distillation")
    assert (res.compression_ratio, res.inference_speedup, res.estimated_accuracy_delta) == (
        1.0,
        1.0,
        0.0,
    )


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"method": "hashing"}, "method"),
        ({"target_bitwidth": 0}, "target_bitwidth"),
        ({"target_bitwidth": 4.5}, "target_bitwidth"),
        ({"method": "pruning", "sparsity": 1.0}, "sparsity"),
        ({"method": "pruning", "sparsity": 0.5, "sparsity_type": "block"}, "sparsity_type"),
    ],
)
def test_bad_inputs_name_the_parameter(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        CompressionModel().solve(LLAMA, H100, **kwargs)
