"""A refusal message's sizes are the display policy's: the fast text equals fmt's."""

from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys.core.fmt import fmt
from mlsys.core.solvers.memory import _bytes_text
from mlsys.core.units import Q_


def _fmt_text(x: float) -> str:
    return str(fmt(Q_(x, "byte"), digits=3))


@settings(max_examples=3000, deadline=None)
@given(st.floats(min_value=0.0, max_value=1e24, allow_nan=False))
def test_message_size_is_what_fmt_prints(x):
    assert _bytes_text(x) == _fmt_text(x)


@settings(max_examples=2000, deadline=None)
@given(st.integers(min_value=0, max_value=21), st.integers(min_value=995, max_value=1005))
def test_message_size_at_prefix_boundaries(power, mantissa):
    """Values that round across a prefix (999.5 GB is "1 TB")."""
    x = mantissa / 1000.0 * 10.0**power * 1000.0
    assert _bytes_text(x) == _fmt_text(x)


def test_worked_sizes():
    assert _bytes_text(2.83e12) == "2.83 TB"
    assert _bytes_text(5.389e8) == "539 MB"
    assert _bytes_text(9.995e8) == "1 GB"
    assert _bytes_text(999.0) == "999 B"
    assert _bytes_text(5015.0) == "5.02 kB"  # fmt's rounding of the decimal tie
    assert _bytes_text(0.5) == _fmt_text(0.5)  # below a byte: fmt itself


@settings(max_examples=1000, deadline=None)
@given(st.integers(min_value=100, max_value=999), st.integers(min_value=0, max_value=18))
def test_message_size_at_decimal_ties(head, power):
    """Sizes ending in a 5 after three digits (5,015 B) round as fmt rounds them."""
    x = float((head * 10 + 5) * 10**power)
    assert _bytes_text(x) == _fmt_text(x)
