"""Held-out serving runs: a published serving benchmark no constant of mlsys was chosen on.

The serving suite (:mod:`mlsys.validation.serving`) is the set the serving defaults and the
engine table were built against; leave-one-source-out (:mod:`mlsys.validation.loso`)
re-chooses the suite's constants without each source. These runs
(``mlsys/validation/data/heldout_serving.toml``: TensorRT-LLM's throughput tables as
updated for v0.6.1, a release and a table the suite does not cite) come from outside both:
each is solved with the engine named — its release's row of
``mlsys/core/catalog/data/engines.toml``, chosen before the rows were solved — and nothing
else set, so their error is what a user who names the engine meets.

>>> from mlsys.validation.heldout_serving import heldout_serving_cases, summary
>>> summary(heldout_serving_cases())["n"]              # doctest: +SKIP
15.0
"""

from __future__ import annotations

import statistics
from typing import Any

from mlsys.core.catalog import Hardware, Models
from mlsys.core.solvers.serving import ServingModel, ServingResult
from mlsys.validation._case import Case, load_data, prediction_case, records

__all__ = ["HELDOUT_SERVING_SECTIONS", "heldout_serving_cases", "heldout_serving_solve", "summary"]

HELDOUT_SERVING_SECTIONS = ("trtllm_061",)
"""Sections of ``heldout_serving.toml``, one per source."""

_GROUP = "Held-out serving runs"
_RELEASES = {"trtllm_061": "TensorRT-LLM v0.6.1"}


def heldout_serving_solve(row: dict, section: str, **overrides: Any) -> ServingResult:
    """ServingModel's static-batch solve of one held-out row, with its section's engine.

    Parameters
    ----------
    row : dict
        A row of ``records("heldout_serving", section)``: catalog model and hardware,
        precision (weights and KV cache), TP, batch, prompt and output tokens.
    section : str
        A section of :data:`HELDOUT_SERVING_SECTIONS`.
    **overrides
        Keyword arguments of :meth:`ServingModel.solve` to change (a what-if, e.g.
        ``decode_attention_heads_per_block=None``).

    Returns
    -------
    ServingResult
    """
    sec = load_data("heldout_serving")[section]
    return ServingModel(engine=sec["engine"]).solve(
        Models[row["model"]], Hardware[row["hardware"]], batch_size=row["batch_size"],
        prompt_len=row["prompt_len"], output_len=row["output_len"],
        precision=row["precision"], kv_precision=row["precision"], tp_size=row["tp_size"],
        **overrides,
    )  # fmt: skip


def _key(row: dict) -> str:
    return (f"{row['model']}/{row['hardware']}/tp{row['tp_size']}/b{row['batch_size']}/"
            f"{row['prompt_len']}-{row['output_len']}")  # fmt: skip


def _name(row: dict, section: str) -> str:
    model = Models[row["model"]].display_name
    tp = f" TP{row['tp_size']}" if row["tp_size"] > 1 else ""
    return (f"{model}{tp} {row['hardware']} {row['precision']} b{row['batch_size']} "
            f"{row['prompt_len']}→{row['output_len']} ({_RELEASES[section]})")  # fmt: skip


def heldout_serving_cases() -> list[Case]:
    """One case per held-out row: static-batch output tokens/s per GPU, published against
    :func:`heldout_serving_solve`'s ``tokens_per_second_per_accelerator``.

    Returns
    -------
    list of Case
    """
    data = load_data("heldout_serving")
    out = []
    for section in HELDOUT_SERVING_SECTIONS:
        sec = data[section]
        notes, issues = sec.get("notes", {}), sec.get("open_issues", {})
        for row in records("heldout_serving", section):
            res = heldout_serving_solve(row, section)
            got = res.si("tokens_per_second_per_accelerator") if res.feasible else 0.0
            key = _key(row)
            out.append(
                prediction_case(
                    sec, group=_GROUP, name=_name(row, section),
                    quantity="output tokens/s per GPU", unit="token/s",
                    published=row["published"], predicted=got,
                    note=issues.get(key) or notes.get(key, ""), open_issue=issues.get(key, ""),
                )
            )  # fmt: skip
    return out


def summary(cases: list[Case]) -> dict[str, float]:
    """Mean and maximum |relative error| of held-out serving cases, and the signed mean
    (positive: mlsys optimistic, more tokens/s than measured).

    Parameters
    ----------
    cases : list of Case
        :func:`heldout_serving_cases`'s result.

    Returns
    -------
    dict
        ``n``, ``mean``, ``max`` and ``signed_mean`` (fractions).
    """
    errs = [c.rel_error for c in cases]
    return {"n": float(len(errs)), "mean": statistics.fmean(abs(e) for e in errs),
            "max": max(abs(e) for e in errs), "signed_mean": statistics.fmean(errs)}  # fmt: skip
