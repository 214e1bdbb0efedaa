"""Origins survive arithmetic: traced numbers, ``sourced``, and derived tooltips.

Facts from the catalog's own sources: the H100 SXM's memory bandwidth is 3.35 TB/s (NVIDIA
H100 datasheet, 2023), the A100 80GB SXM's 2,039 GB/s (NVIDIA A100 datasheet, 2021), so
the ratio is 3350 / 2039 = 1.643; 8 × 3.35 TB/s = 26.8 TB/s.
"""

from __future__ import annotations

import copy
import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys import Q_, Hardware
from mlsys.core.errors import ParameterError
from mlsys.core.fmt import count, fmt, money, pct, times
from mlsys.core.provenance import (
    MAX_TITLE_CHARS,
    CatalogOrigin,
    DerivedOrigin,
    TextOrigin,
    origin_of,
    origins_of,
    sourced,
    split_span,
)
from mlsys.core.traced import MAX_ORIGINS, TracedFloat, TracedInt, merge, origins

H100, A100 = Hardware.H100, Hardware.A100_80GB
A, B = TextOrigin("paper A"), TextOrigin("datasheet B")

finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)
nonzero = finite.filter(lambda v: abs(v) > 1e-6)
whole = st.integers(min_value=-(10**12), max_value=10**12)
OPS = [
    lambda x, y: x + y,
    lambda x, y: x - y,
    lambda x, y: x * y,
    lambda x, y: x / y,
    lambda x, y: x // y,
    lambda x, y: x % y,
]


# -- sourced ------------------------------------------------------------------------------


def test_sourced_returns_an_equal_distinct_value_of_the_same_kind():
    for value, kind in ((1024, int), (5, int), (0.45, float), (np.float64(2.5), float)):
        out = sourced(value, "Llama 3 paper, §3.3")
        assert out == value and isinstance(out, kind) and out is not value
        assert origin_of(out) == TextOrigin("Llama 3 paper, §3.3")
    # Small ints are interned singletons: the plain 5 has no origin after sourced(5, ...)
    assert origin_of(5) is None and origin_of(sourced(5, "x")) is not None
    q = sourced(Q_(80, "GB"), "assumed")
    assert q == Q_(80, "GB") and q.units == Q_(80, "GB").units
    assert origin_of(q).describe() == "assumed"


def test_sourced_puts_the_authors_words_first_and_keeps_the_catalogs():
    q = sourced(H100.memory_bandwidth * 8, "one HGX board")
    assert origins_of(q) == (TextOrigin("one HGX board"), CatalogOrigin(H100, "memory_bandwidth"))
    assert H100.memory_bandwidth.m_as("TB/s") == 3.35  # the catalog's object is untouched
    assert origin_of(H100.memory_bandwidth) == CatalogOrigin(H100, "memory_bandwidth")


@pytest.mark.parametrize("bad", [True, "3 GB", np.array([1.0, 2.0]), None, [1]])
def test_sourced_refuses_what_is_not_one_number(bad):
    with pytest.raises(ParameterError, match="value"):
        sourced(bad, "x")


@pytest.mark.parametrize("bad", ["", "  ", None, 3])
def test_sourced_needs_words(bad):
    with pytest.raises(ParameterError, match="source"):
        sourced(1.0, bad)


def test_every_formatter_shows_the_source_of_a_sourced_value():
    gpus = sourced(1024, "Meta 2024")
    assert split_span(fmt(gpus)._repr_markdown_()) == ("1,024", "Meta 2024")
    assert split_span(count(gpus, "GPUs")._repr_markdown_()) == ("1,024 GPUs", "Meta 2024")
    assert split_span(pct(sourced(0.419, "MFU, Table 2"))._repr_markdown_())[1] == "MFU, Table 2"
    assert split_span(times(sourced(3.2, "speed-up"))._repr_markdown_()) == ("3.2×", "speed-up")
    assert split_span(money(sourced(4.2e6, "quote"))._repr_markdown_())[1] == "quote"


def test_a_value_with_no_origin_formats_exactly_as_before():
    for value in (1024, 0.45, Q_(3.35, "TB/s"), Q_(1.25e6, "s")):
        out = fmt(value)
        assert out.origin is None and out._repr_markdown_() == "[{}]{{.mlsys-num}}".format(
            out.replace(" ", "\u00a0")  # a page joins number and unit with a no-break space
        )
    assert fmt(sourced(1024, "x")) == fmt(1024) == "1,024"
    assert fmt(sourced(Q_(1.25e6, "s"), "x")) == fmt(Q_(1.25e6, "s"))


# -- arithmetic -------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(x=finite, y=nonzero, op=st.sampled_from(OPS))
def test_float_arithmetic_equals_plain_and_keeps_both_origins(x, y, op):
    tx, ty = TracedFloat(x, (A,)), TracedFloat(y, (B,))
    for left, right, expect in ((tx, ty, (A, B)), (tx, y, (A,)), (x, ty, (B,))):
        out = op(left, right)
        assert out == op(x, y) or (math.isnan(out) and math.isnan(op(x, y)))
        assert isinstance(out, TracedFloat) and origins(out) == expect


@settings(max_examples=60, deadline=None)
@given(x=whole, y=whole.filter(bool), op=st.sampled_from(OPS))
def test_int_arithmetic_stays_int_where_python_does(x, y, op):
    out = op(TracedInt(x, (A,)), TracedInt(y, (B,)))
    plain = op(x, y)
    assert out == plain and type(plain) is (int if isinstance(out, int) else float)
    assert origins(out) == (A, B)


@settings(max_examples=40, deadline=None)
@given(x=finite)
def test_equality_hashing_ordering_repr_match_the_plain_value(x):
    t = TracedFloat(x, (A,))
    assert t == x and hash(t) == hash(x) and repr(t) == repr(x) and str(t) == str(x)
    assert (t < x + 1) == (x < x + 1) and {t: 1}[x] == 1
    assert json.dumps([t, TracedInt(7, (A,))]) == json.dumps([x, 7])


def test_unary_rounding_and_powers():
    t = TracedFloat(-2.75, (A,))
    for out, plain in (
        (-t, 2.75),
        (+t, -2.75),
        (abs(t), 2.75),
        (round(t), -3),
        (round(t, 1), -2.8),
        (math.floor(t), -3),
        (math.ceil(t), -2),
        (math.trunc(t), -2),
        (t**2, 7.5625),
        (2**t, 2**-2.75),
    ):
        assert out == plain and origins(out) == (A,)
    assert isinstance(round(t), TracedInt) and isinstance(math.floor(t), TracedInt)
    q, r = divmod(TracedInt(17, (A,)), 5)
    assert (q, r) == (3, 2) and origins(q) == origins(r) == (A,)


def test_what_strips_the_origins():
    t = TracedFloat(2.0, (A,))
    assert type(float(t)) is float and type(int(TracedInt(3, (A,)))) is int
    assert origins(math.sqrt(t)) == () and origins(f"{t}") == ()
    array = np.array([1.0, 2.0]) * t
    assert type(array) is np.ndarray and origins(array) == () and list(array) == [2.0, 4.0]


def test_numpy_scalars_keep_them():
    t = TracedFloat(4.0, (A,))
    for out in (np.float64(2) * t, t * np.float64(2), np.sqrt(t) * 4, np.int64(2) * t):
        assert out == 8.0 and origins(out) == (A,)
    assert origins(np.int64(3) * TracedInt(2, (B,))) == (B,)


def test_sum_max_min_keep_them():
    xs = [TracedFloat(1.0, (A,)), TracedFloat(2.0, (B,))]
    assert origins(sum(xs)) == (A, B) and origins(max(xs)) == (B,) and origins(min(xs)) == (A,)


def test_merge_deduplicates_and_is_bounded():
    same = CatalogOrigin(H100, "memory_bandwidth")
    assert merge((same,), (CatalogOrigin(H100, "memory_bandwidth"),)) == (same,)
    many = tuple(TextOrigin(str(i)) for i in range(3 * MAX_ORIGINS))
    assert len(merge(many[:1], many)) == MAX_ORIGINS


def test_pickle_and_copy_keep_value_type_and_tooltip_text():
    q = H100.memory_bandwidth * TracedInt(8, (A,))
    back = pickle.loads(pickle.dumps(q))
    assert back == q and type(back.magnitude) is TracedFloat
    assert origin_of(back).describe() == origin_of(q).describe()
    n = pickle.loads(pickle.dumps(TracedInt(7, (A,))))
    assert n == 7 and type(n) is TracedInt and origins(n) == (A,)
    assert (
        copy.deepcopy(q) == q and origin_of(copy.deepcopy(q)).describe() == origin_of(q).describe()
    )
    assert pickle.loads(pickle.dumps(H100)).memory_bandwidth == H100.memory_bandwidth


# -- through pint ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "magnitude"),
    [
        (lambda q: q.to("GB/s"), 3350.0),
        (lambda q: q.to("Gbit/s"), 26800.0),
        (lambda q: q.to_base_units(), 2.68e13),  # bits per second in base units
        (lambda q: q.to_compact(), 3.35),
        (lambda q: q * 1000, 3350.0),
        (lambda q: q + q, 6.7),
        (lambda q: q - Q_(350, "GB/s"), 3.0),
        (lambda q: Q_(350, "GB/s") + q, 350 + 3350.0),
        (lambda q: round(q, 1), 3.4),
        (lambda q: abs(-q), 3.35),
        (lambda q: sum([q, q]), 6.7),
        (lambda q: max(q, Q_(1, "TB/s")), 3.35),
        (lambda q: np.sqrt(q * q), 3.35),
        (lambda q: q * Q_(2, "s"), 6.7),
    ],
)
def test_catalog_quantities_keep_their_origin_through_pint(expression, magnitude):
    out = expression(H100.memory_bandwidth)
    assert out.magnitude == pytest.approx(magnitude)
    assert type(out.magnitude) is TracedFloat
    assert origins(out) == (CatalogOrigin(H100, "memory_bandwidth"),)


def test_m_as_magnitude_and_comparisons():
    q = H100.memory_bandwidth
    assert q.m_as("B/s") == 3.35e12 and origins(q.m_as("B/s")) == origins(q)
    assert q.magnitude == 3.35 and origins(q.magnitude) == origins(q)
    assert q > A100.memory_bandwidth and q == Q_(3.35, "TB/s") and q != Q_(3.3, "TB/s")


def test_solvers_see_plain_floats():
    # as_si, the solvers' door, calls float(): inner code never pays for tracing.
    assert type(H100.memory_bandwidth_Bps) is float and H100.memory_bandwidth_Bps == 3.35e12
    assert all(type(v) is float for v in H100._flops_si.values())


# -- the tooltip of a derived value ---------------------------------------------------------


def test_a_ratio_of_two_catalog_values_names_both_datasheets():
    ratio = times(H100.memory_bandwidth / A100.memory_bandwidth)
    text, title = split_span(ratio._repr_markdown_())
    assert text == f"{3350 / 2039:.3f}×" == "1.643×"
    assert title == (
        "Computed from: "
        + CatalogOrigin(H100, "memory_bandwidth").describe()
        + "; "
        + CatalogOrigin(A100, "memory_bandwidth").describe()
    )
    assert "NVIDIA H100 Tensor Core GPU datasheet" in title
    assert "NVIDIA A100 Tensor Core GPU datasheet" in title
    assert isinstance(ratio.origin, DerivedOrigin)


def test_a_quantity_times_a_sourced_count():
    board = fmt(sourced(8, "GPUs per HGX board") * H100.memory_bandwidth)
    text, title = split_span(board._repr_markdown_())
    assert text == "26.8 TB/s"
    # pint multiplies its own magnitude first (Quantity.__rmul__): both origins, that order.
    assert title == (
        "Computed from: "
        + CatalogOrigin(H100, "memory_bandwidth").describe()
        + "; GPUs per HGX board"
    )


def test_the_same_origin_twice_is_named_once_and_long_titles_are_cut():
    bw = H100.memory_bandwidth
    assert isinstance(origin_of(bw + bw), CatalogOrigin)  # one origin: no "Computed from"
    parts = tuple(TextOrigin(f"source number {i} " + "x" * 40) for i in range(MAX_ORIGINS))
    value = sum(TracedFloat(1.0, (p,)) for p in parts)
    title = split_span(fmt(value)._repr_markdown_())[1]
    assert MAX_TITLE_CHARS // 2 < len(title) <= MAX_TITLE_CHARS and title.endswith("…")
    # cut between words: what is kept is the start of the full text, up to a space or "; "
    full, kept = origin_of(value).describe(), title[:-1]
    assert len(full) > MAX_TITLE_CHARS and full.startswith(kept) and full[len(kept)] in " ;"


# -- catalog helpers for a chapter's arithmetic ---------------------------------------------


def test_cite_hands_out_a_plain_field_with_its_catalog_origin():
    from mlsys import Models

    m = Models.Llama2_70B  # Touvron et al. (2023), Table 1: 80 layers, 64 heads, 8 KV heads
    layers = m.cite("layers")
    assert layers == 80 and type(layers) is TracedInt and m.layers == 80 and type(m.layers) is int
    assert origin_of(layers) == CatalogOrigin(m, "layers")
    ratio = times(m.cite("heads") / m.cite("kv_heads"))
    text, title = split_span(ratio._repr_markdown_())
    assert text == "8×"  # 64 / 8
    # Two fields of one entry citing one paper share one line of the tooltip.
    assert title.startswith("Computed from: Llama 2 70B, heads, kv heads: paper, Touvron")
    assert title.count("Touvron") == 1
    assert origin_of(H100.cite("peak_flops", "bf16")) == CatalogOrigin(H100, "peak_flops", "bf16")
    for bad in ("nope", "name", "_values", "cite"):
        with pytest.raises(ParameterError, match="field"):
            m.cite(bad)
    with pytest.raises(ParameterError, match="key"):
        H100.cite("peak_flops", "fp128")


def test_ridge_point_and_kv_cache_name_their_sources():
    ridge = H100.ridge_point("bf16")  # 989.4e12 / 3.35e12 = 295.3 FLOP/byte (datasheet)
    assert ridge == pytest.approx(989.4e12 / 3.35e12) and type(ridge) is TracedFloat
    assert origins(ridge) == (
        CatalogOrigin(H100, "peak_flops", "bf16"),
        CatalogOrigin(H100, "memory_bandwidth"),
    )
    title = origin_of(ridge).describe()
    assert title.startswith("Computed from: NVIDIA H100 SXM5 80GB, peak flops (bf16), memory")
    from mlsys import Models

    # Llama-2 70B in bf16: 2 × 80 layers × 8 KV heads × 128 × 2 B = 327,680 B per token.
    kv = Models.Llama2_70B.kv_cache_per_token("bf16")
    assert kv.m_as("B/token") == 2 * 80 * 8 * 128 * 2
    assert "Llama 2 70B, kv cache per token (bf16): paper" in origin_of(kv).describe()


# -- array fields of a recorded result, and ranges ------------------------------------------


def test_a_scaling_curves_array_fields_carry_the_result_origin():
    from mlsys import Fabrics, Models, Nodes, scaling_curve
    from mlsys.core.provenance import ResultOrigin

    curve = scaling_curve(
        Models.Llama2_70B, Nodes.DGX_H100, Fabrics.IB_NDR, [8, 16, 32], 512, tp_size=8, pp_size=4
    )
    eff = curve.scaling_efficiency
    plain = curve.si("scaling_efficiency")
    assert type(plain) is np.ndarray and np.array_equal(eff, plain)
    # Efficiency at n nodes = (throughput_n / n) / (throughput_1 / 1): the first is 1 exactly.
    assert eff[0] == 1.0 and eff.max() == 1.0
    for value in (eff[-1], eff.max(), np.mean(eff), (eff * 100)[1], eff[1:][0]):
        assert isinstance(value, TracedFloat)
        (origin,) = origins(value)
        assert isinstance(origin, ResultOrigin) and origin.field == "scaling_efficiency"
    assert origins(curve.step_time[-1]) == (curve.origin.at("step_time"),)
    assert pct(eff[-1], digits=2).origin.solver == "scaling_curve"
    assert type(pickle.loads(pickle.dumps(eff))) is np.ndarray


def test_a_range_names_both_ends():
    from mlsys.core.fmt import rng

    both = rng(A100.memory_bandwidth, H100.memory_bandwidth)
    assert both == "2.039–3.35 TB/s"
    assert origins_of(A100.memory_bandwidth)[0] in both.origin.parts
    assert origins_of(H100.memory_bandwidth)[0] in both.origin.parts
    assert rng(Q_(1, "TB/s"), Q_(2, "TB/s")).origin is None


def test_three_argument_pow_keeps_every_origin():
    n, m = TracedInt(3, (A,)), TracedInt(5, (B,))
    out = pow(n, 2, m)  # 3² mod 5 = 4
    assert out == 4 and type(out) is TracedInt and origins(out) == (A, B)


def test_a_nested_result_names_its_parent_solver_without_changing_the_stored_one():
    from mlsys import DistributedModel, Fabrics, Fleet, Models, Nodes

    fleet = Fleet(node=Nodes.DGX_A100, count=2, fabric=Fabrics.IB_HDR)
    res = DistributedModel().solve(Models.Llama2_7B, fleet, batch_size=16, tp_size=8)
    memory = res.memory_per_accelerator
    assert memory.origin.solver == "DistributedModel"
    assert memory.origin.field == "memory_per_accelerator"
    title = fmt(memory.weights).origin.describe()
    assert title.startswith("DistributedModel → memory_per_accelerator.weights(model=Llama 2 7B")
    assert res.si("memory_per_accelerator").origin is None  # the stored one is untouched
    assert memory.si("weights") == res.si("memory_per_accelerator").si("weights")


def test_a_record_field_of_plain_values_carries_the_result_origin_per_key():
    from mlsys import DistributedModel, Fabrics, Fleet, Models, Nodes, ParallelismSearch
    from mlsys.core.provenance import record

    fleet = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
    search = ParallelismSearch().solve(Models.Llama2_7B, fleet, batch_size=64)
    record(search, "ParallelismSearch", model=Models.Llama2_7B, fleet=fleet)
    best = search.best_layout
    assert best == search.si("best_layout")  # same keys and values, strings untouched
    assert count(best["tp_size"]).origin.field == "best_layout[tp_size]"
    assert type(best["recompute"]) is str and type(best["sequence_parallel"]) is bool
    # Ready to pass to solve, as before: the same step time as with the plain record.
    again = DistributedModel().solve(Models.Llama2_7B, fleet, batch_size=64, **best)
    plain = DistributedModel().solve(
        Models.Llama2_7B, fleet, batch_size=64, **search.si("best_layout")
    )
    assert again.si("step_time") == plain.si("step_time")


_CONVERSIONS = [
    ("TB/s", "GB/s"),
    ("TB/s", "Gbit/s"),
    ("s", "ms"),
    ("h", "s"),
    ("GiB", "GB"),
    ("kWh", "J"),
    ("kgCO2e", "tCO2e"),
]


@settings(max_examples=40, deadline=None)
@given(
    x=st.floats(min_value=1e-3, max_value=1e6, allow_nan=False),
    pair=st.sampled_from(_CONVERSIONS),
)
def test_unit_conversions_keep_origins_and_equal_the_plain_conversion(x, pair):
    src, dst = pair
    plain = Q_(x, src)
    mine = sourced(plain, "a source")
    assert mine == plain
    converted = mine.to(dst)
    assert converted.magnitude == plain.to(dst).magnitude
    assert origin_of(converted) == TextOrigin("a source")
    assert mine.m_as(dst) == plain.m_as(dst) and origins(mine.m_as(dst)) == (
        TextOrigin("a source"),
    )
    assert fmt(mine, dst) == fmt(plain, dst) and fmt(mine) == fmt(plain)


def test_register_value_refuses_shared_small_ints():
    from mlsys.core.provenance import register_value

    for shared in (8, 0, True):
        with pytest.raises(ParameterError, match="sourced"):
            register_value(shared, TextOrigin("x"))
    assert origin_of(8) is None


def test_a_traced_int_on_the_right_of_a_plain_float_loses_its_origin_and_on_the_left_keeps_it():
    # Python's float operators accept any int and are asked first (documented limitation).
    n = TracedInt(8, (A,))
    assert origins(2.5 * n) == () and origins(n * 2.5) == (A,)
    plain = Q_(3.35, "TB/s")
    assert origins(plain * n) == () and origins(n * plain) == (A,)
    assert (n * plain).magnitude == pytest.approx(26.8) and (n / plain).magnitude == 8 / 3.35
    # A traced float is asked first wherever it stands (a subclass of float).
    t = TracedFloat(8.0, (A,))
    assert origins(2.5 * t) == origins(plain * t) == origins(Q_(4.0, "s") / t) == (A,)


def test_solver_inputs_read_as_a_reader_would_print_them():
    # 1,435,805.39 s / 86,400 s per day = 16.62 days; a plain float to four digits; a
    # count with thousands separators (never the repr's 1435805.3943772556)
    from mlsys.core.provenance import ResultOrigin
    from mlsys.core.units import Q_

    inputs = {"training_duration": Q_(1435805.3943772556, "s"), "step_time": 1.496092789746063,
              "accelerators": 10000, "overlap": True}  # fmt: skip
    text = ResultOrigin("SustainabilityModel", inputs).describe()
    assert text == (
        "SustainabilityModel(training_duration=16.62 d, step_time=1.496, "
        "accelerators=10,000, overlap=True)"
    )
