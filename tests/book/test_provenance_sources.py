"""The book's cited constants carry their citation on hover: ``source=`` on fmt's family.

A number the chapter takes from a paper (Llama 3's 419 interruptions, Dubey et al. 2024,
Table 5) or a price list is a plain Python number, so no catalog entry can name its
origin; ``count``, ``pct``, ``times`` and ``money`` take ``source=`` as ``fmt`` does.
"""

from __future__ import annotations

import pytest

from mlsys import Hardware
from mlsys.core.fmt import count, money, pct, times
from mlsys.core.solvers.reliability import LLAMA3_INTERRUPTIONS

TABLE5 = "Dubey et al. (2024), Table 5"


def test_count_of_llama3_interruptions_names_table5():
    # Table 5 of the Llama 3 paper lists 419 unexpected interruptions in all.
    shown = count(sum(LLAMA3_INTERRUPTIONS.values()), source=TABLE5)
    assert shown == "419"
    assert shown._repr_markdown_() == '[419]{.mlsys-num title="Dubey et al. (2024), Table 5"}'


@pytest.mark.parametrize(
    ("call", "text"),
    [
        # 98.32 $/h for 8 GPUs is 12.29 $/h each: three significant digits "$12.3"
        (lambda s: money(98.32 / 8, digits=3, source=s), "$12.3"),
        # 148 of 419 interruptions were faulty GPUs: 35.3 %
        (lambda s: pct(148 / 419, digits=3, source=s), "35.3%"),
        (lambda s: times(4.0, source=s), "4×"),
    ],
)
def test_family_takes_a_source(call, text):
    shown = call("a cited source")
    assert shown == text
    assert shown._repr_markdown_().endswith('{.mlsys-num title="a cited source"}')


def test_without_source_a_plain_number_stays_unmarked_by_origin():
    assert count(419)._repr_markdown_() == "[419]{.mlsys-num}"


def test_catalog_entry_as_source_names_it():
    # A catalog entry passed as the source names the entry in the hover text.
    shown = times(2.0, source=Hardware.H100)
    assert "H100" in shown.origin.describe()
