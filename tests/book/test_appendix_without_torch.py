"""The book builds on a ``[dev]`` install: without torch the appendix says so and skips.

README's ``mlsys check book/quarto --execute`` and ``mlsys numbers book/quarto`` ran the
appendix's four-process torch cluster and failed where the ``[emulate]`` extra is absent
(issue 13). The kernel here starts with ``torch`` unimportable (an IPython startup file
sets ``sys.modules["torch"] = None``, which makes ``import torch`` raise ImportError).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsys.book.kernel import execute_documents

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
    # measured values say so; the predictions are still computed: 2(N-1)/N of a 64 KiB
    # buffer on 4 ranks is 1.5 x 65,536 = 98,304 bytes
    assert values["ar_equal"] == "not measured"
    assert values["B(ar_sent)"] == "not measured"
    assert values["rel(grad_err)"] == "not measured"
    (predicted,) = [
        text for expr, text in values.items() if expr.startswith("B(ring_allreduce_bytes_per_rank(")
    ]
    assert "98.304\u00a0kB" in predicted
    # and it says where it comes from (Patarasuk & Yuan's bound) even without torch
    assert "Patarasuk & Yuan 2009" in predicted
