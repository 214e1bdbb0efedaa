"""Old ``calc_*`` spellings keep working, warn, and agree with the new formulas."""

import pytest

import mlsys.formulas as F
from mlsys import Q_


def _old(name):
    with pytest.warns(DeprecationWarning, match=F._DEPRECATED[name]):
        return getattr(F, name)


def test_ring_allreduce_matches_style_example():
    # STYLE.md: 1 GB over 8 ranks at 450 GB/s per direction, 1 us per step:
    # 2*(7/8)*1e9/450e9 + 2*7*1e-6 = 3.8889 ms + 14 us = 3.9029 ms.
    old = _old("calc_ring_allreduce_time")(Q_(1, "GB"), 8, Q_(450, "GB/s"), Q_(1, "us"))
    assert old.to("ms").magnitude == pytest.approx(3.90289, rel=1e-5)
    assert old.to("s").magnitude == pytest.approx(F.ring_allreduce_time(1e9, 8, 450e9, 1e-6))


def test_kv_cache_old_worked_example():
    # The old docstring's example: Llama-3 8B, 32 layers, 8 KV heads, 128 dims,
    # 4096 tokens, batch 1, fp16: 2*32*8*128*4096*2 = 536,870,912 bytes.
    old = _old("calc_kv_cache_size")(32, 8, 128, 4096, 1)
    assert old == 536_870_912  # numbers in, a number of bytes out (the book's convention)
    assert _old("calc_kv_cache_size")(32, 8, 128, 4096, 1, Q_(2, "byte")).m_as("B") == old


def test_training_flops_gpt3():
    # Brown et al. 2020, Table D.1: 6 * 174.6e9 * 300e9 = 3.14e23 FLOPs.
    old = _old("calc_transformer_training_flops")(174.6e9, 300e9)
    assert old == pytest.approx(3.1428e23, rel=1e-4)
    # a Quantity in, a Quantity out, FLOPs as the book's plain counts (flop_count)
    old = _old("calc_transformer_training_flops")(Q_(174.6e9, "parameter"), 300e9)
    assert old.m_as("") == pytest.approx(3.1428e23, rel=1e-4)


def test_hierarchical_argument_order_is_mapped():
    old = _old("calc_hierarchical_allreduce_time")(
        Q_(1, "GB"), 4, 8, Q_(450, "GB/s"), Q_(50, "GB/s"), Q_(2, "us"), Q_(5, "us")
    )
    new = F.hierarchical_allreduce_time(1e9, 8, 4, 450e9, 2e-6, 50e9, 5e-6)
    assert old.to("s").magnitude == pytest.approx(new)


def test_old_names_reject_wrong_units():
    with pytest.raises(ValueError, match="bandwidth_bytes_s"):
        _old("calc_ring_allreduce_time")(Q_(1, "GB"), 8, Q_(450, "GB"), Q_(1, "us"))
