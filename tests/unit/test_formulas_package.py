"""The formulas package re-exports every module and tolerates absent optional ones."""

from __future__ import annotations

import pytest

import mlsys.core.formulas as formulas
from mlsys.core.formulas import memory, roofline, transformer


def test_core_modules_reexported():
    for module in (roofline, transformer, memory):
        for name in module.__all__:
            assert getattr(formulas, name) is getattr(module, name)
            assert name in formulas.__all__


def test_missing_optional_module_is_skipped_but_broken_one_raises(monkeypatch):
    saved_all = list(formulas.__all__)

    def absent(full_name):
        raise ModuleNotFoundError(f"No module named {full_name!r}", name=full_name)

    monkeypatch.setattr(formulas._importlib, "import_module", absent)
    formulas._reexport_optional()  # every optional module "absent": no error

    def broken(full_name):
        # the module exists but imports something that does not
        raise ModuleNotFoundError("No module named 'scipyx'", name="scipyx")

    monkeypatch.setattr(formulas._importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError, match="scipyx"):
        formulas._reexport_optional()
    formulas.__all__[:] = saved_all


@pytest.mark.parametrize(
    "name",
    [n for m in (roofline, transformer, memory) for n in m.__all__ if callable(getattr(m, n))],
)
def test_every_formula_is_documented_cited_and_has_a_worked_example(name):
    doc = getattr(formulas, name).__doc__ or ""
    for section in ("Parameters", "Returns", "References", "Examples"):
        assert section in doc, f"{name} lacks a {section} section"
    assert ">>> " in doc.split("Examples")[1], f"{name} has no runnable example"


def test_no_two_formula_modules_export_the_same_name():
    # the package flattens every module's __all__: a duplicate would silently shadow one
    import importlib

    seen: dict[str, str] = {}
    for short in ("roofline", "transformer", "memory", *formulas._OPTIONAL_MODULES):
        try:
            module = importlib.import_module(f"mlsys.core.formulas.{short}")
        except ModuleNotFoundError:
            continue
        for name in getattr(module, "__all__", ()):
            assert name not in seen, f"{name} exported by both {seen[name]} and {short}"
            seen[name] = short
