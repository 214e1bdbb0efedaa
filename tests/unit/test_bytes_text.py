"""A refusal message's sizes are the display policy's: the fast text equals fmt's."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys.core.fmt import fmt
from mlsys.core.solvers.memory import _bytes_text
from mlsys.core.units import Q_


def _fmt_text(x: float) -> str:
    return str(fmt(Q_(x, "byte"), digits=3))


def _mismatches(values) -> list[tuple[float, str, str]]:
    """The values whose fast text differs from fmt's, with both texts."""
    out = []
    for x in map(float, values):
        fast, slow = _bytes_text(x), _fmt_text(x)
        if fast != slow:
            out.append((x, fast, slow))
    return out


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=0.0, max_value=1e24, allow_nan=False))
def test_message_size_is_what_fmt_prints(x):
    """Hypothesis's floats: its edge cases (0, the bounds, integers, tiny values)."""
    assert _bytes_text(x) == _fmt_text(x)


def test_message_size_is_what_fmt_prints_in_every_decade():
    """400 sizes in each decade from 1 mB to 1 YB (log-uniform, fixed seed), and each
    power of ten with its neighbouring floats."""
    rng = np.random.default_rng(20241202)
    decades = np.arange(-3, 24)
    spread = 10.0 ** (decades[:, None] + rng.random((decades.size, 400)))
    powers = 10.0 ** np.arange(-3, 25, dtype=float)
    edges = np.concatenate([powers, np.nextafter(powers, 0.0), np.nextafter(powers, np.inf)])
    assert _mismatches(np.concatenate([spread.ravel(), edges])) == []


def test_message_size_at_prefix_boundaries():
    """Every value that rounds across a prefix, 0.995 to 1.005 of each power of ten up
    to 10^24 (999.5 GB is "1 TB")."""
    values = [m / 1000.0 * 10.0**p * 1000.0 for p in range(22) for m in range(995, 1006)]
    assert _mismatches(values) == []


def test_worked_sizes():
    assert _bytes_text(2.83e12) == "2.83 TB"
    assert _bytes_text(5.389e8) == "539 MB"
    assert _bytes_text(9.995e8) == "1 GB"
    assert _bytes_text(999.0) == "999 B"
    assert _bytes_text(5015.0) == "5.02 kB"  # fmt's rounding of the decimal tie
    assert _bytes_text(0.5) == _fmt_text(0.5)  # below a byte: fmt itself


def test_message_size_at_decimal_ties():
    """Every size ending in a 5 after three digits (5,015 B), 1,005 B to 9.995e21 B:
    each rounds as fmt rounds it."""
    values = [(head * 10 + 5) * 10**power for head in range(100, 1000) for power in range(19)]
    assert _mismatches(values) == []
