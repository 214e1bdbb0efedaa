"""The committed API reference (``reference/``) is what ``quartodoc build`` makes now.

A docstring changed without rebuilding the reference fails here, listing the stale
pages. Pages are regenerated from the root ``_quarto.yml`` into a temporary directory
(with the same relative ``dir`` and ``sidebar``, so the generated links and sidebar paths
are byte-for-byte comparable) and compared file by file. quartodoc writes no timestamps,
so the comparison is exact.

A full rebuild takes minutes, so the default run rebuilds only the pages that can have
changed: a page is a function of the source files that define its objects (their
modules, the classes they inherit from, the members a module page embeds; no docstring
in mlsys is computed at run time) and of the ``quartodoc`` section of ``_quarto.yml``.
The pages whose files changed since the commit that last rebuilt ``reference/`` (that
commit's own changes included, committed or not) are regenerated; without git history,
or when the ``quartodoc`` section changed, every page is. ``pytest -m render`` (and CI)
also runs the full rebuild.

To fix a failure, run ``quartodoc build`` at the repository root and commit
``reference/``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import shutil
import subprocess
import types
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
    import importlib

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


# -- which pages can have changed ------------------------------------------------------


def _git(*args: str) -> str | None:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        return None
    done = subprocess.run([git, *args], cwd=ROOT, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def _base_commit() -> str | None:
    """The parent of the last commit that touched ``reference/``: the reference was
    rebuilt from the sources as they stood there plus that commit's own changes."""
    last = (_git("log", "-1", "--format=%H", "--", "reference", "objects.json") or "").strip()
    if not last:
        return None
    parent = (_git("rev-parse", "--verify", "-q", f"{last}^") or "").strip()
    return parent or None


def _changed_paths(base: str) -> set[str] | None:
    """Repository paths that differ between ``base`` and the working tree (untracked
    files under ``mlsys/`` included)."""
    diff = _git("diff", "--name-only", base, "--")
    untracked = _git("ls-files", "--others", "--exclude-standard", "--", "mlsys")
    if diff is None or untracked is None:
        return None
    return {line for line in (diff + untracked).splitlines() if line}


def _quartodoc_section_at(commit: str) -> dict | None:
    text = _git("show", f"{commit}:_quarto.yml")
    return None if text is None else (yaml.safe_load(text) or {}).get("quartodoc")


def _resolve(dotted: str) -> tuple[object, types.ModuleType] | None:
    """The object a quartodoc entry names, and the module it was found in."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        obj: object = module
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return None
            obj = getattr(obj, attr)
        return obj, module
    return None


def _file_of(obj: object) -> str | None:
    try:
        path = inspect.getsourcefile(inspect.unwrap(obj))  # type: ignore[arg-type]
    except TypeError:
        return None
    if path is None:
        return None
    try:
        return Path(path).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None


def _class_files(cls: type) -> set[str | None]:
    return {_file_of(base) for base in cls.__mro__ if base.__module__.startswith("mlsys")}


def _object_files(obj: object, module: types.ModuleType) -> set[str | None]:
    """Files whose text can change the documentation of ``obj``; None marks one that
    is not a file of this repository (then the page is always rebuilt)."""
    if isinstance(obj, types.ModuleType):
        files = {_file_of(obj)}
        names = getattr(obj, "__all__", [n for n in vars(obj) if not n.startswith("_")])
        for name in names:
            member = getattr(obj, name, None)
            if isinstance(member, type) and member.__module__.startswith("mlsys"):
                files |= _class_files(member)
            elif inspect.isfunction(member) and member.__module__.startswith("mlsys"):
                files.add(_file_of(member))
        return files
    if isinstance(obj, type):
        return _class_files(obj)
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return {_file_of(obj)}
    # a registry instance or a constant: its module, and its type's classes
    return {_file_of(module)} | _class_files(type(obj))


def _page_files(entry: dict) -> set[str] | None:
    files: set[str | None] = set()
    for item in entry["contents"]:
        name = item["name"] if isinstance(item, dict) else item
        found = _resolve(f"mlsys.{name}")
        if found is None:
            return None
        files |= _object_files(*found)
    return None if None in files else {f for f in files if f is not None}


def _pages(config: dict) -> list[dict]:
    return [e for s in config["quartodoc"]["sections"] for e in s["contents"]]


def _pages_to_rebuild(config: dict) -> tuple[list[dict], str]:
    """The page entries to regenerate, and why."""
    pages = _pages(config)
    base = _base_commit()
    changed = None if base is None else _changed_paths(base)
    if changed is None:
        return pages, "no git history: every page"
    if _quartodoc_section_at(base) != config["quartodoc"]:
        return pages, "the quartodoc section of _quarto.yml changed: every page"
    if not all(isinstance(e, dict) and e.get("kind") == "page" and "summary" in e for e in pages):
        # the index summarises docstrings only for entries that are not pages
        return pages, "an entry that is not a page: every page"
    wanted = []
    for entry in pages:
        files = _page_files(entry)
        own = {f"reference/{entry['path']}.qmd"}
        if files is None or (files | own) & changed:
            wanted.append(entry)
    return wanted, f"{len(wanted)} of {len(pages)} pages whose sources changed since {base[:12]}"


def _build(config: dict, pages: list[dict], tmp_path: Path, monkeypatch) -> Path:
    """quartodoc build of ``pages`` (sections kept in order) in a scratch directory."""
    from quartodoc import Builder

    keep = {id(p) for p in pages}
    cfg = json.loads(json.dumps(config))  # a deep copy the builder may change
    sections = []
    for section, original in zip(cfg["quartodoc"]["sections"], config["quartodoc"]["sections"]):
        contents = [c for c, o in zip(section["contents"], original["contents"]) if id(o) in keep]
        if contents:
            sections.append({**section, "contents": contents})
    cfg["quartodoc"]["sections"] = sections
    # quartodoc writes relative to the working directory (pages, sidebar, objects.json)
    monkeypatch.chdir(tmp_path)
    Builder.from_quarto_config(cfg).build()
    return tmp_path


def _compare(built: Path, pages: list[dict], every_page: bool) -> list[str]:
    fresh = _files(built / "reference")
    committed = _files(ROOT / "reference")
    names = set(fresh) if every_page else {f"{p['path']}.qmd" for p in pages}
    stale = sorted(n for n in names if committed.get(n) != fresh.get(n))
    problems = []
    if stale:
        problems.append("stale or missing pages: " + ", ".join(stale))
    if every_page:
        extra = sorted(set(committed) - set(fresh))
        if extra:
            problems.append("pages no object generates any more: " + ", ".join(extra))
    new_items = json.loads((built / "objects.json").read_text(encoding="utf-8"))["items"]
    old_items = json.loads((ROOT / "objects.json").read_text(encoding="utf-8"))["items"]
    uris = {f"reference/{n[: -len('.qmd')]}.html" for n in names}

    def on_pages(items: list[dict]) -> list[dict]:
        return [i for i in items if i["uri"].split("#")[0] in uris]

    if on_pages(new_items) != on_pages(old_items) or (
        every_page and len(new_items) != len(old_items)
    ):
        problems.append("objects.json lists other objects than these pages document")
    return problems


def _check(
    config: dict, pages: list[dict], every_page: bool, why: str, tmp_path, monkeypatch
) -> None:
    if _griffe_major() >= 2:
        pytest.skip(
            "quartodoc 0.11 cannot parse numpy docstrings with griffe >= 2 "
            "(parse_numpy() got an unexpected keyword 'allow_section_blank_line'); "
            "install griffe<2 to run this check"
        )
    built = _build(config, pages, tmp_path, monkeypatch)
    assert (built / "reference").is_dir(), "quartodoc build wrote no pages"
    problems = _compare(built, pages, every_page)
    assert not problems, (
        "reference/ is out of date with the docstrings; run `quartodoc build` at the "
        f"repository root and commit reference/ (checked {why}).\n" + "\n".join(problems)
    )


def test_page_sources_cover_the_defining_files():
    # The page of DistributedModel depends on the solver's own file and on the Result
    # base class its result type inherits from; a module page on the module's file.
    by_path = {e["path"]: e for e in _pages(yaml.safe_load(CONFIG.read_text(encoding="utf-8")))}
    files = _page_files(by_path["DistributedModel"])
    assert files is not None
    assert "mlsys/core/solvers/distributed.py" in files
    assert "mlsys/core/results.py" in files
    units = _page_files(by_path["units"])
    assert units is not None and "mlsys/core/units.py" in units
    assert "mlsys/core/errors.py" in units


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_committed_reference_is_fresh(config, tmp_path, monkeypatch):
    pages, why = _pages_to_rebuild(config)
    if not pages:
        return  # no source of any page changed since the reference was rebuilt
    every_page = len(pages) == len(_pages(config))
    _check(config, pages, every_page, why, tmp_path, monkeypatch)


@pytest.mark.render
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_committed_reference_is_fresh_full_rebuild(config, tmp_path, monkeypatch):
    _check(config, _pages(config), True, "every page", tmp_path, monkeypatch)
