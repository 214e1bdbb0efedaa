"""Parameter and FLOP counting: Megatron Eq. 2/3, Korthikanti model FLOPs, GPT-3 6ND."""

from __future__ import annotations

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet, TransformerWorkload
from mlsys.validation._case import Case, load_data, records

__all__ = ["flop_cases", "param_cases"]

_GROUP = "Parameters and FLOPs"


def param_cases() -> list[Case]:
    """Catalog models' parameter counts against the counts their authors publish.

    Mixture-of-experts rows also compare the parameters active per token.
    """
    out = []
    for row in records("compute", "params"):
        model = Models[row["catalog"]]
        pairs = [("parameters", row["published"], model.total_params)]
        if "published_active" in row:
            pairs.append(
                (
                    "active parameters per token",
                    row["published_active"],
                    model.active_params_per_token,
                )
            )
        for quantity, published, predicted in pairs:
            out.append(
                Case(
                    group=_GROUP,
                    name=row["name"],
                    quantity=quantity,
                    unit="parameters",
                    published=float(published),
                    predicted=float(predicted),
                    tolerance=row["tolerance"],
                    basis="prediction",
                    method="accounting",
                    citation=row["citation"],
                    url=row["url"],
                )
            )
    return out


def _gpt(row: dict) -> TransformerWorkload:
    return TransformerWorkload(
        name=row["name"],
        layers=row["layers"],
        hidden=row["hidden"],
        heads=row["heads"],
        vocab=row["vocab"],
        seq_len=row["seq_len"],
    )


def flop_cases() -> list[Case]:
    """FLOPs per iteration counted by DistributedModel against the papers' formulas."""
    data = load_data("compute")
    out = []
    fleet = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
    solver = DistributedModel()

    eq3 = data["megatron_eq3"]
    B, s, L, h, V = eq3["batch"], eq3["seq_len"], eq3["layers"], eq3["hidden"], eq3["vocab"]
    published = 96 * B * s * L * h**2 * (1 + s / (6 * h) + V / (16 * L * h))
    res = solver.solve(
        _gpt(eq3), fleet, batch_size=B, tp_size=8, pp_size=8, microbatch_count=B,
        recompute="full", flash_attention=False,
    )  # fmt: skip
    # hardware FLOPs executed = HFU × peak × devices × step time
    hw = res.hfu * fleet.accelerator.peak_flops_s("bf16") * 64 * res.si("step_time")
    out.append(
        Case(
            group=_GROUP, name=eq3["name"], quantity="FLOPs per iteration", unit="FLOP",
            published=float(published), predicted=float(hw), tolerance=eq3["tolerance"],
            basis="prediction", method="accounting", citation=eq3["citation"], url=eq3["url"],
            note="mlsys also counts bias and LayerNorm parameters, which Eq. 3 leaves out",
        )
    )  # fmt: skip

    kf = data["korthikanti_flops"]
    B, s, L, h, V = kf["batch"], kf["seq_len"], kf["layers"], kf["hidden"], kf["vocab"]
    published = 72 * B * L * s * h**2 * (1 + s / (6 * h) + V / (12 * h * L))
    res = solver.solve(
        _gpt(kf), fleet, batch_size=B, tp_size=8, pp_size=8, v_stages=3, microbatch_count=B,
        recompute="selective", sequence_parallel=True, flash_attention=False,
    )  # fmt: skip
    out.append(
        Case(
            group=_GROUP, name=kf["name"], quantity="model FLOPs per iteration", unit="FLOP",
            published=float(published), predicted=res.si("model_flops"),
            tolerance=kf["tolerance"], basis="prediction", method="accounting",
            citation=kf["citation"], url=kf["url"],
        )
    )  # fmt: skip

    g = data["gpt3_compute"]
    predicted = 6.0 * Models[g["catalog"]].total_params * g["tokens"]
    out.append(
        Case(
            group=_GROUP, name=g["name"], quantity="training compute", unit="FLOP",
            published=float(g["published"]), predicted=float(predicted),
            tolerance=g["tolerance"], basis="prediction", method="accounting",
            citation=g["citation"], url=g["url"],
        )
    )  # fmt: skip
    return out
