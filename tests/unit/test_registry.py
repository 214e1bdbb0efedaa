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


def test_unknown_attribute_is_unknown_entry_error_and_attribute_error():
    # Models.Llama4 names the closest entries and works with hasattr/getattr
    with pytest.raises(UnknownEntryError, match="Did you mean") as info:
        Models.Llama4
    assert isinstance(info.value, AttributeError)
    assert info.value.suggestions[0].startswith("Llama")
    assert not hasattr(Models, "Llama4")
    assert getattr(Hardware, "H1OO", "absent") == "absent"


def test_groups_are_built_once_and_do_not_shadow_item_lookup():
    built = []
    reg = Registry("Toys", lambda: {"A": (type("E", (), {"name": "A"})(), [])})
    reg.add_group("Shelf", lambda: built.append(1) or "the shelf")
    assert reg.Shelf == "the shelf" and reg.Shelf == "the shelf"
    assert built == [1]  # the factory runs on first access only
    assert reg.groups() == ["Shelf"] and "Shelf" in dir(reg) and reg.list() == ["A"]
    with pytest.raises(UnknownEntryError):
        reg["Shelf"]  # a group is not an entry
    with pytest.raises(ParameterError):
        reg.add_group("not a name", lambda: None)


def test_catalog_groups_are_views_of_entries():
    assert Hardware.Cloud.H100.entry is Hardware.H100
    assert Hardware["H100"] is Hardware.H100  # item lookup still gives the entry
    assert Models.Language.GPT3.entry is Models.GPT3_175B
    # the book's direct names are views; item lookup of the alias is the entry
    assert Models.GPT3.entry is Models["GPT3"] is Models.GPT3_175B
