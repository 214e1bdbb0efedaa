"""Held-out training runs: published runs no constant or mechanism of mlsys was chosen on.

The suite's own error (:mod:`mlsys.validation.training`) is measured on the runs its
defaults were built against; leave-one-source-out (:mod:`mlsys.validation.loso`) refits the
constants the suite chose without each source in turn. This group goes one step further:
its runs (``mlsys/validation/data/heldout.toml``: NeMo's performance summaries on H100 and
B200 and the Nemotron-4 technical reports' batch ramp-ups) come from sources the rest of the
repository does not cite, and nothing is fitted, chosen or kept by looking at them alone —
a mechanism stays only where it lowers both the suite's leave-one-source-out error and the
error on these runs. The accuracy page reports them as a third column beside in-sample and
leave-one-source-out.

>>> from mlsys.validation.heldout import heldout_cases, heldout_summary
>>> heldout_summary(heldout_cases())["n"]              # doctest: +SKIP
24
"""

from __future__ import annotations

import statistics
from typing import Any

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet, TransformerWorkload
from mlsys.validation._case import Case, load_data, prediction_case, records

__all__ = [
    "HELDOUT_SECTIONS",
    "heldout_cases",
    "heldout_solve",
    "heldout_summary",
    "speed_error",
]

HELDOUT_SECTIONS = ("nemo_2407", "nemo_2502_b200", "nemotron4_15b", "nemotron4_340b")
"""Sections of ``heldout.toml``, one per source."""

_NODES = {"nemo_2502_b200": "DGX_B200"}
_RELEASES = {"nemo_2407": "NeMo 24.07", "nemo_2502_b200": "NeMo 25.02"}
_GROUP = "Held-out training runs"

# NeMo's model configurations of the models the catalog lacks ([nemo_2407] models_source;
# Nemotron-4 340B, Llama 2 and Llama 3 are catalog entries): layers, hidden, heads,
# key-value heads, vocabulary, GPT-3 (learned positions, GeLU, bias) or Nemotron (RoPE,
# squared ReLU, no bias)
_SHAPES: dict[str, tuple[int, int, int, int, int, str]] = {
    "GPT3_5B": (24, 4096, 32, 32, 50304, "gpt3"),
    "GPT3_20B": (44, 6144, 48, 48, 50304, "gpt3"),
    "GPT3_175B": (96, 12288, 96, 96, 50304, "gpt3"),
    "Nemotron3_8B": (32, 4096, 32, 32, 256000, "nemotron"),
    "Nemotron3_22B": (40, 6144, 48, 48, 256000, "nemotron"),
    "Nemotron4_15B": (32, 6144, 48, 8, 256000, "nemotron"),
}
_DISPLAY = {
    "GPT3_5B": "GPT-3 5B", "GPT3_20B": "GPT-3 20B", "GPT3_175B": "GPT-3 175B",
    "Nemotron3_8B": "Nemotron-3 8B", "Nemotron3_22B": "Nemotron-3 22B",
    "Nemotron4_15B": "Nemotron-4 15B",
}  # fmt: skip


def _model(name: str, seq_len: int) -> Any:
    if name not in _SHAPES:
        return Models[name]
    layers, hidden, heads, kv, vocab, family = _SHAPES[name]
    gpt3 = family == "gpt3"
    return TransformerWorkload(
        name=name, display_name=_DISPLAY[name], layers=layers, hidden=hidden, heads=heads,
        kv_heads=kv, ffn_hidden=4 * hidden, gated_mlp=False, vocab=vocab, seq_len=seq_len,
        norm="layernorm", bias=gpt3, tied_embeddings=gpt3,
        position_embedding="learned" if gpt3 else "rope",
    )  # fmt: skip


def _row_layout(section: str, row: dict) -> dict:
    """A row with the section's layout defaults filled in (the reports' single layout)."""
    sec = load_data("heldout")[section]
    keys = ("model", "tp", "pp", "cp", "vp", "micro_batch", "seq_len")
    defaults = {"pp": 1, "cp": 1, "vp": 1, **{k: sec[k] for k in keys if k in sec}}
    return {**defaults, **row}


def heldout_solve(section: str, row: dict, **overrides: Any) -> tuple[Any, Fleet]:
    """DistributedModel's result for one held-out run, and its fleet.

    Parameters
    ----------
    section : str
        One of :data:`HELDOUT_SECTIONS`.
    row : dict
        A row of ``records("heldout", section)``.
    **overrides
        Keyword arguments of :meth:`DistributedModel.solve` to change (a what-if).

    Returns
    -------
    tuple
        The DistributedResult and the fleet it ran on.
    """
    sec = load_data("heldout")[section]
    r = _row_layout(section, row)
    node = Nodes[_NODES.get(section, "DGX_H100")]
    fleet = Fleet(node=node, count=r["gpus"] // node.accelerators_per_node,
                  fabric=Fabrics[sec["fabric"]])  # fmt: skip
    dp = r["gpus"] // (r["tp"] * r["pp"] * r["cp"])
    model = _model(r["model"], r["seq_len"])
    # dropout: GPTConfig's 0.1 default in the GPT-3 5B and 20B configs, 0 elsewhere
    dropout = r["model"] in ("GPT3_5B", "GPT3_20B")
    kw: dict[str, Any] = dict(
        batch_size=r["global_batch"], precision=sec["precision"], seq_len=r["seq_len"],
        tp_size=r["tp"], pp_size=r["pp"], v_stages=r["vp"],
        microbatch_count=r["global_batch"] // (dp * r["micro_batch"]), zero_stage=1,
        sequence_parallel=r["tp"] > 1, tp_comm_overlap=r["tp"] > 1 and "iteration_s" not in row,
        grad_dtype=sec["grad_dtype"], dropout=dropout,
    )  # fmt: skip
    if r["cp"] > 1:
        kw["cp_size"] = r["cp"]
    res = DistributedModel().solve(model, fleet, **{**kw, **overrides})
    return res, fleet


def _name(section: str, row: dict, fleet: Fleet) -> str:
    r = _row_layout(section, row)
    model = _DISPLAY.get(r["model"]) or Models[r["model"]].display_name
    sec = load_data("heldout")[section]
    layout = f"TP {r['tp']}" + (f", PP {r['pp']}" if r["pp"] > 1 else "")
    layout += f", CP {r['cp']}" if r["cp"] > 1 else ""
    gpus = f"{r['gpus']} {fleet.accelerator.name}"
    if "iteration_s" in row:
        return (f"{model} {sec['precision'].upper()} on {gpus}, {layout}, "
                f"batch {r['global_batch']} (technical report)")  # fmt: skip
    return f"{model} {sec['precision'].upper()} on {gpus}, {layout} ({_RELEASES[section]})"


def heldout_cases() -> list[Case]:
    """Every held-out run (``heldout.toml``) against mlsys's prediction with library
    defaults: tokens/s per GPU for the performance-summary rows, the iteration time for
    the technical reports' batch ramp-up rows.

    Returns
    -------
    list of Case
    """
    out = []
    for section in HELDOUT_SECTIONS:
        sec = load_data("heldout")[section]
        for row in records("heldout", section):
            res, fleet = heldout_solve(section, row)
            if "iteration_s" in row:
                quantity, unit, pub = "iteration time", "s", row["iteration_s"]
                got = res.si("step_time")
            else:
                quantity, unit, pub = "tokens/s per GPU", "token/s", row["tokens_per_s_per_gpu"]
                got = res.si("tokens_per_second") / row["gpus"]
            off = abs(got / pub - 1.0) > 0.10
            key = f"{row.get('model', sec.get('model'))}/{row['gpus']}"
            note = (sec.get("notes", {}).get(key) or sec.get("note_if_off", "")) if off else ""
            out.append(
                prediction_case(sec, group=_GROUP, name=_name(section, row, fleet),
                                quantity=quantity, unit=unit, published=pub, predicted=got,
                                note=note)
            )  # fmt: skip
    return out


def heldout_summary(cases: list[Case]) -> dict[str, float]:
    """Mean and maximum |relative error| of held-out cases (the suite's
    ``predicted / published - 1``), and the signed mean of the speed error (a time
    compared as its reciprocal, so that positive always means mlsys is optimistic).

    Parameters
    ----------
    cases : list of Case
        :func:`heldout_cases`'s result.

    Returns
    -------
    dict
        ``n``, ``mean``, ``max`` and ``signed_mean`` (fractions).
    """
    errs = [abs(c.rel_error) for c in cases]
    return {"n": float(len(errs)), "mean": statistics.fmean(errs), "max": max(errs),
            "signed_mean": statistics.fmean(speed_error(c) for c in cases)}  # fmt: skip


def speed_error(case: Case) -> float:
    """A case's error as a speed: ``predicted / published - 1`` for a throughput, its
    reciprocal's for a time, so that positive means mlsys is optimistic.

    Parameters
    ----------
    case : Case

    Returns
    -------
    float
        Fraction.
    """
    if case.unit == "s":
        return case.published / case.predicted - 1.0
    return case.predicted / case.published - 1.0
