"""Catalog registries: forgiving lookup, did-you-mean errors, user registration."""

import pytest

from mlsys import Hardware, Models, Nodes, UnknownEntryError
from mlsys.core.catalog import Registry, normalize_key
from mlsys.core.errors import ParameterError


@pytest.mark.parametrize("name", ["H100", "h100", "H100-SXM", "h100 sxm", "H100_SXM5"])
def test_forgiving_lookup(name):
    assert Hardware[name] is Hardware.H100


def test_unknown_name_suggests_closest():
    with pytest.raises(UnknownEntryError) as info:
        Hardware["H10"]
    assert "'H100'" in str(info.value)
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    with pytest.raises(AttributeError, match="Did you mean"):
        Hardware.H1OO


def test_references_resolve_to_objects():
    assert Nodes.DGX_H100.accelerator is Hardware.H100
    assert Nodes.DGX_H100.accelerators_per_node == 8


def test_list_and_contains():
    names = Hardware.list()
    assert "H100" in names and "h100-sxm" in Hardware and "nope" not in Hardware
    assert len(Hardware) == len(names)


def test_register_user_entry():
    reg = Registry("Toys", lambda: {"A": (type("E", (), {"name": "A"})(), ["alpha"])})
    entry = type("E", (), {"name": "B"})()
    reg.register(entry, aliases=["beta"])
    assert reg["beta"] is entry and reg.list() == ["A", "B"]
    with pytest.raises(ParameterError):
        reg.register(type("E", (), {"name": "alpha"})())


def test_normalize_key():
    assert normalize_key("Llama-2 70B") == "llama270b"
    assert Models["llama-2-70b"] is Models.Llama2_70B
