import pytest

from mlsys.core.errors import ParameterError
from mlsys.core.precision import PRECISIONS, bytes_per_element, normalize_precision


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
