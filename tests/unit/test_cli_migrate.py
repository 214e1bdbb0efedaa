"""``mlsys migrate``: only import lines change; dry run, errors and the Python API."""

from __future__ import annotations

import pytest

from mlsys.cli import main
from mlsys.commands.migrate import migrate_path, migrate_text, rewrite_imports

CHAPTER = """---
title: "A chapter"
---

The prose mentions `from mlsysim import *` and mlsysim.fmt, which must stay.

```{python}
#| echo: false
from mlsysim import *
from mlsysim.core.constants import (
    GB, byte,
)
from mlsysim.fmt import fmt, check
import mlsysim
    from mlsysim.physics import calc_pipeline_bubble
x = mlsysim.Q_(1, "GB")  # the name mlsysim is used in code: kept by `import ... as`
```

```python
from mlsysim import Hardware  # a plain (non-executed) block: untouched
```

Inline `{python} fmt(2.0, precision=1)` stays.
"""


def _non_import_lines(text: str) -> list[str]:
    keep = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("from mlsys", "import mlsys")):
            continue
        keep.append(line)
    return keep


def test_only_import_lines_change():
    new = migrate_text(CHAPTER, ".qmd")
    # every non-import byte identical, line for line
    assert _non_import_lines(new) == _non_import_lines(CHAPTER)
    assert len(new.splitlines()) == len(CHAPTER.splitlines())
    assert "from mlsys import *" in new
    assert "from mlsys.constants import (" in new
    assert "from mlsys.formatting import fmt, check" in new
    assert "import mlsys as mlsysim" in new
    assert "    from mlsys.compat.physics import calc_pipeline_bubble" in new
    # prose and a non-executed block keep their text
    assert "The prose mentions `from mlsysim import *` and mlsysim.fmt" in new
    assert "from mlsysim import Hardware  # a plain" in new


def test_older_era_imports_and_idempotence():
    src = "from mlsys.registry import start_chapter\nfrom mlsys.constants import GB\n"
    # the older era already imports mlsys.* (mlsys.registry included): nothing changes
    once = rewrite_imports(src)
    assert once == src
    namespace: dict[str, object] = {}
    exec(compile(once, "<older chapter>", "exec"), namespace)
    assert callable(namespace["start_chapter"])
    assert migrate_text(CHAPTER, ".qmd") == migrate_text(migrate_text(CHAPTER, ".qmd"), ".qmd")


def test_migrated_chapter_runs():
    namespace: dict[str, object] = {}
    code = rewrite_imports(
        "from mlsysim import *\nfrom mlsysim.core.constants import *\n"
        "from mlsysim.fmt import fmt\n"
        "bw = fmt(Hardware.Cloud.H100.memory.bandwidth.m_as(TB/second), precision=2)\n"
    )
    exec(code, namespace)
    assert namespace["bw"] == "3.35"  # H100 SXM datasheet: 3.35 TB/s


def test_cli_writes_and_dry_run_diffs(tmp_path, capsys):
    chapter = tmp_path / "book" / "ch.qmd"
    chapter.parent.mkdir()
    chapter.write_text(CHAPTER, encoding="utf-8")
    helper = tmp_path / "book" / "helper.py"
    helper.write_text("import mlsysim.fmt as f\n", encoding="utf-8")

    assert main(["migrate", str(tmp_path / "book"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "-from mlsysim.fmt import fmt, check" in out
    assert "+from mlsys.formatting import fmt, check" in out
    assert chapter.read_text(encoding="utf-8") == CHAPTER  # dry run writes nothing

    assert main(["migrate", str(tmp_path / "book")]) == 0
    assert "from mlsys.formatting import fmt, check" in chapter.read_text(encoding="utf-8")
    assert helper.read_text(encoding="utf-8") == "import mlsys.formatting as f\n"
    assert migrate_path(tmp_path / "book") == {}  # nothing left to migrate


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["migrate", "/no/such/book"], "PATH='/no/such/book'"),
        (["migrate"], "the following arguments are required: PATH"),
    ],
)
def test_errors_are_argparse_style_exit_2(args, message, capsys, tmp_path):
    try:
        status = main(args)
    except SystemExit as exc:  # argparse's own usage errors
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.startswith(("mlsys migrate: error:", "usage:"))


def test_wrong_file_type_is_refused(tmp_path, capsys):
    other = tmp_path / "notes.txt"
    other.write_text("from mlsysim import *\n", encoding="utf-8")
    assert main(["migrate", str(other)]) == 2
    assert "a .qmd or .py file" in capsys.readouterr().err
    assert other.read_text(encoding="utf-8") == "from mlsysim import *\n"
