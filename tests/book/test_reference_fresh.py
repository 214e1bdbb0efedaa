"""The committed API reference (``reference/``) is what ``quartodoc build`` makes now.

A docstring changed without rebuilding the reference fails here, listing the stale
pages. The reference is regenerated from the root ``_quarto.yml`` into a temporary
directory (with the same relative ``dir`` and ``sidebar``, so the generated links and
sidebar paths are byte-for-byte comparable) and compared file by file, the inventory
``objects.json`` included. quartodoc writes no timestamps, so the comparison is exact.

quartodoc 0.11 asks griffe to load the whole ``mlsys`` package again for every object
documented with ``dynamic: true`` (``get_object`` compares the alias target's top-level
package with the full module path, so ``mlsys`` never counts as loaded): 30-odd
identical parses, minutes of CPU. The default run's rebuild lets griffe's loader return
the package it has already parsed from the same files; at the commit that last rebuilt
``reference/`` this reproduces every page and the inventory byte for byte, in seconds.
``pytest -m render`` (and CI) also runs quartodoc exactly as ``quartodoc build`` does; a
difference between the two can only make a test fail, never hide a stale page.

To fix a failure, run ``quartodoc build`` at the repository root and commit
``reference/``.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
quartodoc = pytest.importorskip("quartodoc")

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "_quarto.yml"


def _griffe_major() -> int:
    from importlib.metadata import version

    return int(version("griffe").split(".")[0])


def _files(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def config() -> dict:
    cfg = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    assert "quartodoc" in cfg, "_quarto.yml has no quartodoc section"
    return cfg


def _page_paths(contents: list) -> list[str]:
    """The page each entry of a section writes: a ``kind: page`` groups objects on one
    page named by its ``path``; a plain entry gets a page of its own name."""
    paths = []
    for entry in contents:
        if isinstance(entry, dict) and entry.get("kind") == "page":
            paths.append(entry["path"])
        else:
            paths.append(entry["name"] if isinstance(entry, dict) else entry)
    return paths


def test_quartodoc_config_writes_reference_and_sidebar(config):
    qd = config["quartodoc"]
    assert qd["package"] == "mlsys"
    assert qd["dir"] == "reference"
    assert qd["sidebar"] == "reference/_sidebar.yml"
    assert "reference/_sidebar.yml" in config.get("metadata-files", [])
    pages = [p for s in qd["sections"] for p in _page_paths(s["contents"])]
    missing = [p for p in pages if not (ROOT / "reference" / f"{p}.qmd").is_file()]
    assert not missing, f"pages without a committed file: {missing}"
    # Small objects share a page (a site render costs about a second per page).
    assert len(pages) <= 60


def _inventory() -> set[str]:
    """Every object the committed reference documents, from quartodoc's inventory."""
    import json

    inventory = json.loads((ROOT / "objects.json").read_text(encoding="utf-8"))
    return {item["name"] for item in inventory["items"]}


def _home(obj):
    """``mlsys.<module>.<qualname>`` where the object is defined, or None."""
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None)
    if module.startswith("mlsys.") and qualname and (callable(obj) or isinstance(obj, type)):
        return f"{module}.{qualname}"
    return None


def test_every_public_name_has_a_reference_entry():

    import mlsys

    documented = _inventory()
    missing = []
    for name, module_name in mlsys._LAZY.items():
        if name in ("ureg", "Q_"):  # the pint registry and its Quantity class
            continue
        obj = getattr(mlsys, name)
        # documented under its public import (mlsys.X), where it is defined, or (a
        # registry instance) in the module that creates it
        homes = {f"mlsys.{name}", _home(obj), f"{module_name}.{name}"}
        if not homes & documented:
            missing.append(f"mlsys.{name}")
    for shim in ("mlsys.formatting", "mlsys.formulas"):
        module = importlib.import_module(shim)
        for name in module.__all__:
            home = _home(getattr(module, name))
            if home is not None and f"{shim}.{name}" not in documented and home not in documented:
                missing.append(f"{shim}.{name} ({home})")
    assert not missing, "public names without a reference entry: " + ", ".join(missing)


def _load_once(monkeypatch) -> None:
    """Let griffe's loader return a top-level package it has already parsed (see the
    module docstring) instead of parsing the same files again."""
    from griffe import GriffeLoader

    load = GriffeLoader.load

    def load_once(self, objspec=None, /, **options):
        parsed = self.modules_collection.members
        if isinstance(objspec, str) and "." not in objspec and not options and objspec in parsed:
            return parsed[objspec]
        return load(self, objspec, **options)

    monkeypatch.setattr(GriffeLoader, "load", load_once)


def _build(config: dict, tmp_path: Path, monkeypatch) -> Path:
    """``quartodoc build`` in a scratch directory."""
    from quartodoc import Builder

    cfg = json.loads(json.dumps(config))  # a deep copy the builder may change
    # quartodoc writes relative to the working directory (pages, sidebar, objects.json)
    monkeypatch.chdir(tmp_path)
    Builder.from_quarto_config(cfg).build()
    return tmp_path


def _compare(built: Path) -> list[str]:
    fresh = _files(built / "reference")
    committed = _files(ROOT / "reference")
    fresh["../objects.json"] = (built / "objects.json").read_bytes()
    committed["../objects.json"] = (ROOT / "objects.json").read_bytes()
    stale = sorted(n for n in fresh if committed.get(n) != fresh[n])
    extra = sorted(set(committed) - set(fresh))
    problems = []
    if stale:
        problems.append("stale or missing pages: " + ", ".join(stale))
    if extra:
        problems.append("pages no object generates any more: " + ", ".join(extra))
    return problems


def _check(config: dict, tmp_path: Path, monkeypatch) -> None:
    if _griffe_major() >= 2:
        pytest.skip(
            "quartodoc 0.11 cannot parse numpy docstrings with griffe >= 2 "
            "(parse_numpy() got an unexpected keyword 'allow_section_blank_line'); "
            "install griffe<2 to run this check"
        )
    built = _build(config, tmp_path, monkeypatch)
    assert (built / "reference").is_dir(), "quartodoc build wrote no pages"
    problems = _compare(built)
    assert not problems, (
        "reference/ is out of date with the docstrings; run `quartodoc build` at the "
        "repository root and commit reference/.\n" + "\n".join(problems)
    )


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_committed_reference_is_fresh(config, tmp_path, monkeypatch):
    _load_once(monkeypatch)
    _check(config, tmp_path, monkeypatch)


@pytest.mark.render
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_committed_reference_is_fresh_as_quartodoc_builds_it(config, tmp_path, monkeypatch):
    _check(config, tmp_path, monkeypatch)
