"""The book builds on a ``[dev]`` install: without torch the appendix says what it did not
measure, shows the predictions, and claims no measurement.

README's ``mlsys check book/quarto --execute`` and ``mlsys numbers book/quarto`` ran the
appendix's four-process torch cluster and failed where the ``[emulate]`` extra is absent.
The kernel here starts with ``torch`` unimportable (an IPython startup file
sets ``sys.modules["torch"] = None``, which makes ``import torch`` raise ImportError).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsys.book.kernel import execute_documents
from mlsys.core.provenance import split_span

APPENDIX = Path(__file__).resolve().parents[2] / "book" / "quarto" / "appendix-emulation.qmd"


@pytest.mark.book
def test_appendix_without_torch_builds_with_a_visible_note(tmp_path, monkeypatch):
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-no-torch.py").write_text('import sys\nsys.modules["torch"] = None\n')
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    (result,) = execute_documents([APPENDIX], jobs=1, timeout=120)
    assert result.completed and result.findings == [], result.findings
    values = {v.expression: v.text for v in result.inline_values}
    # what was not run is said plainly, and no sentence claims a measurement
    assert values["losses_text"] == "Its losses were not measured in this build."
    stages = [text for expr, text in values.items() if expr.startswith('"the stages measured:"')]
    assert stages == ["this build measured none of them."]
    shown = " ".join(values.values())
    assert "not measured for" not in shown and "measured idle" not in shown
    # the predictions are still computed, with their source: the bubble (p - 1)/(m + p - 1)
    # of 4 stages and 8 micro-batches is 3/11 = 27.27%
    (bubble,) = [text for expr, text in values.items() if expr.startswith("pct(bubble")]
    assert split_span(bubble)[0] == "27.27%"
    assert "Huang et al. 2019" in split_span(bubble)[1]
