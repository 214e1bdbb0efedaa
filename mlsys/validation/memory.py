"""Memory cases: ZeRO model states (Rajbhandari et al. 2020), activations per layer
(Korthikanti et al. 2022), and published layouts that ran, which must fit."""

from __future__ import annotations

from typing import Any

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.formulas import (
    activation_bytes_per_layer,
    optimizer_state_bytes_per_param,
    zero_model_state_bytes,
)
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet
from mlsys.validation._case import Case, layout_fit_case, load_data, records

__all__ = ["activation_cases", "ran_layout_fit_cases", "ran_layout_solve", "zero_cases"]

# memory.toml sections of layouts that ran on DGX H100 nodes (8 GPUs, NDR InfiniBand)
_RAN_SECTIONS = ("nemotron4_340b_report", "nemo_performance")


def zero_cases() -> list[Case]:
    """Every cell of ZeRO's Figure 1 / Table 1: model-state GB per device.

    mlsys's Adam state size (``optimizer_state_bytes_per_param("adam")``, 12 bytes) and
    its 2-byte weights and gradients are library defaults, not inputs of the case.
    """
    z = load_data("memory")["zero"]
    k = optimizer_state_bytes_per_param("adam")
    out = []
    for cell in z["cell"]:
        for part, gb in cell["values"].items():
            got = zero_model_state_bytes(cell["psi"], cell["dp"], z["stages"][part], k) / 1e9
            out.append(
                Case(
                    group="Memory: ZeRO model states",
                    name=f"Ψ={cell['psi'] / 1e9:g}B N_d={cell['dp']} {z['labels'][part]}",
                    quantity="model-state memory per device",
                    unit="GB",
                    published=float(gb),
                    predicted=float(got),
                    tolerance=z["tolerance"],
                    basis="prediction",
                    method="accounting",
                    citation=z["citation"],
                    url=z["url"],
                )
            )
    return out


def activation_cases() -> list[Case]:
    """Table 2 of Korthikanti et al. for the GPT-3 175B layer, one case per variant."""
    k = load_data("memory")["korthikanti"]
    s, b, h, a = k["seq_len"], k["batch_size"], k["hidden"], k["heads"]
    out = []
    for v in k["variant"]:
        t = v.get("tp", k["tp_size"])
        c0, ct, catt = v["coefficients"]
        published = s * b * h * (c0 + ct / t + catt * a * s / (h * t)) / 1e9
        got = activation_bytes_per_layer(s, b, h, a, t, v["sequence_parallel"], v["recompute"])
        out.append(
            Case(
                group="Memory: activations per layer",
                name=f"GPT-3 175B layer, {v['name']} (t={t})",
                quantity="activation memory per layer",
                unit="GB",
                published=float(published),
                predicted=float(got) / 1e9,
                tolerance=k["tolerance"],
                basis="prediction",
                method="accounting",
                citation=k["citation"],
                url=k["url"],
            )
        )
    return out


def ran_layout_solve(row: dict, section: str, **overrides: Any) -> Any:
    """DistributedModel's result for one published layout of a ``memory.toml`` section of
    layouts that ran (DGX H100 nodes), with the library's defaults for all the source does
    not state.

    Parameters
    ----------
    row : dict
        A row of ``records("memory", section)``: model, GPUs, global and micro-batch,
        sequence length, TP, PP, CP, VP.
    section : str
        ``"nemotron4_340b_report"`` or ``"nemo_performance"``.
    **overrides
        Keyword arguments of :meth:`DistributedModel.solve` to change (a what-if, e.g.
        ``dropout=True``).

    Returns
    -------
    DistributedResult
    """
    sec = load_data("memory")[section]
    tp, pp, cp = row["tp"], row["pp"], row["cp"]
    dp = row["gpus"] // (tp * pp * cp)
    fleet = Fleet(node=Nodes.DGX_H100, count=row["gpus"] // 8, fabric=Fabrics.IB_NDR)
    return DistributedModel().solve(
        Models[row["model"]], fleet, batch_size=row["global_batch"],
        precision=sec["precision"], seq_len=row["seq_len"], tp_size=tp, pp_size=pp,
        cp_size=cp, v_stages=row["vp"],
        microbatch_count=row["global_batch"] // (dp * row["micro_batch"]), zero_stage=1,
        sequence_parallel=tp > 1, **overrides,
    )  # fmt: skip


def _ran_name(row: dict, section: str) -> str:
    dp = row["gpus"] // (row["tp"] * row["pp"] * row["cp"])
    source = {"nemotron4_340b_report": "technical report", "nemo_performance": "NeMo 24.07"}
    prec = load_data("memory")[section]["precision"].upper()
    return (f"{Models[row['model']].display_name} {prec} on {row['gpus']} H100 (TP {row['tp']}, "
            f"PP {row['pp']}, VP {row['vp']}, DP {dp}; {source[section]})")  # fmt: skip


def ran_layout_fit_cases() -> list[Case]:
    """Published layouts that ran without a step time in this suite must fit: memory
    needed per GPU over the memory an H100 exposes, judged one-sided (at most 1), as
    :func:`mlsys.validation.training.layout_fit_cases` judges the training runs.

    Nemotron-4 340B's three layouts of its technical report's batch ramp-up (TP 8, PP 12,
    DP 16 to 64, bf16) and NeMo's FP8 benchmark of it on 128 H100 (TP 8, PP 8, VP 12),
    which needs 76.0 GB of the 85.5 GB an H100 exposes with the library's defaults (it
    came out "does not fit", 88.6 GB, while FP8 training defaulted to fp32 gradient
    buffers, where NeMo's FP8 configurations reduce gradients in bf16, and dropout's
    masks were stored for a model trained without dropout).

    Returns
    -------
    list of Case
    """
    data = load_data("memory")
    out = []
    for section in _RAN_SECTIONS:
        for row in records("memory", section):
            res = ran_layout_solve(row, section)
            out.append(layout_fit_case(data[section], _ran_name(row, section), res))
    return out
