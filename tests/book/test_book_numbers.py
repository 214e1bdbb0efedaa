"""``mlsys numbers``: the manifest of printed values, its stable JSON and its diff."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mlsys.book.numbers import diff_manifests, dump_manifest, format_diff, load_manifest
from mlsys.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def _manifest(values: dict[str, list[tuple[int, str, str]]]) -> dict:
    return {
        "mlsys_numbers": 1,
        "files": {
            f: [{"line": ln, "col": 1, "expression": e, "text": t} for ln, e, t in vs]
            for f, vs in values.items()
        },
    }


def test_diff_changed_added_removed():
    old = _manifest({"a.qmd": [(3, "bw", "3.35 TB/s"), (9, "n", "8")], "b.qmd": [(1, "x", "1")]})
    new = _manifest({"a.qmd": [(3, "bw", "4.8 TB/s"), (9, "n", "8"), (12, "m", "2")]})
    diff = diff_manifests(old, new)
    assert [c.format() for c in diff.changed] == ["a.qmd:3: bw: 3.35 TB/s → 4.8 TB/s"]
    assert [c.format() for c in diff.added] == ["a.qmd:12: m: added: 2"]
    assert [c.format() for c in diff.removed] == ["b.qmd:1: x: removed: 1"]
    assert format_diff(diff).splitlines()[-1] == "1 changed, 1 added, 1 removed"
    assert diff


def test_moving_a_value_down_the_page_is_not_a_change():
    old = _manifest({"a.qmd": [(3, "bw", "3.35 TB/s"), (5, "bw", "3.35 TB/s")]})
    new = _manifest({"a.qmd": [(10, "bw", "3.35 TB/s"), (14, "bw", "3.35 TB/s")]})
    assert not diff_manifests(old, new)


def test_manifest_json_is_stable(tmp_path):
    m = _manifest({"z.qmd": [(2, "β", "1 µs")], "a.qmd": [(1, "x", "1")]})
    text = dump_manifest(m)
    assert text.endswith("}\n")
    assert text.index('"a.qmd"') < text.index('"z.qmd"')  # sorted keys
    assert "µs" in text  # UTF-8 kept readable
    assert dump_manifest(json.loads(text)) == text
    path = tmp_path / "numbers.json"
    path.write_text(text, encoding="utf-8")
    assert load_manifest(path) == m
    path.write_text("[]")
    with pytest.raises(ValueError, match="not an mlsys numbers manifest"):
        load_manifest(path)


@pytest.mark.book
def test_numbers_round_trip_and_diff_names_file_line(tmp_path, capsys):
    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(FIXTURES / "_ok" / "clean.qmd", book / "clean.qmd")
    # Quarto evaluates an inline expression when it reaches it: after the cells above,
    # before the cells below (quarto-cli, src/resources/jupyter/notebook.py).
    # An include's cells run where the shortcode stands, in the chapter's kernel.
    (book / "_defs.qmd").write_text("```{python}\nbase = 40\n```\n\nBase `{python} base`.\n")
    (book / "order.qmd").write_text(
        "```{python}\nstep = 1\n```\n\nFirst `{python} step`.\n\n"
        "```{python}\nstep = 2\n```\n\nThen `{python} step`.\n\n"
        "{{< include _defs.qmd >}}\n\nTotal `{python} base + step`.\n"
    )
    out = tmp_path / "numbers.json"
    assert main(["numbers", str(book), "--out", str(out)]) == 0
    manifest = load_manifest(out)
    assert [(v["line"], v["text"]) for v in manifest["files"]["order.qmd"]] == [
        (5, "1"),
        (11, "2"),
        (15, "42"),
    ]
    # A value written in an included file is recorded at its place in that file.
    assert [(v["line"], v["text"]) for v in manifest["files"]["_defs.qmd"]] == [(5, "40")]
    values = manifest["files"]["clean.qmd"]
    assert [(v["line"], v["text"]) for v in values] == [
        (18, "3,350 GB/s"),  # 3.35 TB/s in GB/s
        (19, "3.35"),
        (32, "23.9 ms"),  # 80 GB / 3.35 TB/s = 23.88 ms
    ]
    capsys.readouterr()

    # A datasheet revision: the fixture copy now says 4.8 TB/s.
    chapter = book / "clean.qmd"
    chapter.write_text(chapter.read_text().replace("Q_(3.35,", "Q_(4.8,"))
    assert main(["numbers", str(book), "--diff", str(out)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "clean.qmd:18: gb_per_s: 3,350 GB/s → 4,800 GB/s",
        "clean.qmd:19: round(bandwidth.to('TB/s').magnitude, 2): 3.35 → 4.8",
        'clean.qmd:32: f"{seconds.magnitude:.1f} ms": 23.9 ms → 16.7 ms',  # 80 / 4.8
        "3 changed, 0 added, 0 removed",
    ]
    assert main(["numbers", str(book), "--diff", str(out), "--exit-zero"]) == 0
