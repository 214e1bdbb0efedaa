"""Training-throughput cases: DistributedModel against published large-scale runs."""

from __future__ import annotations

from typing import Any

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet, TransformerWorkload
from mlsys.validation._case import Case, load_data

__all__ = ["korthikanti_cases", "other_run_cases"]

_A100_FLEET = {"node": Nodes.DGX_A100, "fabric": Fabrics.IB_HDR}
_H100_FLEET = {"node": Nodes.DGX_H100, "fabric": Fabrics.IB_NDR}


def _gpt(layers: int, hidden: int, heads: int, vocab: int, seq_len: int = 2048, **kw: Any):
    return TransformerWorkload(
        name="gpt", layers=layers, hidden=hidden, heads=heads, vocab=vocab, seq_len=seq_len, **kw
    )


def _fleet(gpus: int, kind: dict) -> Fleet:
    return Fleet(node=kind["node"], count=gpus // 8, fabric=kind["fabric"])


def _hardware_tflops(res: Any, fleet: Fleet, precision: str = "bf16") -> float:
    """FLOP/s per GPU counted with recomputation (HFU × peak), in TFLOP/s."""
    return res.hfu * fleet.accelerator.peak_flops_s(precision) / 1e12


def _note_if_off(predicted: float, published: float, section: dict) -> str:
    return section["note_if_off"] if abs(predicted / published - 1) > 0.10 else ""


def korthikanti_cases() -> list[Case]:
    """Korthikanti et al. Table 5: iteration time and MFU of four GPT models.

    These rows are the ones the default compute efficiency was chosen to sit inside
    (see :mod:`mlsys.core.solvers.efficiency`), so they are marked as fits.
    """
    k = load_data("training")["korthikanti"]
    solver = DistributedModel()
    out = []
    for name, a, h, L, tp, pp, gpus, batch, mb, v, seconds, mfu in k["rows"]:
        fleet = _fleet(gpus, _A100_FLEET)
        dp = gpus // (tp * pp)
        res = solver.solve(
            _gpt(L, h, a, 51200), fleet, batch_size=batch, tp_size=tp, pp_size=pp, v_stages=v,
            microbatch_count=batch // (dp * mb), recompute="selective", sequence_parallel=True,
            flash_attention=False,
        )  # fmt: skip
        common = dict(
            group="Training: Korthikanti et al. 2022 (Table 5)",
            tolerance=k["tolerance"], basis="fit", method="performance model",
            citation=k["citation"], url=k["url"],
        )  # fmt: skip
        for quantity, unit, pub, got in (
            ("iteration time", "s", seconds, res.si("step_time")),
            ("MFU", "fraction", mfu, res.mfu),
        ):
            note = k["note_if_off"] if abs(got / pub - 1) > 0.10 else ""
            out.append(
                Case(name=f"GPT {name} on {gpus} A100", quantity=quantity, unit=unit,
                     published=pub, predicted=got, note=note, **common)
            )  # fmt: skip
    return out


def _narayanan() -> list[Case]:
    n = load_data("training")["narayanan"]
    solver = DistributedModel()
    out = []
    for params_b, a, h, L, tp, pp, gpus, batch, tflops in n["rows"]:
        fleet = _fleet(gpus, _A100_FLEET)
        dp = gpus // (tp * pp)
        res = solver.solve(
            _gpt(L, h, a, 51200), fleet, batch_size=batch, precision="fp16", tp_size=tp,
            pp_size=pp, microbatch_count=batch // dp, recompute="full", flash_attention=False,
        )  # fmt: skip
        out.append(
            Case(
                group="Training: Megatron-LM weak scaling (Narayanan et al. 2021)",
                name=f"GPT {params_b:g}B on {gpus} A100",
                quantity="per-GPU FLOP rate (Eq. 3 FLOPs)", unit="TFLOP/s", published=float(tflops),
                predicted=_hardware_tflops(res, fleet, "fp16"), tolerance=n["tolerance"],
                basis="prediction", method="performance model", citation=n["citation"],
                url=n["url"], note=_note_if_off(_hardware_tflops(res, fleet, "fp16"), tflops, n),
            )
        )  # fmt: skip
    return out


def _mtnlg() -> list[Case]:
    m = load_data("training")["mtnlg"]
    model = _gpt(m["layers"], m["hidden"], m["heads"], m["vocab"])
    out = []
    for gpus, seconds in m["rows"]:
        fleet = _fleet(gpus, _A100_FLEET)
        dp = gpus // (m["tp"] * m["pp"])
        res = DistributedModel().solve(
            model, fleet, batch_size=m["global_batch"], tp_size=m["tp"], pp_size=m["pp"],
            microbatch_count=m["global_batch"] // dp, recompute="full", zero_stage=1,
            flash_attention=False,
        )  # fmt: skip
        out.append(
            Case(
                group="Training: other published runs", name=f"MT-NLG 530B on {gpus} A100",
                quantity="iteration time", unit="s", published=float(seconds),
                predicted=res.si("step_time"), tolerance=m["tolerance"], basis="prediction",
                method="performance model", citation=m["citation"], url=m["url"],
                note=m["note"],
            )
        )  # fmt: skip
    return out


def _llama3() -> list[Case]:
    c = load_data("training")["llama3"]
    out = []
    for gpus, dp, mfu in c["rows"]:
        fleet = _fleet(gpus, _H100_FLEET)
        res = DistributedModel().solve(
            Models[c["catalog"]], fleet, batch_size=c["global_batch"], seq_len=c["seq_len"],
            tp_size=c["tp"], pp_size=c["pp"], v_stages=c["v_stages"],
            microbatch_count=c["global_batch"] // dp, zero_stage=1, sequence_parallel=True,
        )  # fmt: skip
        out.append(
            Case(
                group="Training: other published runs", name=f"Llama 3 405B on {gpus} H100",
                quantity="MFU", unit="fraction", published=float(mfu), predicted=res.mfu,
                tolerance=c["tolerance"], basis="prediction", method="performance model",
                citation=c["citation"], url=c["url"],
            )
        )  # fmt: skip
    return out


def _bloom() -> Case:
    b = load_data("training")["bloom"]
    model = _gpt(b["layers"], b["hidden"], b["heads"], b["vocab"], position_embedding="alibi")
    fleet = _fleet(b["gpus"], _A100_FLEET)
    dp = b["gpus"] // (b["tp"] * b["pp"])
    res = DistributedModel().solve(
        model, fleet, batch_size=b["global_batch"], tp_size=b["tp"], pp_size=b["pp"],
        microbatch_count=b["global_batch"] // (dp * b["micro_batch"]), zero_stage=1,
        recompute="full", flash_attention=False,
    )  # fmt: skip
    return Case(
        group="Training: other published runs", name=f"BLOOM 176B on {b['gpus']} A100",
        quantity="per-GPU FLOP rate (with recompute)", unit="TFLOP/s",
        published=float(b["tflops_per_gpu"]), predicted=_hardware_tflops(res, fleet),
        tolerance=b["tolerance"], basis="prediction", method="performance model",
        citation=b["citation"], url=b["url"],
    )  # fmt: skip


def _opt() -> Case:
    o = load_data("training")["opt"]
    model = _gpt(o["layers"], o["hidden"], o["heads"], o["vocab"])
    fleet = _fleet(o["gpus"], _A100_FLEET)
    res = DistributedModel().solve(
        model, fleet, batch_size=o["global_batch"], precision="fp16", tp_size=o["tp"],
        microbatch_count=1, zero_stage=3, recompute="full", flash_attention=False,
    )  # fmt: skip
    return Case(
        group="Training: other published runs", name=f"OPT-175B on {o['gpus']} A100",
        quantity="per-GPU FLOP rate (with recompute)", unit="TFLOP/s",
        published=float(o["tflops_per_gpu"]), predicted=_hardware_tflops(res, fleet, "fp16"),
        tolerance=o["tolerance"], basis="prediction", method="performance model",
        citation=o["citation"], url=o["url"], note=o.get("note", ""),
    )  # fmt: skip


def other_run_cases() -> list[Case]:
    """Narayanan Table 1, MT-NLG 530B, Llama 3 405B, BLOOM 176B and OPT-175B."""
    return [*_narayanan(), *_mtnlg(), *_llama3(), _bloom(), _opt()]
