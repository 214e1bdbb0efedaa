"""The textbook's names behave as the book's own package did, with the numbers derived here.

Formatting rows come from the book's ``fmt`` input -> output table (shared/compat,
upstream-signatures.md); formula numbers are derived in each test from the formula the
docstring cites.
"""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import pint
import pytest

import mlsys.constants as C
import mlsys.formatting as F
import mlsys.formulas as FO
from mlsys.core.fmt_book import MarkdownStr, book_fmt
from mlsys.core.units import Q_, to_book_counts, ureg

# ---------------------------------------------------------------------------------------
# The book's fmt contract
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        # the book's table: fmt(...) -> output of its own package
        ((Q_(3.35, "TB/s"),), {}, "3.4"),
        ((2039.0,), {}, "2,039.0"),
        ((1234567.0,), {}, "1,234,567.0"),
        ((42.0,), {"precision": 0}, "42"),
        ((Q_(2039, "GB/s"), "TB/s"), {}, "2.0"),
        # newer releases: prefix and suffix, no space added
        ((1000.0,), {"precision": 0, "prefix": "~"}, "~1,000"),
        ((12.4,), {"commas": False, "suffix": "%"}, "12.4%"),
        ((0.0123,), {"precision": 1, "allow_zero": True}, "0.0"),
        ((-0.01,), {"precision": 1, "allow_zero": True}, "0.0"),  # never "-0.0"
    ],
)
def test_book_fmt_table(args, kwargs, expected):
    assert book_fmt(*args, **kwargs) == expected
    # through mlsys.formatting.fmt: any book keyword selects the book's contract
    kwargs = {"precision": 1, **kwargs}
    out = F.fmt(*args, **kwargs)
    assert out == expected
    assert isinstance(out, MarkdownStr)


@pytest.mark.parametrize(
    ("value", "kwargs"),
    [
        (0.0123, {"precision": 1}),  # would print 0.0: false precision
        (float("nan"), {"precision": 1}),
        (float("inf"), {"precision": 2}),
        (None, {"precision": 1}),
        ("3.35", {"precision": 1}),
        (True, {"precision": 1}),
        (1.0, {"precision": -1}),
        (1.0, {"precision": 1.5}),
        (Q_(80, "GB"), {"unit": "GB/s", "precision": 1}),
    ],
)
def test_book_fmt_refuses(value, kwargs):
    # the book expects a ValueError; mlsys's FormatError is one
    with pytest.raises(ValueError):
        F.fmt(value, **kwargs)


def test_book_fmt_counts_convert_as_counts():
    # The book writes fmt(A100_FLOPS_FP16_TENSOR, "TFLOP/s", precision=0): a count Quantity
    # shown in mlsys's FLOP unit (and the reverse) converts, as the book counts FLOPs.
    assert F.fmt(C.A100_FLOPS_FP16_TENSOR, "TFLOP/s", precision=0) == "312"
    assert F.fmt(Q_(312e12, "FLOP/s"), C.TFLOPs / C.second, precision=0) == "312"
    with pytest.raises(ValueError):  # a bandwidth is still no FLOP rate
        F.fmt(C.A100_MEM_BW, "TFLOP/s", precision=0)


def test_markdown_str_renders_verbatim():
    out = F.fmt_math(r"\frac{1}{2}")
    assert out == r"$\frac{1}{2}$" and out._repr_markdown_() == r"$\frac{1}{2}$"
    # the book writes its own \$ for money: nothing is escaped (mlsys's Formatted would)
    assert F.fmt(5.0, precision=0, prefix="\\$")._repr_markdown_() == "\\$5"
    assert isinstance(out, str) and out + "!" == r"$\frac{1}{2}$!"


def test_book_small_helpers():
    assert F.sci_latex(1.2e20, 1) == r"1.2 \times 10^{20}"
    assert F.sci_latex(4.1e9) == r"4.10 \times 10^{9}"  # the book keeps the mantissa's zero
    assert F.sci(4.1e9, precision=2) == "4.10 × 10⁹"
    assert F.md_math("x = 1") == "$x = 1$"
    assert F.fmt_percent(0.1234) == "12.3"
    assert F.fmt_percent(Q_(1, "TFLOP") / Q_(4, "TFLOP"), 0, suffix="%") == "25%"
    assert F.fmt_frac(175, 8, "21.9", "GB") == r"$\frac{175}{8}$ = 21.9 GB"
    assert F.fmt_int(2.5, commas=True) == "3"  # halves away from zero, as the book
    assert F.fmt_int(-2.5, commas=True) == "-3"
    assert F.fmt_int(1234567, commas=False) == "1234567"
    assert F.fmt_full(Q_(2039, "GB/s"), 0) == "2,039 GB/s"
    assert F.fmt_split(Q_(2039, "GB/s"), 0) == ("2,039", "GB/s")
    assert F.fmt_qty(Q_(2.4e6, "B/s"), "MB/s") == "2.4 MB/s"
    assert F.check(True, "m") == ""  # the book returns None; both render as nothing
    with pytest.raises(ValueError):
        F.check(False, "m")


def test_mlsys_contract_unchanged_without_book_keywords():
    assert F.fmt(Q_(3.35e12, "B/s")) == "3.35 TB/s"
    assert F.fmt_int(16384) == "16,384"
    assert F.sci(4.1e9) == "4.1 × 10⁹"


# ---------------------------------------------------------------------------------------
# Units: the book's counts without weakening mlsys's dimensions
# ---------------------------------------------------------------------------------------


def test_book_counts_arithmetic():
    # GPT-3: 174.6e9 parameters (catalog, Brown et al. 2020 shape) x 4 bytes = 698,417 MB
    assert (C.GPT3_PARAMS * 4 * C.byte).m_as(C.MB) == pytest.approx(174.6e9 * 4 / 1e6, rel=1e-3)
    # Horowitz (2014): 1.1 pJ per FP16 operation, counted per plain FLOP
    assert C.ENERGY_FLOP_FP16_PJ.m_as(ureg.picojoule) == pytest.approx(1.1)
    # H100 dense FP16: 989.4 TFLOP/s in the book's TFLOPs per second
    assert C.H100_FLOPS_FP16_TENSOR.m_as(C.TFLOPs / C.second) == pytest.approx(989.4)
    # mlsys's own registry still refuses to add FLOPs to bytes
    with pytest.raises(pint.DimensionalityError):
        Q_(1, "flop") + Q_(1, "byte")
    with pytest.raises(pint.DimensionalityError):
        Q_(175e9, "parameter") * 4 * ureg.byte + Q_(1, "MB")


def test_mlsys_flops_meet_book_rates():
    # The book writes ``n * ureg.flop / peak_flops`` (its performance-engineering chapter,
    # communication-computation overlap); ``ureg.flop`` is mlsys's own dimension and the
    # peak rate is the book's count. H100 dense FP16 is 989.4 TFLOP/s (catalog, NVIDIA
    # datasheet): 2 x 989.4e12 FLOP take 2 s, whichever side carries the count.
    rate = C.H100_FLOPS_FP16_TENSOR
    work = Q_(2 * 989.4e12, "flop")
    assert (work / rate).m_as("s") == pytest.approx(2.0)
    assert (work / (rate * 0.4)).m_as("s") == pytest.approx(2.0 / 0.4)
    # rate x time is FLOPs again, added to or compared with mlsys FLOPs in either order
    done = rate * Q_(1, "s")
    assert (done + Q_(1e12, "flop")).m_as(C.TFLOPs) == pytest.approx(990.4)
    assert (Q_(1e12, "flop") + done).m_as(C.TFLOPs) == pytest.approx(990.4)
    assert (Q_(1e12, "flop") - done).m_as(C.TFLOPs) == pytest.approx(-988.4)
    assert (Q_(3, "s") * rate).m_as(C.TFLOPs) == pytest.approx(3 * 989.4)
    # 1 FLOP at 989.4e12 FLOP/s: 1.0107e-15 s, written with the registry's unit
    assert (ureg.flop / rate).m_as("s") == pytest.approx(1 / 989.4e12)
    # plain numbers keep pint's own arithmetic
    assert (2 / rate).m_as("s") == pytest.approx(2 / 989.4e12)
    # bytes stay bytes: a count of FLOPs still cannot be added to a size
    with pytest.raises(pint.DimensionalityError):
        done + Q_(1, "byte")


def test_to_book_counts():
    # 23 $/TB/month stays 23 per TB per month, the dollar now a plain count
    q = to_book_counts(Q_(23, "USD/TB/month"))
    assert q.m_as("1/TB/month") == pytest.approx(23)
    # 5 cents = 0.05 dollar counts
    assert to_book_counts(Q_(5, "cent")).m_as("") == pytest.approx(0.05)
    # nothing to replace: the same object
    bandwidth = Q_(3.35, "TB/s")
    assert to_book_counts(bandwidth) is bandwidth
    assert to_book_counts(3.0) == 3.0


def test_book_unit_strings_read_as_counts():
    # The book writes .m_as("param") and .m_as("flop"); on the book's count Quantities
    # those strings mean the book's counts. ResNet-50: 25,557,032 parameters (torchvision)
    # x 4 bytes = 102.2 MB; 8.18e9 FLOPs = 8.18 GFLOP.
    assert (C.RESNET50_PARAMS.m_as("param") * 4 * C.byte).m_as(C.MB) == pytest.approx(102.228128)
    assert C.RESNET50_FLOPs.m_as("GFLOP") == pytest.approx(8.18)
    # results of arithmetic keep the book's reading
    assert (C.GPT3_PARAMS * 2).m_as("Gparam") == pytest.approx(2 * 174.6, rel=1e-3)
    # a bandwidth is still no FLOP count, and mlsys's own Quantities are unchanged
    with pytest.raises(pint.DimensionalityError):
        C.A100_MEM_BW.m_as("flop")
    with pytest.raises(pint.DimensionalityError):
        Q_(5, "dimensionless").m_as("flop")


def test_time_scalars_are_definitions():
    assert C.SEC_PER_DAY == 24 * 3600 and C.HOURS_PER_YEAR == 365 * 24
    assert C.SEC_PER_HOUR * C.HOURS_PER_DAY == C.SEC_PER_DAY


def test_assumptions_have_provenance():
    info = C.provenance("MFU_TRAINING_HIGH")
    assert C.MFU_TRAINING_HIGH == 0.5
    assert info["source"] == "book_assumptions.toml" and "assumption" in info["note"]
    assert C.provenance("H100_MEM_BW")["source"] == "catalog"
    with pytest.raises(KeyError):
        C.provenance("NO_SUCH_NAME")


# ---------------------------------------------------------------------------------------
# Formulas: the book's call shapes over the cited formulas
# ---------------------------------------------------------------------------------------


def test_checkpoint_and_model_memory():
    # 16 bytes per parameter (ZeRO, Sec. 3.1): 175e9 x 16 = 2.8e12 bytes
    assert FO.calc_checkpoint_size(175e9) == pytest.approx(2.8e12)  # numbers in, bytes out
    assert FO.calc_checkpoint_size(C.GPT3_PARAMS, 2).m_as("GB") == pytest.approx(349.2, rel=1e-3)
    # ResNet-50 in fp32: 25.6e6 x 4 bytes = 102.4 MB (the book's docstring: ~102)
    assert FO.model_memory(25.6e6, C.BYTES_FP32) == pytest.approx(102.4)


def test_reliability_formulas():
    # 1000 GPUs of 50,000 h MTTF: 50 h
    assert FO.calc_mtbf_cluster(50_000, 1000) == pytest.approx(50)
    assert FO.calc_mtbf_cluster(Q_(50_000, "h"), 1000).m_as("min") == pytest.approx(50 * 60)
    # 8/50,000 + 2/150,000 + 2/100,000 = 1.9333e-4 per hour -> 5,172.4 h
    node = FO.calc_mtbf_node(50_000, 8, 150_000, 2, 100_000, 2)
    assert node == pytest.approx(1 / (8 / 50e3 + 2 / 150e3 + 2 / 100e3))
    # P(failure) = 1 - exp(-T/M); T = M gives 1 - 1/e
    assert FO.calc_failure_probability(Q_(100, "h"), Q_(100, "h")) == pytest.approx(1 - math.e**-1)
    assert FO.calc_failure_probability(Q_(1, "day"), Q_(12, "h")) == pytest.approx(
        1 - math.exp(-0.5)
    )
    with pytest.raises(ValueError):
        FO.calc_failure_probability(Q_(100, "h"), 100)  # one Quantity, one bare number
    # Young: sqrt(2 x 60 s x 43,200 s) = 2,276.84 s
    assert FO.calc_young_daly_interval(60, 43_200) == pytest.approx(math.sqrt(2 * 60 * 43_200))
    tau = FO.calc_young_daly_interval(Q_(1, "min"), Q_(12, "h"))
    assert tau.m_as("s") == pytest.approx(math.sqrt(2 * 60 * 43_200))
    # three replicas at 99 %: 1 - 0.01^3
    assert FO.calc_availability_stacked(0.99, 3) == pytest.approx(1 - 0.01**3)


def test_plain_results_also_answer_quantity_methods():
    # The chapters' package returned plain numbers, its next release Quantities; chapters
    # of both kinds call the same functions with plain numbers.
    mtbf = FO.calc_mtbf_cluster(50_000, 256)  # 50,000 h / 256 = 195.3125 h
    assert type(mtbf / 2) is float and mtbf / 2 == pytest.approx(50_000 / 256 / 2)
    assert mtbf.m_as("min") == pytest.approx(50_000 / 256 * 60)
    # a BookNumber passed back in is read in its own unit (hours), not as seconds
    p_day = FO.calc_failure_probability(mtbf, 24 * ureg.hour)
    assert p_day == pytest.approx(1 - math.exp(-24 / (50_000 / 256)))
    # 7e9 parameters x 16 bytes = 112 GB
    assert FO.calc_checkpoint_size(7e9, 16).m_as("GB") == pytest.approx(112)
    assert f"{FO.calc_young_daly_interval(60, 43_200):.1f}" == f"{math.sqrt(2 * 60 * 43_200):.1f}"


def test_pipeline_amdahl_network_cost():
    # GPipe bubble (P-1)/(M+P-1): 3/11; interleaved V=2: 3/19
    assert FO.calc_pipeline_bubble(4, 8) == pytest.approx(3 / 11)
    assert FO.calc_pipeline_bubble(4, 8, 2) == pytest.approx(3 / 19)
    # Amdahl: 1 / (0.1 + 0.9/10)
    assert FO.calc_amdahls_speedup(0.9, 10) == pytest.approx(1 / 0.19)
    # 1,000 km of fiber at 200,000 km/s, there and back: 10 ms
    assert FO.calc_network_latency_ms(1000) == pytest.approx(10.0)
    # 1 MB/s for 30 days = 2,592 GB at $0.09
    assert FO.calc_monthly_egress_cost(1e6, 0.09) == pytest.approx(2592 * 0.09)
    # 1 EFLOP/s x 0.5 x 0.5 x 0.9
    assert FO.calc_effective_flops(1e18, 0.5, 0.5, 0.9) == pytest.approx(2.25e17)
    cluster = C.H100_FLOPS_FP16_TENSOR * 1024
    delivered = FO.calc_effective_flops(cluster, C.MFU_TRAINING_HIGH, C.SCALING_EFF_1024GPU, 0.9)
    assert delivered.m_as(C.PFLOPs / C.second) == pytest.approx(989.4e-3 * 1024 * 0.5 * 0.5 * 0.9)


def test_training_flops_in_book_counts():
    # Kaplan et al. (2020) 6ND: 6 x 174.6e9 x 300e9 = 3.1428e23 (GPT-3, Brown et al. 2020)
    assert C.GPT3_TRAINING_OPS.m_as(C.flop) == pytest.approx(6 * 174.6e9 * 300e9, rel=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old = FO.calc_transformer_training_flops(C.GPT3_PARAMS, 300e9)
    assert old.m_as(C.flop) == pytest.approx(C.GPT3_TRAINING_OPS.m_as(C.flop))


# ---------------------------------------------------------------------------------------
# One deprecation mechanism and one warning per use
# ---------------------------------------------------------------------------------------


def test_from_import_warns_once():
    # A subprocess: the warning registry of this process must not hide a repeat.
    code = (
        "import warnings; warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from mlsys import SingleNodeSolver\n"
        "print(len([w for w in caught if issubclass(w.category, DeprecationWarning)]))\n"
        "print(caught[0].filename)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[0] == "1"  # was 2: importlib probes with hasattr, then reads
    assert out[1] == "<string>"  # attributed to the author's line, not to mlsys


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("mlsys", "SingleNodeSolver", "SingleNodeModel"),
        ("mlsys.formulas", "calc_ring_allreduce_time", "ring_allreduce_time"),
    ],
)
def test_attribute_access_warns_once(module, old, new):
    mod = __import__(module, fromlist=["_"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(mod, old)
    assert len(caught) == 1 and new in str(caught[0].message)
    assert caught[0].filename == __file__


def test_hardware_exports_every_catalog_node_and_device():
    import mlsys.hardware as H
    from mlsys import Hardware, Nodes

    for name in [*Hardware.list(), *Nodes.list()]:
        assert name in H.__all__ and getattr(H, name) is not None
    assert H.A100 is Hardware.A100_80GB
