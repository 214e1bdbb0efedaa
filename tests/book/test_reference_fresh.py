"""The committed API reference (``reference/``) is what ``quartodoc build`` makes now.

A docstring changed without rebuilding the reference fails here, listing the stale
pages. The reference is regenerated from the root ``_quarto.yml`` into a temporary
directory (with the same relative ``dir`` and ``sidebar``, so the generated links and
sidebar paths are byte-for-byte comparable) and compared file by file. quartodoc writes
no timestamps, so the comparison is exact.

To fix a failure, run ``quartodoc build`` at the repository root and commit
``reference/``.
"""

from __future__ import annotations

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


def test_quartodoc_config_writes_reference_and_sidebar(config):
    qd = config["quartodoc"]
    assert qd["package"] == "mlsys"
    assert qd["dir"] == "reference"
    assert qd["sidebar"] == "reference/_sidebar.yml"
    assert "reference/_sidebar.yml" in config.get("metadata-files", [])
    # every listed object has its committed page
    names = [c for s in qd["sections"] for c in s["contents"]]
    missing = [n for n in names if not (ROOT / "reference" / f"{n}.qmd").is_file()]
    assert not missing, f"objects without a committed page: {missing}"


def _home(obj):
    """Object path under ``mlsys`` where the object is defined, as quartodoc lists it."""
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None)
    if module.startswith("mlsys.") and qualname and (callable(obj) or isinstance(obj, type)):
        return f"{module.removeprefix('mlsys.')}.{qualname}"
    return None


def test_every_public_name_has_a_reference_page(config):
    import importlib

    import mlsys

    listed = {c for s in config["quartodoc"]["sections"] for c in s["contents"]}
    missing = []
    for name, module in mlsys._LAZY.items():
        if name in ("ureg", "Q_"):  # the pint registry and its Quantity class
            continue
        obj = getattr(mlsys, name)
        # registries are instances: listed under the module that creates them
        path = _home(obj) if isinstance(obj, type) or callable(obj) else None
        if type(obj).__name__ == "Registry" or path is None:
            path = f"{module.removeprefix('mlsys.')}.{name}"
        if path not in listed:
            missing.append(f"mlsys.{name} ({path})")
    for shim in ("mlsys.formatting", "mlsys.formulas"):
        module = importlib.import_module(shim)
        for name in module.__all__:
            path = _home(getattr(module, name))
            if path is not None and path not in listed:
                missing.append(f"{shim}.{name} ({path})")
    assert not missing, "public names without a reference page: " + ", ".join(missing)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_committed_reference_is_fresh(config, tmp_path, monkeypatch):
    if _griffe_major() >= 2:
        pytest.skip(
            "quartodoc 0.11 cannot parse numpy docstrings with griffe >= 2 "
            "(parse_numpy() got an unexpected keyword 'allow_section_blank_line'); "
            "install griffe<2 to run this check"
        )
    from quartodoc import Builder

    # Build in a scratch copy of the project root: quartodoc writes relative to the
    # working directory (pages, sidebar and objects.json).
    monkeypatch.chdir(tmp_path)
    builder = Builder.from_quarto_config(config)
    builder.build()

    fresh = _files(tmp_path / "reference")
    committed = _files(ROOT / "reference")
    assert fresh, "quartodoc build wrote no pages"
    stale = sorted(name for name in fresh if committed.get(name) != fresh[name])
    extra = sorted(set(committed) - set(fresh))
    problems = []
    if stale:
        problems.append("stale or missing pages: " + ", ".join(stale))
    if extra:
        problems.append("pages no object generates any more: " + ", ".join(extra))
    assert not problems, (
        "reference/ is out of date with the docstrings; run `quartodoc build` at the "
        "repository root and commit reference/.\n" + "\n".join(problems)
    )
