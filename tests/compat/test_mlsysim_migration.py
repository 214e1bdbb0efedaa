"""The migration report on small synthetic chapters written for the book's package."""

from __future__ import annotations

import pytest

from mlsys.book.migration import (
    book_values,
    differences,
    format_report,
    migration_report,
    run_chapter,
)

# A chapter as the newest era writes it: ResNet-50 FLOPs (the book's package: 4.1e9,
# multiply-adds; mlsys: 8.18e9 FLOPs), the A100's FP16 peak (same on both sides), the
# IB HDR latency (the book: 7 us; mlsys: 5 us).
CHAPTER = """
```{python}
from mlsysim import *
from mlsysim.core.constants import *
from mlsysim.fmt import fmt

class Example:
    gflops = Models.Vision.ResNet50.inference_flops.m_as(GFLOPs)
    gflops_str = fmt(gflops, precision=1, commas=False)
    peak_str = fmt(Hardware.Cloud.A100.compute.peak_flops.m_as(TFLOPs/second), precision=0)
    hdr_us_str = fmt(Systems.Fabrics.InfiniBand_HDR.latency_us, precision=0)
```

ResNet-50 needs `{python} Example.gflops_str` GFLOPs; the A100 peaks at
`{python} Example.peak_str` TFLOP/s; IB HDR latency `{python} Example.hdr_us_str` us.
"""


def test_run_chapter_prints_mlsys_values():
    run = run_chapter(CHAPTER)
    assert run.errors == []
    # 2 x 4.09e9 multiply-adds (torchvision) = 8.18 GFLOPs; A100: 624 sparse / 2 = 312
    assert run.values == [
        ("Example.gflops_str", "8.2"),
        ("Example.peak_str", "312"),
        ("Example.hdr_us_str", "5"),
    ]


def test_book_values_restore_everything():
    import mlsys.constants as constants
    from mlsys import Models

    before = Models.Vision.ResNet50.inference_flops
    with book_values(differences()):
        assert Models.Vision.ResNet50.inference_flops.m_as("") == pytest.approx(4.1e9)
        assert constants.RESNET50_FLOPs.m_as("") == pytest.approx(4.1e9)
    assert Models.Vision.ResNet50.inference_flops == before
    assert constants.RESNET50_FLOPs.m_as("") == pytest.approx(8.18e9)


def test_report_lists_each_changed_number_with_its_cause():
    report = migration_report(CHAPTER, name="synthetic.qmd")
    assert report.inline_total == 3 and report.errors_after == []
    changed = {c.expression: c for c in report.changes}
    assert set(changed) == {"Example.gflops_str", "Example.hdr_us_str"}  # the peak agrees
    flops = changed["Example.gflops_str"]
    assert (flops.before, flops.after) == ("4.1", "8.2")
    assert [d.key for d in flops.causes] == ["Models.Vision.ResNet50.inference_flops"]
    assert "multiply-add" in flops.causes[0].reason
    assert "He et al." in flops.causes[0].source  # the catalog's citation of mlsys's value
    hdr = changed["Example.hdr_us_str"]
    assert (hdr.before, hdr.after) == ("7", "5")
    assert [d.key for d in hdr.causes] == ["Systems.Fabrics.InfiniBand_HDR.latency_us"]
    text = format_report(report)
    assert text.startswith("### synthetic.qmd: 2 of 3 printed numbers change")
    assert "| Example.gflops_str | 4.1 | 8.2 |" in text


def test_chapter_without_differences_reports_nothing():
    plain = (
        "```{python}\nfrom mlsysim.fmt import fmt\nx = fmt(2.0, precision=1)\n```\n`{python} x`\n"
    )
    report = migration_report(plain)
    assert report.changes == [] and report.inline_total == 1


def test_differences_of_compatb_files_patch_and_restore() -> None:
    # figures only book_*.toml holds carry their own book value and reason
    from mlsys import Hardware, Models
    from mlsys.book.migration import book_values, differences

    mine = {d.key: d for d in differences() if d.key.startswith(("Models.Tiny", "Hardware.Edge"))}
    params = mine["Models.Tiny.DS_CNN.parameters"]
    assert "Hello Edge" in params.source
    bw = mine["Hardware.Edge.JetsonOrinNX.memory.bandwidth"]
    with book_values([params, bw]):
        assert Models.Tiny.DS_CNN.parameters.m_as("") == 200e3
        assert Hardware.Edge.JetsonOrinNX.memory.bandwidth.m_as("GB/s") == 102
    assert Models.Tiny.DS_CNN.parameters.m_as("") == 189.7e3
    assert Hardware.Edge.JetsonOrinNX.memory.bandwidth.m_as("GB/s") == 102.4


def test_repeated_print_is_one_row_and_nvlink_is_no_change() -> None:
    # The same changed number printed twice is one row marked (x2); the heading counts
    # both prints. NVLink keeps the book's both-directions 900 GB/s (a convention, not a
    # correction), so it is not reported as a change.
    chapter = """
```{python}
from mlsysim import *
from mlsysim.core.constants import *
from mlsysim.fmt import fmt

class Twice:
    hdr_us_str = fmt(Systems.Fabrics.InfiniBand_HDR.latency_us, precision=0)
    nvlink_str = fmt(NVLINK_H100_BW.m_as(GB / second), precision=0, commas=False)
```

`{python} Twice.hdr_us_str` us, again `{python} Twice.hdr_us_str` us;
NVLink `{python} Twice.nvlink_str` GB/s.
"""
    report = migration_report(chapter, name="twice.qmd")
    assert report.errors_after == []
    assert [c.expression for c in report.changes] == ["Twice.hdr_us_str"] * 2
    text = format_report(report)
    assert text.startswith("### twice.qmd: 2 of 3 printed numbers change")
    assert "| Twice.hdr_us_str (x2) | 7 | 5 |" in text
    assert text.count("Twice.hdr_us_str") == 1


def test_a_value_that_fails_is_a_failure_never_unchanged() -> None:
    # An inline value whose cell fails does not compute on mlsys (nor with any book
    # value): it is counted as a failure with its line, and never listed as unchanged.
    chapter = """
```{python}
from mlsysim import *
from mlsysim.fmt import fmt
class Broken:
    x_str = fmt(Hardware.Cloud.NoSuchAccelerator.memory.bandwidth.m_as(GB / second))
```

`{python} Broken.x_str` GB/s
"""
    report = migration_report(chapter, name="broken.qmd")
    assert report.failed and not report.render_succeeds
    assert report.cells_total == 1 and len(report.cell_failures) == 1
    assert (
        report.cell_failures[0].line == 2 and "NoSuchAccelerator" in report.cell_failures[0].error
    )
    assert [(f.line, f.what) for f in report.inline_failures] == [(9, "Broken.x_str")]
    assert report.changes == []
    text = format_report(report)
    assert "- inline values that compute: 0 of 1" in text
    assert "broken.qmd:9: Broken.x_str: NameError" in text


def test_report_says_what_it_compared() -> None:
    # mlsysim is not installed here: the book's own values were not measured, and the
    # report says that only recorded differences were compared
    from mlsys.book.migration import book_package_available

    report = migration_report(CHAPTER, name="synthetic.qmd")
    assert not book_package_available() and not report.book_measured
    assert "not the book's own package" in report.compared
    assert "were not compared" in format_report(report)


def test_book_package_present_is_measured(tmp_path, monkeypatch) -> None:
    # With a package named mlsysim importable, the chapter runs on it as written and
    # every computed number is compared: here a stand-in whose BYTES_FP16 is 3 bytes
    # prints 7 x 3 = 21 where mlsys prints 7 x 2 = 14, and the report measures that.
    import sys

    package = tmp_path / "mlsysim"
    (package / "core").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "core" / "__init__.py").write_text("", encoding="utf-8")
    (package / "fmt.py").write_text(
        "def fmt(x, precision=0, **kw):\n    return f'{x:.{precision}f}'\n", encoding="utf-8"
    )
    (package / "core" / "constants.py").write_text(
        "class _Bytes:\n    def m_as(self, unit):\n        return 3\n\nBYTES_FP16 = _Bytes()\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "mlsysim" or m.startswith("mlsysim.")]:
        monkeypatch.delitem(sys.modules, name)
    chapter = (
        "```{python}\nfrom mlsysim.fmt import fmt\nfrom mlsysim.core.constants import BYTES_FP16\n"
        "x_str = fmt(BYTES_FP16.m_as('byte') * 7, precision=0)\n```\n\n`{python} x_str` bytes\n"
    )
    report = migration_report(chapter, name="measured.qmd")
    assert report.book_measured and "book's own package" in report.compared
    assert [(c.expression, c.before, c.after) for c in report.changes] == [("x_str", "21", "14")]
    assert not report.failed
    for name in [m for m in sys.modules if m == "mlsysim" or m.startswith("mlsysim.")]:
        del sys.modules[name]
