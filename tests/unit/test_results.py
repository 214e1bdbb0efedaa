import pickle
import warnings

import pytest

from mlsys.core.results import Result


class _StepResult(Result):
    _units = {"step_time": "s", "memory": "byte", "mfu": None, "feasible": None}
    _aliases = {"step_latency_total": "step_time"}


@pytest.fixture
def res():
    return _StepResult(step_time=1.1, memory=3.2e10, mfu=0.415, feasible=True)


def test_fields_are_quantities_with_units(res):
    assert res.step_time.to("ms").magnitude == pytest.approx(1100)
    assert res["memory"].to("GB").magnitude == pytest.approx(32)
    assert res.mfu == 0.415 and res.feasible is True
    assert res.si("memory") == 3.2e10


def test_alias_warns_and_names_new_spelling(res):
    with pytest.warns(DeprecationWarning, match=r"use _StepResult\.step_time"):
        assert res.step_latency_total.magnitude == pytest.approx(1.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "step_latency_total" in res


def test_unknown_field_suggests(res):
    with pytest.raises(AttributeError, match="Did you mean step_time"):
        res.step_tme
    with pytest.raises(KeyError):
        res["nope"]


def test_read_only(res):
    with pytest.raises(AttributeError):
        res.step_time = 3


def test_export_and_markdown(res):
    plain = res.to_dict(quantities=False)
    assert plain["step_time"] == {"value": 1.1, "unit": "s"}
    assert plain["feasible"] is True
    md = res._repr_markdown_()
    assert "| memory | 32 GB |" in md and "| step_time | 1.1 s |" in md
    assert dict(res).keys() == {"step_time", "memory", "mfu", "feasible"}


def test_nested_results_and_pickle(res):
    outer = _StepResult(step_time=2.0, memory=1.0, mfu=0.1, feasible=False)

    class Wrapper(Result):
        _units = {"inner": None, "total": "J"}

    w = Wrapper(inner=outer, total=5.0)
    assert w.to_dict(quantities=False)["inner"]["step_time"]["value"] == 2.0
    assert "inner.step_time" in w._repr_markdown_()
    back = pickle.loads(pickle.dumps(res))
    assert back.si("step_time") == 1.1


def test_markdown_leaves_out_fields_the_solve_did_not_compute():
    # A field holding None was not computed (e.g. no training run given to EconomicsModel):
    # the table shows no "None" row, while the field stays readable and exported.
    partial = _StepResult(step_time=1.1, memory=None, mfu=0.415, feasible=True)
    md = partial._repr_markdown_()
    assert "| step_time | 1.1 s |" in md
    assert "memory" not in md and "None" not in md
    assert partial.memory is None and partial.to_dict(quantities=False)["memory"] is None
