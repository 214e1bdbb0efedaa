"""``mlsys check`` (static): stale and deprecated names at their .qmd line and column."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from mlsys.book.check import (
    check_document_static,
    check_paths,
    exit_status,
    find_qmd_files,
    quarto_input_files,
)
from mlsys.book.qmd import parse_qmd
from mlsys.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = FIXTURES / "_broken"


def _check(text: str, **kwargs):
    doc = parse_qmd(textwrap.dedent(text).lstrip("\n"), "t.qmd")
    return check_document_static(doc, **kwargs)


def test_stale_import_reported_at_its_line_with_suggestion():
    findings = check_paths([BROKEN / "stale_import.qmd"])
    (f,) = findings
    # Line 7 of the fixture: "from mlsys import NoSuchModel"; the name starts at col 19.
    assert (f.line, f.col, f.severity, f.code) == (7, 19, "error", "unknown-name")
    assert f.file.endswith("stale_import.qmd")
    assert "'NoSuchModel'" in f.message
    assert "did you mean" in f.message
    assert exit_status(findings) == 1


def test_deprecated_name_is_a_warning_naming_the_new_spelling():
    findings = check_paths([BROKEN / "deprecated.qmd"])
    (f,) = findings
    assert (f.line, f.col, f.severity, f.code) == (7, 19, "warning", "deprecated")
    assert "DistributedSolver" in f.message and "DistributedModel" in f.message
    # Warnings alone pass the build, unless --strict.
    assert exit_status(findings) == 0
    assert exit_status(findings, strict=True) == 1


def test_clean_chapter_passes():
    # Its eval: false cell imports a name that does not exist: shown, never run.
    assert check_paths([FIXTURES / "_ok" / "clean.qmd"]) == []


def test_syntax_errors_at_their_qmd_line():
    findings = check_paths([BROKEN / "syntax.qmd"])
    assert [(f.line, f.code, f.severity) for f in findings] == [
        (5, "syntax", "error"),  # "y = (x +" is line 5 of the file, line 2 of the cell
        (8, "syntax", "error"),  # the inline expression `{python} x +`
    ]
    assert findings[1].col == 18


def test_error_true_cells_may_hold_a_syntax_error_on_purpose():
    findings = _check(
        """
        ```{python}
        #| error: true
        print("unclosed"
        ```
        """
    )
    assert findings == []


def test_module_alias_attribute_and_submodule_errors():
    findings = _check(
        """
        ```{python}
        import mlsys.core.units as U
        import mlsys.core.nosuchmodule
        from mlsys.core import errors
        ok = U.ureg
        bad = U.no_such_thing
        err = errors.ParameterErorr
        ```
        Inline: `{python} U.Q_` and `{python} errors.UnitEror`.
        """
    )
    got = [(f.line, f.col, f.code) for f in findings]
    assert got == [
        (3, 8, "unknown-module"),
        (6, 9, "unknown-name"),  # "bad = U." is 8 characters
        (7, 14, "unknown-name"),
        (9, 46, "unknown-name"),  # 38 characters precede "errors.", 7 more "UnitEror"
    ]
    assert "'ParameterError'" in findings[2].message
    assert "'UnitError'" in findings[3].message


def test_rebinding_and_locals_shadow_imported_names():
    findings = _check(
        """
        ```{python}
        import mlsys.core.units as U
        def f(U):
            return U.anything
        squares = [U.whatever for U in range(3)]
        U = {"a": 1}
        U.keys()
        %matplotlib inline
        ```
        """
    )
    assert findings == []


def test_import_guarded_by_try_except_is_a_warning():
    findings = _check(
        """
        ```{python}
        try:
            from mlsys import NewSpelling
        except ImportError:
            from mlsys import Q_ as NewSpelling
        ```
        """
    )
    (f,) = findings
    assert (f.line, f.severity, f.code) == (3, "warning", "unknown-name")
    assert f.message.endswith("(guarded by try/except)")


def test_engine_markdown_runs_nothing():
    findings = _check(
        """
        ---
        engine: markdown
        ---
        ```{python}
        from mlsys import NotRunHere
        ```
        """
    )
    assert findings == []


def test_names_unknown_to_the_check_are_left_alone():
    findings = _check(
        """
        ```{python}
        import numpy as np
        from collections import OrderedDict
        np.no_such_function
        from . import relative
        from mlsys import *
        ```
        """
    )
    assert findings == []


def test_generic_deprecated_maps_and_warnings(tmp_path, monkeypatch):
    # Any module may define _DEPRECATED, or warn on attribute access: both are seen.
    pkg = tmp_path / "mlsys_fake_pkg_dep"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "_DEPRECATED = {'OldSolver': 'NewSolver', 'old_fn': ('new_fn', None)}\nNewSolver = object\n"
    )
    (pkg / "shim.py").write_text(
        "import warnings\n"
        "def __getattr__(name):\n"
        "    if name == 'legacy':\n"
        "        warnings.warn('shim.legacy is deprecated; use shim.modern', DeprecationWarning)\n"
        "        return 1\n"
        "    raise AttributeError(name)\n"
        "modern = 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    findings = _check(
        """
        ```{python}
        from mlsys_fake_pkg_dep import OldSolver, old_fn
        from mlsys_fake_pkg_dep.shim import legacy, modern
        ```
        """,
        packages=("mlsys_fake_pkg_dep",),
    )
    messages = [(f.code, f.message) for f in findings]
    assert messages == [
        (
            "deprecated",
            "mlsys_fake_pkg_dep.OldSolver is deprecated; use mlsys_fake_pkg_dep.NewSolver",
        ),
        ("deprecated", "mlsys_fake_pkg_dep.old_fn is deprecated; use mlsys_fake_pkg_dep.new_fn"),
        ("deprecated", "shim.legacy is deprecated; use shim.modern"),
    ]
    assert all(f.severity == "warning" for f in findings)
    sys.modules.pop("mlsys_fake_pkg_dep.shim", None)
    sys.modules.pop("mlsys_fake_pkg_dep", None)


def test_exported_name_whose_module_is_broken(tmp_path, monkeypatch):
    # A name the package declares (lazy map, __all__) but cannot deliver is not a typo in
    # the chapter: it is reported as an import failure, naming the cause.
    pkg = tmp_path / "mlsys_fake_pkg_lazy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import importlib\n"
        "_LAZY = {'Ghost': 'mlsys_fake_pkg_lazy.missing', 'Half': 'mlsys_fake_pkg_lazy.half'}\n"
        "__all__ = sorted(_LAZY)\n"
        "def __getattr__(name):\n"
        "    if name in _LAZY:\n"
        "        return getattr(importlib.import_module(_LAZY[name]), name)\n"
        "    raise AttributeError(name)\n"
    )
    (pkg / "half.py").write_text("Other = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    findings = _check(
        """
        ```{python}
        from mlsys_fake_pkg_lazy import Ghost, Half, GhostX
        ```
        """,
        packages=("mlsys_fake_pkg_lazy",),
    )
    assert [(f.col, f.code) for f in findings] == [
        (33, "import-failed"),  # 32 characters of "from ... import " precede it
        (40, "import-failed"),
        (46, "unknown-name"),
    ]
    assert "No module named 'mlsys_fake_pkg_lazy.missing'" in findings[0].message
    assert "'Ghost'" in findings[2].message  # did you mean
    for name in ["mlsys_fake_pkg_lazy.half", "mlsys_fake_pkg_lazy"]:
        sys.modules.pop(name, None)


def test_find_qmd_files_skips_outputs_and_hidden(tmp_path):
    # Quarto renders no file under a _ or . directory; _files are includes, kept.
    rels = ["a.qmd", "sub/b.qmd", "sub/_part.qmd", "_book/c.qmd", ".quarto/d.qmd", "_freeze/e.qmd"]
    for rel in [*rels, "x.md", "node_modules/f.qmd"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("text\n")
    found = [p.relative_to(tmp_path).as_posix() for p in find_qmd_files([tmp_path])]
    assert found == ["a.qmd", "sub/_part.qmd", "sub/b.qmd"]
    with pytest.raises(FileNotFoundError):
        find_qmd_files([tmp_path / "missing"])


def test_json_output_schema(capsys):
    status = main(
        ["check", "--json", str(BROKEN / "stale_import.qmd"), str(BROKEN / "deprecated.qmd")]
    )
    assert status == 1
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, list) and len(data) == 2
    types = {"file": str, "line": int, "col": int, "severity": str, "code": str, "message": str}
    for item in data:
        assert set(item) == set(types)
        assert all(isinstance(item[k], t) for k, t in types.items())
        assert item["severity"] in {"error", "warning"}
    assert [d["severity"] for d in data] == ["warning", "error"]  # sorted by file name


def test_human_output_and_default_path(tmp_path, monkeypatch, capsys):
    (tmp_path / "ch.qmd").write_text("```{python}\nfrom mlsys import Hardwar\n```\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QUARTO_PROJECT_INPUT_FILES", raising=False)
    monkeypatch.delenv("QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES", raising=False)
    assert main(["check"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ch.qmd:2:19: error: module 'mlsys' has no attribute 'Hardwar'")
    assert "'Hardware'" in out[0]
    assert out[-1] == "mlsys check: 1 error, 0 warnings in 1 file"


def test_quarto_pre_render_input_files(tmp_path, monkeypatch, capsys):
    # Quarto runs pre-render hooks in the project directory and lists the files it is
    # about to render, relative to it; only those are checked.
    (tmp_path / "good.qmd").write_text("```{python}\nfrom mlsys import Q_\n```\n")
    (tmp_path / "bad.qmd").write_text("```{python}\nfrom mlsys import Nope\n```\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUARTO_PROJECT_RENDER_ALL", "")
    monkeypatch.setenv("QUARTO_PROJECT_INPUT_FILES", "good.qmd\nindex.ipynb")
    assert main(["check", "."]) == 0
    monkeypatch.setenv("QUARTO_PROJECT_INPUT_FILES", "good.qmd\nbad.qmd")
    assert main(["check", "."]) == 1
    listing = tmp_path / "inputs.txt"
    listing.write_text("good.qmd\n")
    monkeypatch.setenv("QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES", str(listing))
    assert main(["check", "."]) == 0
    capsys.readouterr()
    # An empty list (quarto preview's first pass) means: check everything.
    assert quarto_input_files({"QUARTO_PROJECT_INPUT_FILES": ""}) is None


def test_includes_are_spliced_in_where_they_stand(tmp_path):
    # Quarto splices {{< include >}} files into the chapter before running it: names the
    # include imports are visible below it, and its own mistakes are reported in it.
    (tmp_path / "_setup.qmd").write_text(
        "```{python}\nimport mlsys.core.units as U\nfrom mlsys import Nope\n```\n"
    )
    (tmp_path / "ch.qmd").write_text(
        "# Chapter\n\n{{< include _setup.qmd >}}\n\nValue `{python} U.nothere`.\n"
        "\n{{< include _missing.qmd >}}\n"
    )
    findings = check_paths([tmp_path / "ch.qmd"])
    got = [(Path(f.file).name, f.line, f.code) for f in findings]
    assert got == [
        ("_setup.qmd", 3, "unknown-name"),
        ("ch.qmd", 5, "unknown-name"),
        ("ch.qmd", 7, "include"),
    ]
