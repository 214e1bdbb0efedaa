import pytest

from mlsys.core.errors import ParameterError
from mlsys.core.precision import (
    PRECISIONS,
    bytes_per_element,
    default_grad_dtype,
    normalize_precision,
)


@pytest.mark.parametrize(
    ("name", "canonical", "nbytes"),
    [
        ("bf16", "bf16", 2),
        ("BFloat16", "bf16", 2),
        ("float32", "fp32", 4),
        ("FP8", "fp8", 1),
        ("e4m3", "fp8", 1),
        ("int4", "int4", 0.5),
        ("tf32", "tf32", 4),
        ("half", "fp16", 2),
    ],
)
def test_aliases(name, canonical, nbytes):
    assert normalize_precision(name) == canonical
    assert bytes_per_element(name) == nbytes


@pytest.mark.parametrize("bad", ["fp7", "", "int3", None, 16])
def test_unknown_precision_names_the_parameter(bad):
    with pytest.raises(ParameterError) as info:
        normalize_precision(bad, "kv_precision")
    assert "kv_precision=" in str(info.value)
    assert "bf16" in str(info.value)


def test_every_precision_has_bytes():
    assert all(bytes_per_element(p) > 0 for p in PRECISIONS)


@pytest.mark.parametrize(
    ("compute", "grad"),
    [
        # Megatron-LM forces fp32 accumulation/all-reduce for bf16 (arguments.py)
        ("bf16", "fp32"),
        ("bfloat16", "fp32"),
        # NeMo's and Megatron-Bridge's FP8 and FP4 recipes keep and reduce bf16 gradients
        # (grad_reduce_in_fp32 = False)
        ("fp8", "bf16"),
        ("e4m3", "bf16"),
        ("nvfp4", "bf16"),
        # loss-scaled fp16 keeps fp16 gradients (Micikevicius et al. 2018; ZeRO's 2Ψ)
        ("fp16", "fp16"),
        ("half", "fp16"),
        ("fp32", "fp32"),
        ("tf32", "fp32"),
        ("fp64", "fp64"),
    ],
)
def test_default_grad_dtype(compute, grad):
    assert default_grad_dtype(compute) == grad


def test_default_grad_dtype_bytes_and_bad_name():
    # bf16 training of 8.62e9 parameters per GPU: fp32 gradients, 4 B × 8.62e9 = 34.5 GB
    assert bytes_per_element(default_grad_dtype("bf16")) * 8.62e9 == pytest.approx(34.48e9)
    with pytest.raises(ParameterError, match="precision='fp7'"):
        default_grad_dtype("fp7")
