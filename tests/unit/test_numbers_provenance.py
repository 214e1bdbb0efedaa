"""``mlsys numbers`` records each inline value's source, and counts the ones without."""

from __future__ import annotations

import pytest

from mlsys.book.numbers import (
    ProvenanceCoverage,
    collect_numbers,
    html_provenance_coverage,
    manifest_provenance_coverage,
)

_CHAPTER = """---
title: t
---

```{python}
from mlsys import Hardware
from mlsys.formatting import fmt
h100 = Hardware.H100
```

Bandwidth `{python} fmt(h100.memory_bandwidth)`, doubled `{python} fmt(h100.memory_bandwidth * 2)`,
layers `{python} 2 * 40`, bound `{python} "memory"`.
"""


@pytest.mark.book
def test_manifest_records_the_plain_text_and_the_source(tmp_path):
    (tmp_path / "ch.qmd").write_text(_CHAPTER, encoding="utf-8")
    manifest, findings = collect_numbers([tmp_path], jobs=1)
    assert not [f for f in findings if f.severity == "error"], findings
    values = {v["expression"]: v for v in manifest["files"]["ch.qmd"]}
    bandwidth = values["fmt(h100.memory_bandwidth)"]
    # The text is what a reader sees; the span that carries the source is split off.
    assert bandwidth["text"] == "3.35 TB/s"
    assert "NVIDIA H100" in bandwidth["source"] and "datasheet" in bandwidth["source"]
    doubled = values["fmt(h100.memory_bandwidth * 2)"]
    # Computed from a catalog value: it keeps the origin through the arithmetic.
    assert doubled["text"] == "6.7 TB/s" and doubled["source"] == bandwidth["source"]
    coverage = manifest_provenance_coverage(manifest)
    # Three numbers (3.35 TB/s, 6.7 TB/s, 80); "memory" is a word, not counted.
    assert (coverage.with_source, coverage.without_source) == (2, 1)
    assert coverage.missing == ("ch.qmd:12: 2 * 40",)
    assert coverage.fraction == pytest.approx(2 / 3)


def test_html_coverage_reads_nested_markup_and_sums_pages():
    one = '<p><span class="mlsys-num" title="H100 datasheet"><strong>3.35</strong> TB/s</span></p>'
    two = '<td><span class="mlsys-num">8</span></td><span class="other">9</span>'
    coverage = html_provenance_coverage([one, two])
    assert coverage == ProvenanceCoverage(1, 1, ("8",))
    assert coverage.total == 2 and coverage.fraction == 0.5
    assert html_provenance_coverage("<p>no numbers</p>").fraction == 1.0


_DERIVED = """---
title: d
---

```{python}
from mlsys import Hardware
from mlsys.core.provenance import sourced
from mlsys.formatting import count, times

h100, a100 = Hardware.H100, Hardware.A100_80GB
gpus = sourced(16_384, "Dubey et al. (2024), Table 4")
```

Ratio `{python} times(h100.memory_bandwidth / a100.memory_bandwidth)`,
nodes `{python} count(gpus // 8, "nodes")`, bare `{python} gpus`.
"""


@pytest.mark.book
def test_manifest_records_every_origin_of_a_derived_number(tmp_path):
    from mlsys.core.provenance import CatalogOrigin

    (tmp_path / "d.qmd").write_text(_DERIVED, encoding="utf-8")
    manifest, findings = collect_numbers([tmp_path], jobs=1)
    assert not [f for f in findings if f.severity == "error"], findings
    values = {v["expression"]: v for v in manifest["files"]["d.qmd"]}
    from mlsys import Hardware

    ratio = values["times(h100.memory_bandwidth / a100.memory_bandwidth)"]
    # 3,350 / 2,039 GB/s (the two datasheets): the same text the page's hover shows.
    assert ratio["text"] == "1.643×"
    assert ratio["source"] == (
        "Computed from: "
        + CatalogOrigin(Hardware.H100, "memory_bandwidth").describe()
        + "; "
        + CatalogOrigin(Hardware.A100_80GB, "memory_bandwidth").describe()
    )
    nodes = values['count(gpus // 8, "nodes")']
    assert (nodes["text"], nodes["source"]) == ("2,048 nodes", "Dubey et al. (2024), Table 4")
    # A bare inline value prints its digits with no span: counted as a number without one.
    coverage = manifest_provenance_coverage(manifest)
    assert (coverage.with_source, coverage.missing) == (2, ("d.qmd:15: gpus",))


def test_names_with_digits_are_not_numbers_but_signed_and_priced_numbers_are():
    texts = {
        "Llama 2 70B": False,  # a catalog label: a name, with no source to give
        "NVIDIA H100 SXM5 80GB": False,
        "bf16": False,
        "ZeRO-1": False,
        "memory": False,
        "1,024 GPUs": True,
        "~3×": True,
        "\\$4.2M": True,
        "−1.5%": True,
        "(8)": True,
    }
    manifest = {
        "files": {
            "c.qmd": [
                {"line": i, "expression": f"e{i}", "text": text, "source": None}
                for i, text in enumerate(texts)
            ]
        }
    }
    coverage = manifest_provenance_coverage(manifest)
    counted = {texts_key for texts_key, number in texts.items() if number}
    assert coverage.without_source == len(counted) == 5
    assert coverage.missing == tuple(
        f"c.qmd:{i}: e{i}" for i, text in enumerate(texts) if text in counted
    )
