"""Table-driven tests of mlsys.formatting: every expected string is derived by hand.

Each row gives the call, the text a chapter should show, and the arithmetic behind it.
Published figures used as inputs carry their source in the row's comment.
"""

from __future__ import annotations

import numpy as np
import pint
import pytest

import mlsys.formatting as F
from mlsys import Q_
from mlsys.core.errors import MlsysError, ParameterError, UnitError
from mlsys.formatting import (
    BookCheckError,
    FormatError,
    Formatted,
    FormatUnitError,
    Math,
    check,
    commas,
    count,
    fmt,
    fmt_int,
    latex,
    md_math,
    money,
    multiple,
    pct,
    per,
    rng,
    sci,
    times,
)

NBSP = "\u00a0"

# (id, call, expected, derivation)
CASES = [
    # --- SI prefixes chosen by pint's to_compact -----------------------------------------
    # H100 SXM HBM3 bandwidth 3.35 TB/s (NVIDIA H100 datasheet): 3.35e12 B/s / 1e12 = 3.35 T.
    ("bw-auto", lambda: fmt(Q_(3.35e12, "B/s")), "3.35 TB/s", "3.35e12/1e12"),
    ("bw-already-T", lambda: fmt(Q_(3.35, "TB/s")), "3.35 TB/s", "unchanged"),
    ("bytes-80GB", lambda: fmt(Q_(80e9, "B")), "80 GB", "80e9/1e9"),
    # H100 SXM dense BF16 989.4 TFLOP/s (datasheet, 1979 with sparsity / 2).
    ("flops", lambda: fmt(Q_(989.4e12, "FLOP/s")), "989.4 TFLOP/s", "4 carried digits"),
    ("watts", lambda: fmt(Q_(700, "W")), "700 W", "below 1e3: no prefix"),
    ("kilowatts", lambda: fmt(Q_(10.2e3, "W")), "10.2 kW", "10.2e3/1e3"),
    (
        "tokens-rate",
        lambda: fmt(Q_(1.2e6, "token/s")),
        "1.2 million tokens/s",
        "1.2e6: tokens in words",
    ),
    ("bits", lambda: fmt(Q_(400e9, "bit/s")), "400 Gbit/s", "400e9/1e9"),
    ("microseconds", lambda: fmt(Q_(0.0005, "s")), "500 µs", "5e-4 s = 500e-6 s"),
    ("milliseconds", lambda: fmt(Q_(2.5e-3, "s")), "2.5 ms", "2.5e-3 s"),
    ("energy-per-token", lambda: fmt(Q_(5e-4, "J/token")), "500 µJ/token", "5e-4 J"),
    ("exa", lambda: fmt(Q_(1e18, "FLOP")), "1 EFLOP", "exa is the largest prefix used"),
    # GPT-3 175B training compute 3.14e23 FLOP (Brown et al. 2020, Table D.1).
    ("beyond-exa", lambda: fmt(Q_(3.14e23, "FLOP")), "3.14 × 10²³ FLOP", "past exa: 10^n"),
    ("no-millibytes", lambda: fmt(Q_(0.5, "B")), "0.5 B", "counting units: no sub-prefix"),
    ("negative", lambda: fmt(Q_(-3.35e12, "B/s")), "-3.35 TB/s", "sign kept"),
    ("zero", lambda: fmt(Q_(0, "B/s")), "0 B/s", "zero keeps the base unit"),
    # --- digits ------------------------------------------------------------------------------
    ("digits-2", lambda: fmt(Q_(3.35e12, "B/s"), digits=2), "3.4 TB/s", "3.35 -> 3.4 (asked)"),
    ("digits-1", lambda: fmt(Q_(989.4e12, "FLOP/s"), digits=1), "1 PFLOP/s", "989.4 T -> 1 P"),
    ("digits-climb", lambda: fmt(Q_(999.96e9, "B"), digits=3), "1 TB", "999.96 G -> 1.00 T"),
    ("digits-no-pad", lambda: fmt(Q_(80e9, "B"), digits=3), "80 GB", "trailing zeros dropped"),
    ("computed-third", lambda: fmt(Q_(1e9, "B") / 3), "333.3 MB", "1e9/3 B: 4 digits"),
    ("noise-cleared", lambda: fmt(Q_(0.1 + 0.2, "s")), "300 ms", "0.30000000000000004 s"),
    # --- explicit unit, thousands separators -------------------------------------------------
    ("unit-GBps", lambda: fmt(Q_(3.35e12, "B/s"), "GB/s"), "3,350 GB/s", "3.35e12/1e9"),
    ("unit-MWh", lambda: fmt(Q_(1.287, "GWh"), "MWh"), "1,287 MWh", "1.287 GWh * 1e3"),
    # GPT-3 training energy 1,287 MWh (Patterson et al. 2021, Table 4).
    ("plain-in-unit", lambda: fmt(1287, "MWh"), "1,287 MWh", "number taken in MWh"),
    ("unit-kWh-nosep", lambda: fmt(Q_(1.287, "GWh"), "kWh", sep=""), "1287000 kWh", "1.287e6"),
    ("bits-to-bytes", lambda: fmt(Q_(400, "Gbit/s"), "GB/s"), "50 GB/s", "400/8"),
    ("kwh-to-joules", lambda: fmt(Q_(1, "kWh"), "J"), "3,600,000 J", "1000 W * 3600 s"),
    ("plain-count", lambda: fmt(16384.0), "16,384", "grouped"),
    ("plain-third", lambda: fmt(1 / 3), "0.3333", "non-terminating: 4 digits"),
    ("plain-huge", lambda: fmt(1e23), "1 × 10²³", "too large for positional"),
    ("nbsp", lambda: fmt(Q_(3.35e12, "B/s"), space=NBSP), "3.35" + NBSP + "TB/s", "space="),
    # --- IEC vs SI ---------------------------------------------------------------------------
    # 80 GiB = 80 * 2^30 B = 85,899,345,920 B = 85.899... GB (10 digits: shown to 4).
    ("gib-default-si", lambda: fmt(Q_(80, "GiB")), "85.9 GB", "80*2^30/1e9 = 85.90"),
    ("gib-asked", lambda: fmt(Q_(80, "GiB"), "GiB"), "80 GiB", "IEC when asked"),
    # 80e9 / 2^30 = 74.505805969...
    ("gb-to-gib", lambda: fmt(Q_(80e9, "B"), "GiB"), "74.51 GiB", "80e9/2^30"),
    # --- carbon, time, other dimensions -----------------------------------------------------
    ("grid-intensity", lambda: fmt(Q_(0.4, "kgCO2e/kWh")), "400 g CO₂e/kWh", "0.4 kg = 400 g"),
    (
        "grid-asked",
        lambda: fmt(Q_(0.4, "kgCO2e/kWh"), "kgCO2e/kWh"),
        "0.4 kg CO₂e/kWh",
        "unit kept",
    ),
    # GPT-3 training emissions 552 tCO2e (Patterson et al. 2021, Table 4).
    ("tonnes", lambda: fmt(Q_(552, "tCO2e")), "552 t CO₂e", "5.52e8 g >= 1e6 g: tonnes"),
    ("kilotonnes", lambda: fmt(Q_(552e3, "tCO2e")), "552 kt CO₂e", "552e3 t"),
    ("kilograms", lambda: fmt(Q_(5.2e4, "gCO2e")), "52 kg CO₂e", "5.2e4 g / 1e3"),
    ("minutes", lambda: fmt(Q_(90, "s")), "1.5 min", "90/60"),
    ("exact-seconds", lambda: fmt(Q_(100, "s")), "100 s", "100/60 is not exact"),
    ("hours", lambda: fmt(Q_(5400, "s")), "1.5 h", "5400/3600"),
    ("days", lambda: fmt(Q_(37, "day")), "37 d", "37*86400 s >= 48 h"),
    ("days-computed", lambda: fmt(Q_(3.2e6, "s"), digits=3), "37 d", "3.2e6/86400 = 37.04"),
    ("years", lambda: fmt(Q_(3, "year")), "3 yr", "pint's 'a' shown as 'yr'"),
    ("celsius", lambda: fmt(Q_(25, "degC")), "25 °C", "offset units keep their unit"),
    ("percent-unit", lambda: fmt(Q_(41.9, "percent")), "41.9%", "no space before %"),
    ("ratio", lambda: fmt(Q_(1, "GB") / Q_(1, "MB")), "1,000", "1e9 B / 1e6 B"),
    ("offset-convert", lambda: fmt(Q_(25, "degC"), "K"), "298.15 K", "25 + 273.15"),
    # --- suffix / per ------------------------------------------------------------------------
    ("suffix", lambda: fmt(Q_(1.9e9, "B"), suffix="per GPU"), "1.9 GB per GPU", "suffix"),
    ("per", lambda: per(Q_(1.9e9, "B"), "GPU"), "1.9 GB per GPU", "same via per()"),
    # --- counts ------------------------------------------------------------------------------
    ("fmt-int", lambda: fmt_int(16384), "16,384", "2^14"),
    ("commas-float-whole", lambda: commas(1234567.0), "1,234,567", "a whole float"),
    ("fmt-int-unit", lambda: fmt_int(Q_(2048, "token")), "2,048 token", "unit kept"),
    # GPT-3: 175B parameters (Brown et al. 2020); Llama 3: 15T tokens (Meta 2024).
    ("count-B", lambda: count(175e9, "parameters"), "175B parameters", "175e9/1e9"),
    ("count-T", lambda: count(Q_(15e12, "token"), "tokens"), "15T tokens", "15e12/1e12"),
    ("count-Gparam", lambda: count(Q_(6.74, "Gparam")), "6.74B", "6.74e9"),
    ("count-small", lambda: count(16384), "16,384", "below a million: in full"),
    # --- percentages -------------------------------------------------------------------------
    ("pct", lambda: pct(0.419), "41.9%", "0.419*100"),
    ("pct-digits", lambda: pct(0.419, digits=2), "42%", "41.9 -> 42"),
    ("pct-small", lambda: pct(0.0005), "0.05%", "5e-4*100"),
    ("pct-one", lambda: pct(1.0), "100%", "1*100"),
    ("pct-quantity", lambda: pct(Q_(41.9, "percent")), "41.9%", "0.419 as a Quantity"),
    # --- money -------------------------------------------------------------------------------
    ("money-M", lambda: money(4.2e6), "$4.2M", "4.2e6/1e6"),
    ("money-full", lambda: money(1250), "$1,250", "below 1e6: in full"),
    ("money-cents", lambda: money(0.42), "$0.42", "cents"),
    ("money-pair", lambda: money(2.5), "$2.50", "cents come in pairs"),
    ("money-round-cents", lambda: money(1250.456), "$1,250.46", "7 digits: to the cent"),
    ("money-sub-cent", lambda: money(2.149), "$2.149", "4 digits carried: all kept"),
    ("money-third", lambda: money(10 / 3), "$3.33", "3.333...: to the cent"),
    ("money-B", lambda: money(Q_(1.234e9, "USD"), digits=2), "$1.2B", "giga -> B(illion)"),
    ("money-rate", lambda: money(Q_(2.5, "USD/hour")), "$2.50/h", "per hour"),
    ("money-fmt", lambda: fmt(Q_(4.2e6, "USD")), "$4.2M", "fmt delegates to money"),
    ("money-fmt-USD", lambda: fmt(Q_(4.2e6, "USD"), "USD"), "$4,200,000", "no scale"),
    ("money-per-kWh", lambda: fmt(Q_(0.12, "USD/kWh")), "$0.12/kWh", "electricity price"),
    (
        "money-rate-unit",
        lambda: fmt(Q_(2.5, "USD/hour"), "USD/min"),
        "$0.04167/min",
        "2.5/60 = 0.041666...: 4 digits",
    ),
    # --- multiples ---------------------------------------------------------------------------
    ("times", lambda: times(3.2), "3.2×", "ratio"),
    ("multiple", lambda: multiple(1000), "1,000×", "grouped"),
    ("times-digits", lambda: times(2 / 3, digits=2), "0.67×", "0.666... -> 0.67"),
    # --- ranges ------------------------------------------------------------------------------
    ("range", lambda: rng(Q_(1.9e9, "B"), Q_(2.4e9, "B")), "1.9–2.4 GB", "shared GB"),
    ("range-shared", lambda: rng(Q_(0.5e9, "B"), Q_(2.4e9, "B")), "0.5–2.4 GB", "prefix of hi"),
    ("range-unit", lambda: rng(1.9, 2.4, "GB"), "1.9–2.4 GB", "numbers in GB"),
    ("range-mixed", lambda: rng(Q_(500, "MB"), Q_(2.4, "GB")), "0.5–2.4 GB", "500 MB = 0.5 GB"),
    ("range-time", lambda: rng(Q_(5, "s"), Q_(100, "s")), "5–100 s", "unit of shorter end"),
    ("range-money", lambda: rng(Q_(1e6, "USD"), Q_(2.5e6, "USD")), "$1M–$2.5M", "dollars"),
    ("range-plain", lambda: rng(3, 5), "3–5", "no unit"),
    (
        "range-money-unit",
        lambda: rng(Q_(1e6, "USD"), Q_(2.5e6, "USD"), "USD"),
        "$1,000,000–$2,500,000",
        "unit=USD: no scale",
    ),
    (
        "range-ratio",
        lambda: rng(Q_(1, "GB") / Q_(1, "MB"), Q_(2, "GB") / Q_(1, "MB")),
        "1,000–2,000",
        "GB/MB = 1000",
    ),
    (
        "range-beyond-exa",
        lambda: rng(Q_(1e23, "FLOP"), Q_(3.14e23, "FLOP")),
        "1 × 10²³–3.14 × 10²³ FLOP",
        "past exa: 10^n",
    ),
    # --- scientific notation and LaTeX -------------------------------------------------------
    ("sci", lambda: sci(3.14e23), "3.14 × 10²³", "3.14e23"),
    ("sci-digits", lambda: sci(3.14159e23, digits=3), "3.14 × 10²³", "3.14159 -> 3.14"),
    ("sci-negative-exp", lambda: sci(0.00012), "1.2 × 10⁻⁴", "1.2e-4"),
    ("sci-quantity", lambda: sci(Q_(3.14e23, "FLOP")), "3.14 × 10²³ FLOP", "unit after"),
    ("sci-unit", lambda: sci(Q_(3.14e23, "FLOP"), unit="EFLOP"), "3.14 × 10⁵ EFLOP", "/1e18"),
    ("latex", lambda: latex(3.14e23), r"3.14 \times 10^{23}", "LaTeX"),
    (
        "latex-unit",
        lambda: latex(Q_(3.14e23, "FLOP")),
        r"3.14 \times 10^{23}\,\mathrm{FLOP}",
        "pint ~L unit",
    ),
    ("md-math", lambda: md_math(3.14e23), r"$3.14 \times 10^{23}$", "wrapped in $"),
    ("md-math-expr", lambda: md_math(r"\eta = 0.5"), r"$\eta = 0.5$", "old API: expression"),
    ("check-true", lambda: check(3.35 > 2.0, "HBM3 exceeds 2 TB/s"), "", "inline: empty"),
]


@pytest.mark.parametrize(
    ("call", "expected"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_table(call, expected):
    out = call()
    assert isinstance(out, Formatted)
    assert out == expected


def test_table_is_large_enough():
    assert len(CASES) >= 40
    assert len({c[0] for c in CASES}) == len(CASES)


# (id, call, error class, fragment the message must contain)
REFUSALS = [
    ("nan", lambda: fmt(float("nan")), FormatError, "finite"),
    ("inf", lambda: fmt(float("inf"), "GB"), FormatError, "finite"),
    ("nan-quantity", lambda: fmt(Q_(float("nan"), "s")), FormatError, "finite"),
    ("none", lambda: fmt(None), FormatError, "None"),
    ("string", lambda: fmt("3.35 TB/s"), FormatError, "string"),
    ("bool", lambda: fmt(True), FormatError, "boolean"),
    ("array", lambda: fmt(np.array([1.0, 2.0])), FormatError, "array"),
    ("wrong-dim", lambda: fmt(Q_(80, "GB"), "GB/s"), FormatUnitError, "GB/s"),
    ("wrong-dim-number", lambda: sci(Q_(1, "s"), unit="GB"), FormatUnitError, "GB"),
    ("unknown-unit", lambda: fmt(1, "furlongz"), FormatUnitError, "furlongz"),
    ("bad-unit-type", lambda: fmt(1, 3), FormatError, "unit"),
    ("digits-negative", lambda: fmt(1.0, digits=-1), FormatError, "digits"),
    ("digits-zero", lambda: pct(0.5, digits=0), FormatError, "digits"),
    ("digits-float", lambda: money(1.0, digits=2.5), FormatError, "digits"),
    ("digits-too-many", lambda: sci(1.0, digits=16), FormatError, "digits"),
    ("range-reversed", lambda: rng(2, 1), FormatError, "high"),
    ("range-dims", lambda: rng(Q_(1, "GB"), Q_(1, "s")), FormatUnitError, "s"),
    ("range-half-unit", lambda: rng(Q_(1, "GB"), 2), FormatUnitError, "unit"),
    ("money-not-money", lambda: money(Q_(1, "GB")), FormatUnitError, "USD"),
    ("count-not-count", lambda: count(Q_(1, "s")), FormatUnitError, "count"),
    ("pct-not-fraction", lambda: pct(Q_(1, "GB")), FormatUnitError, "GB"),
    ("check-false", lambda: check(1 > 2, "one exceeds two"), BookCheckError, "one exceeds two"),
    ("check-array", lambda: check(np.array([True, False]), "x"), FormatError, ".all()"),
    ("check-none", lambda: check(None, "x"), FormatError, "boolean"),
    ("check-no-message", lambda: check(True, ""), FormatError, "message"),
    ("md-math-empty", lambda: md_math(""), FormatError, "LaTeX"),
    ("per-empty", lambda: per(Q_(1, "GB"), ""), FormatError, "what"),
]


@pytest.mark.parametrize(
    ("call", "error", "fragment"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_refusals(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, MlsysError)
    assert isinstance(info.value, ValueError)
    assert fragment in str(info.value)


def test_error_hierarchy():
    assert issubclass(FormatError, ParameterError)
    assert issubclass(FormatUnitError, FormatError)
    assert issubclass(FormatUnitError, UnitError)
    assert issubclass(BookCheckError, MlsysError)
    err = BookCheckError("the claim")
    assert err.message == "the claim"


def test_numpy_scalars_and_zero_d_arrays():
    # np.float64(3.35e12) and a 0-d array are one number: same as the float.
    assert fmt(np.float64(3.35e12), "B/s") == "3,350,000,000,000 B/s"
    assert fmt(Q_(np.array(3.35e12), "B/s")) == "3.35 TB/s"
    assert fmt_int(np.int64(16384)) == "16,384"
    assert check(np.bool_(True), "numpy booleans are booleans") == ""


def test_quantity_from_another_registry():
    other = pint.UnitRegistry()
    # The other registry treats bytes as dimensionless; its string form still converts.
    assert fmt(other.Quantity(3.35, "TB/s")) == "3.35 TB/s"
    assert fmt(other.Quantity(2.5, "ms"), "us") == "2,500 µs"


def test_markdown_repr_is_verbatim_and_escapes_dollars():
    out = fmt(Q_(3.35e12, "B/s"))
    # A number with no recorded origin is still marked, so a page can be audited.
    assert out._repr_markdown_() == "[3.35\u00a0TB/s]{.mlsys-num}"
    # "$4.2M ... $1.3M" would open TeX math in pandoc; the Markdown form escapes "$".
    assert money(4.2e6)._repr_markdown_() == r"[\$4.2M]{.mlsys-num}"
    assert check(True, "nothing to show")._repr_markdown_() == ""
    math = md_math(3.14e23)
    assert isinstance(math, Math)
    assert math._repr_markdown_() == r"$3.14 \times 10^{23}$"
    # A str subclass: works in f-strings and comparisons as plain text.
    assert f"{out}!" == "3.35 TB/s!"
    assert str(out) == "3.35 TB/s"


def test_shim_surface():
    expected = {
        "fmt", "per", "rng", "fmt_int", "commas", "count", "pct", "times", "multiple",
        "money", "sci", "latex", "md_math", "check", "Formatted", "Math", "FormatError",
        "FormatUnitError", "BookCheckError", "MAX_CARRIED_DIGITS", "COMPUTED_DIGITS",
    }  # fmt: skip
    # mlsys's own names; the book's contract (compatA, tests/surface) adds its names.
    assert expected <= set(F.__all__)
    for name in expected:
        assert getattr(F, name) is not None


# sci_latex / md_sci are the book's own names now (mlsys.formatting serves the book's
# contract, tested in tests/surface), no longer deprecated aliases of latex / md_math.


def test_unknown_shim_name():
    with pytest.raises(AttributeError):
        F.no_such_formatter


def test_docstrings_have_examples():
    for name in ["fmt", "per", "rng", "fmt_int", "count", "pct", "times", "money", "sci",
                 "latex", "md_math", "check"]:  # fmt: skip
        doc = getattr(F, name).__doc__
        assert doc and "Examples" in doc and "Parameters" in doc, name


def test_jupyter_display_offers_markdown():
    # Quarto's inline expressions take the text/markdown output when there is one; a bare
    # str would only offer text/plain, which Quarto prints with quotes.
    interactive = pytest.importorskip("IPython.core.interactiveshell")
    shell = interactive.InteractiveShell.instance()
    data, _ = shell.display_formatter.format(fmt(Q_(3.35e12, "B/s")))
    assert data["text/markdown"] == "[3.35\u00a0TB/s]{.mlsys-num}"
    data, _ = shell.display_formatter.format(money(4.2e6))
    assert data["text/markdown"] == r"[\$4.2M]{.mlsys-num}"
