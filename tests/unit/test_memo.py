"""The one bounded memo: keyed by identity with the object held, LRU-evicted."""

from __future__ import annotations

import gc

from mlsys.core.solvers._memo import MISSING, IdentityMemo, freeze, identity_memo


class _Thing:
    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:  # equal by value, distinct by identity
        return isinstance(other, _Thing) and other.value == self.value

    __hash__ = None  # unhashable, like a pydantic model holding a dict


def test_keys_by_identity_and_value_arguments():
    calls = []

    @identity_memo(objects=1, maxsize=4)
    def build(thing, scale, options=None):
        calls.append((thing.value, scale))
        return thing.value * scale

    a, b = _Thing(2), _Thing(2)
    assert build(a, 3) == 6 and build(a, 3) == 6
    assert len(calls) == 1  # the second call was a hit
    assert build(b, 3) == 6 and len(calls) == 2  # an equal but different object: a miss
    assert build(a, 4) == 8 and len(calls) == 3  # another value: a miss
    assert build(a, 3, options={"x": [1, 2]}) == 6 and len(calls) == 4  # unhashable frozen


def test_entry_holds_its_object_so_an_id_is_never_reused_stale():
    @identity_memo(objects=1, maxsize=2)
    def value_of(thing):
        return thing.value

    assert value_of(_Thing(1)) == 1  # the temporary is kept alive by the entry...
    gc.collect()
    for i in range(50):  # ...so no new object can take its id and read its answer
        assert value_of(_Thing(i + 100)) == i + 100


def test_bounded_least_recently_used():
    memo = IdentityMemo(maxsize=3)
    things = [_Thing(i) for i in range(5)]
    for t in things:
        memo.put((t,), (), t.value)
    assert len(memo) == 3
    assert memo.get((things[0],), ()) is MISSING  # evicted first
    assert memo.get((things[4],), ()) == 4


def test_freeze_makes_nested_arguments_hashable():
    key = freeze({"b": [1, {"c": 2}], "a": {3, 1}})
    assert hash(key) == hash(freeze({"a": {1, 3}, "b": [1, {"c": 2}]}))
    assert freeze(1.5) == 1.5 and freeze("x") == "x"
