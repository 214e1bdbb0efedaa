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
    assert "from mlsys.compat.fmt import fmt, check" in new
    assert "import mlsys.book.package as mlsysim" in new
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


def test_star_import_alone_gives_the_books_formatting_names():
    # the book's ml_workflow chapter calls fmt_int after nothing but `from mlsysim import *`
    namespace: dict[str, object] = {}
    code = rewrite_imports(
        "from mlsysim import *\n"
        "hours = fmt_int(round(45.49), commas=False, suffix=' h')\n"
        "monthly = fmt_int(round(1_250_000 / 12 / 1000) * 1000)\n"
        "check(hours == '45 h', 'rounded hours')\n"
    )
    exec(code, namespace)
    assert namespace["hours"] == "45 h"
    assert namespace["monthly"] == "104,000"  # 1,250,000 / 12 = 104,166.7 -> 104 thousand
    assert isinstance(namespace["MarkdownStr"]("x"), str)
    assert callable(namespace["fmt_qty"])
    # a registry package's star (not the top level) gains nothing
    assert "mlsys.compat.fmt" not in rewrite_imports("from mlsysim.hardware import *\n")


def test_cli_writes_and_dry_run_diffs(tmp_path, capsys):
    chapter = tmp_path / "book" / "ch.qmd"
    chapter.parent.mkdir()
    chapter.write_text(CHAPTER, encoding="utf-8")
    helper = tmp_path / "book" / "helper.py"
    helper.write_text("import mlsysim.fmt as f\n", encoding="utf-8")

    assert main(["migrate", str(tmp_path / "book"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "-from mlsysim.fmt import fmt, check" in out
    assert "+from mlsys.compat.fmt import fmt, check" in out
    assert chapter.read_text(encoding="utf-8") == CHAPTER  # dry run writes nothing

    assert main(["migrate", str(tmp_path / "book")]) == 0
    assert "from mlsys.compat.fmt import fmt, check" in chapter.read_text(encoding="utf-8")
    assert helper.read_text(encoding="utf-8") == "import mlsys.compat.fmt as f\n"
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


# Import forms the book's chapters use (newest era: mlsysim; older era: its own mlsys.*),
# each with a name it then reads, so that the rewritten line must bind that name.
BOOK_IMPORT_FORMS = [
    ("from mlsysim.core import constants", "constants.GB"),
    ("from mlsysim.core import units", "units.GB"),
    ("from mlsysim.core import constants, units as U", "U.second"),
    ("import mlsysim.core.constants as C", "C.GB"),
    ("from mlsysim.core.constants import *", "GB"),
    ("from mlsysim.core.units import *", "second"),
    ("from mlsysim.core.formulas import *", "None"),
    ("import mlsysim.core.formulas as F", "F"),
    ("from mlsysim.fmt import fmt, check, MarkdownStr", "MarkdownStr"),
    ("import mlsysim.fmt as mfmt", "mfmt.fmt"),
    ("from mlsysim import *", "Hardware"),
    ("import mlsysim", "mlsysim.Hardware"),
    ("from mlsysim import Hardware, Models, Systems, fmt", "fmt"),
    ("from mlsysim import viz", "viz.setup_plot"),
    ("from mlsysim import physics", "physics"),
    ("import mlsysim.physics as physics_pkg", "physics_pkg"),
    ("from mlsysim.engine import Engine", "Engine.solve"),
    ("from mlsysim.engine.solver import DistributedModel", "DistributedModel"),
    ("from mlsysim.engine.scenarios import Scenarios, Applications", "Applications"),
    ("from mlsysim.hardware.registry import Hardware", "Hardware.Cloud"),
    ("from mlsys.constants import GB", "GB"),
    ("from mlsys.formatting import fmt", "fmt"),
    ("from mlsys.formulas import *", "None"),
    ("from mlsys.registry import start_chapter", "start_chapter"),
    ("from mlsys import viz", "viz"),
    ("from mlsys.viz import setup_plot", "setup_plot"),
]


def test_import_mlsysim_reads_the_books_solvers() -> None:
    from mlsys import constants
    from mlsys.compat.solvers import ServingModel

    namespace: dict[str, object] = {}
    exec(compile(rewrite_imports("import mlsysim.core.constants\n"), "<cell>", "exec"), namespace)
    mlsysim = namespace["mlsysim"]
    assert mlsysim.ServingModel is ServingModel  # the book's call shape, not mlsys's own
    assert mlsysim.core.constants is constants
    res = mlsysim.ServingModel().solve(
        mlsysim.Models.Language.Llama2_70B, mlsysim.Hardware.Cloud.H200, seq_len=2048, batch_size=1
    )
    # batch-1 decode streams every 2-byte weight once per token: 138 GB at 4.8 TB/s
    floor_s = res.model_weights_size.m_as("B") / 4.8e12
    assert floor_s == pytest.approx(2 * 68.98e9 / 4.8e12, rel=1e-3)  # 28.7 ms
    assert floor_s < res.itl.m_as("s") < floor_s / 0.6


def test_every_rewrite_target_imports() -> None:
    import importlib

    from mlsys.book.rewrite import rewrite_targets

    targets = rewrite_targets()
    # the flat shim, the registries' top level, the book-only views, the figures
    assert {"mlsys.constants", "mlsys.compat.fmt", "mlsys.compat.physics"} <= set(targets)
    for target in targets:
        assert importlib.import_module(target).__name__ == target


@pytest.mark.parametrize(("line", "reads"), BOOK_IMPORT_FORMS)
def test_each_book_import_form_runs_after_rewrite(line: str, reads: str) -> None:
    new = rewrite_imports(line + "\n")
    assert "mlsysim" not in new.replace("as mlsysim", "")  # no module path of the book left
    namespace: dict[str, object] = {}
    exec(compile(new + f"_read = {reads}\n", "<cell>", "exec"), namespace)
    assert "_read" in namespace


def test_from_core_import_constants_is_not_mlsys_core() -> None:
    # mlsys.core has no `constants`: the book's submodule names become mlsys's modules
    assert rewrite_imports("from mlsysim.core import constants\n") == (
        "from mlsys import constants\n"
    )
    assert rewrite_imports("from mlsysim.core import units, Hardware  # note\n") == (
        "from mlsys import Hardware; from mlsys import constants as units  # note\n"
    )


# the import forms that name the book's solver classes, and the name each binds
SOLVER_FORMS = [
    ("from mlsysim import *", "DistributedModel"),
    ("from mlsysim import DistributedModel, Models", "DistributedModel"),
    ("from mlsysim.engine.solver import DistributedModel", "DistributedModel"),
    ("from mlsysim.solvers import ServingModel as SM, Hardware", "SM"),
    (
        "from mlsysim import (\n    Models,  # registries\n    SingleNodeModel,\n)",
        "SingleNodeModel",
    ),
]


@pytest.mark.parametrize(("source", "name"), SOLVER_FORMS)
def test_book_solver_names_bind_the_solvers_taking_the_books_views(source: str, name: str) -> None:
    import mlsys.compat.solvers as book_solvers

    new = rewrite_imports(source + "\n")
    assert new.count("\n") == source.count("\n") + 1  # no line added or removed
    namespace: dict[str, object] = {}
    exec(compile(new, "<cell>", "exec"), namespace)
    bound = namespace[name]
    assert bound is getattr(book_solvers, bound.__name__)  # type: ignore[attr-defined]


def test_every_book_solver_of_compat_is_routed() -> None:
    # a solver class mlsys serves under the book's call shapes is where book imports go
    import mlsys.compat.solvers as book_solvers
    from mlsys.book.rewrite import NAME_MAP

    classes = {
        name for name in book_solvers.__all__ if isinstance(getattr(book_solvers, name), type)
    }
    assert classes == {n for n, module in NAME_MAP.items() if module == "mlsys.compat.solvers"}


def test_the_books_distributed_call_runs_after_rewrite() -> None:
    # the book's own call shape: a registry view, a cluster view, the book's keywords
    import mlsys
    from mlsys.compat.solvers import as_catalog

    source = rewrite_imports("from mlsysim import *\n")
    namespace: dict[str, object] = {}
    exec(compile(source, "<cell>", "exec"), namespace)
    models, systems = namespace["Models"], namespace["Systems"]
    model, fleet = models.Language.Llama3_8B, systems.Clusters.Research_256  # type: ignore[attr-defined]
    book = namespace["DistributedModel"]().solve(  # type: ignore[operator]
        model,
        fleet,
        batch_size=1024,
        seq_len=2048,
        precision="fp16",
        tp_size=8,
        pp_size=4,
        microbatch_count=16,
        zero_stage=1,
        overlap_comm=True,
    )
    # the same physics as mlsys's own solver on the catalog objects the views show
    native = mlsys.DistributedModel().solve(
        as_catalog(model),
        as_catalog(fleet),
        batch_size=1024,
        seq_len=2048,
        precision="fp16",
        tp_size=8,
        pp_size=4,
        microbatch_count=16,
        zero_stage=1,
        overlap=True,
    )
    assert book.step_time == native.step_time
    assert 0 < book.scaling_efficiency <= 1


def test_book_layer_never_imports_commands() -> None:
    # commands may import book, never the reverse (no import cycle between them)
    import ast
    from pathlib import Path

    import mlsys.book

    offenders = []
    for path in Path(mlsys.book.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("mlsys.commands")]
    assert offenders == []


PLANTED = """---
title: "A chapter with a name mlsys does not serve"
---

```{python}
#| label: fine
from mlsysim.core.constants import *
from mlsysim.fmt import fmt
ok_str = fmt(2.5, precision=1)
```

```{python}
#| label: planted
from mlsysim.core import constants
missing_str = fmt(constants.NO_SUCH_BOOK_CONSTANT, precision=1)
```

Fine: `{python} ok_str`. Planted: `{python} missing_str`.
"""


def test_report_counts_a_planted_missing_name_and_exits_1(tmp_path, capsys) -> None:
    chapter = tmp_path / "planted.qmd"
    chapter.write_text(PLANTED, encoding="utf-8")
    assert main(["migrate", str(chapter), "--report"]) == 1
    out = capsys.readouterr().out
    assert "- cells that run: 1 of 2" in out
    assert "- inline values that compute: 1 of 2" in out
    # the planted cell opens on line 12; its inline value is on line 18
    assert f"{chapter}:12: cell 2 (planted): AttributeError:" in out
    assert "NO_SUCH_BOOK_CONSTANT" in out
    assert f"{chapter}:18: missing_str: NameError:" in out
    assert "render: would fail" in out
    assert "0 of 1 chapters would render; 1 of 2 cells run; 1 of 2 inline values compute" in out


def test_report_exits_0_when_everything_runs(tmp_path, capsys) -> None:
    chapter = tmp_path / "fine.qmd"
    chapter.write_text(PLANTED.split("```{python}\n#| label: planted")[0], encoding="utf-8")
    assert main(["migrate", str(chapter), "--report"]) == 0
    out = capsys.readouterr().out
    assert "render: would succeed" in out and "1 of 1 cells run" in out


def test_every_book_solver_is_routed_by_migrate() -> None:
    # the rewrite's routing table and the compat solvers' exports name the same classes
    import mlsys.compat.solvers as solvers
    from mlsys.book.rewrite import NAME_MAP

    served = {name for name in solvers.__all__ if name != "as_catalog"}
    routed = {name for name, module in NAME_MAP.items() if module == "mlsys.compat.solvers"}
    assert served == routed
