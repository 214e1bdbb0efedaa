"""docs/_filters/sphinx-roles.lua: Sphinx roles in docstrings become interlinks links.

quartodoc's interlinks filter links the Markdown form ``[](`name`)``; docstrings written
for Sphinx say ``:func:`name```. The roles filter runs first and rewrites one into the
other, so no reference page shows ":func:" (before the filter, 184 of them stood in 91 pages).
Runs pandoc (the ``pypandoc-binary`` wheel) on a snippet; no Quarto needed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pypandoc = pytest.importorskip("pypandoc")

FILTER = Path(__file__).resolve().parents[2] / "docs" / "_filters" / "sphinx-roles.lua"


def _ast(markdown: str) -> list:
    done = subprocess.run(
        [pypandoc.get_pandoc_path(), "-f", "markdown", "-t", "json", "-L", str(FILTER)],
        input=markdown,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)["blocks"][0]["c"]


def _links(inlines: list) -> list[str]:
    return [i["c"][2][0] for i in inlines if i["t"] == "Link"]


def test_roles_become_interlinks_targets_and_the_role_word_goes():
    inlines = _ast(
        "See :func:`fmt`, (:meth:`DistributedModel.solve`) and "
        ":py:class:`~mlsys.MemoryModel`; keep `plain` code and a:b: text."
    )
    # interlinks' form: the target is the name between URL-encoded backticks
    assert _links(inlines) == [
        "%60fmt%60",
        "%60DistributedModel.solve%60",
        "%60~mlsys.MemoryModel%60",
    ]
    text = "".join(i["c"] for i in inlines if i["t"] == "Str")
    assert ":func:" not in text and ":meth:" not in text and ":py:class:" not in text
    assert "(" in text  # the parenthesis before :meth: stays
    assert "a:b:" in text  # not followed by code: not a role
    assert {"t": "Code", "c": [["", [], []], "plain"]} in inlines
