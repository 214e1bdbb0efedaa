"""Training-throughput cases: DistributedModel against published large-scale runs.

Every layout below is read from ``mlsys/validation/data/training.toml`` (the authors'
own configurations where they published them); every prediction uses library defaults.
"""

from __future__ import annotations

from typing import Any

from mlsys.core.catalog import Fabrics, Hardware, Models, Nodes
from mlsys.core.formulas.transformer import training_flops_per_token
from mlsys.core.solvers.distributed import DistributedModel, build_problem
from mlsys.core.types import Fabric, Fleet, Node, TransformerWorkload
from mlsys.validation._case import (
    Case,
    assumptions_of,
    layout_fit_case,
    load_data,
    prediction_case,
    records,
)

__all__ = [
    "bloom_solve",
    "bridge_solve",
    "bridge_moe_guide_solve",
    "korthikanti_cases",
    "korthikanti_solve",
    "layout_fit_cases",
    "llama3_mfu",
    "llama3_solve",
    "mosaic_solve",
    "torchtitan_solve",
    "flashattention2_solve",
    "mtnlg_solve",
    "narayanan_solve",
    "neox_logged_flops_per_token",
    "neox_solve",
    "opt_solve",
    "other_run_cases",
    "training_runs",
]

_A100_FLEET = {"node": Nodes.DGX_A100, "fabric": Fabrics.IB_HDR}
_H100_FLEET = {"node": Nodes.DGX_H100, "fabric": Fabrics.IB_NDR}
_GROUP_OTHER = "Training: other published runs"
_GROUP_MISCONFIGURED = "Training: runs their publisher reports as misconfigured"


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


def korthikanti_solve(row: dict) -> Any:
    """DistributedModel's result for one row of Korthikanti et al. Table 5 (data file row)."""
    dp = row["gpus"] // (row["tp"] * row["pp"])
    model = _gpt(row["layers"], row["hidden"], row["heads"], 51200)
    return DistributedModel().solve(
        model, _fleet(row["gpus"], _A100_FLEET), batch_size=row["global_batch"],
        tp_size=row["tp"], pp_size=row["pp"], v_stages=row["v_stages"],
        microbatch_count=row["global_batch"] // (dp * row["micro_batch"]),
        recompute="selective", sequence_parallel=True, flash_attention=False,
    )  # fmt: skip


def korthikanti_cases() -> list[Case]:
    """Korthikanti et al. Table 5: iteration time and MFU of four GPT models.

    These rows are the ones the default compute efficiency was chosen to sit inside
    (see :mod:`mlsys.core.solvers.efficiency`), so they are marked as fits.
    """
    k = load_data("training")["korthikanti"]
    out = []
    for row in records("training", "korthikanti"):
        res = korthikanti_solve(row)
        common = dict(
            group="Training: Korthikanti et al. 2022 (Table 5)",
            tolerance=k["tolerance"], basis="fit", method="performance model",
            citation=k["citation"], url=k["url"], assumptions=assumptions_of(k),
        )  # fmt: skip
        for quantity, unit, pub, got in (
            ("iteration time", "s", row["iteration_s"], res.si("step_time")),
            ("MFU", "fraction", row["mfu"], res.mfu),
        ):
            out.append(
                Case(name=_run_name("korthikanti", row), quantity=quantity,
                     unit=unit, published=pub, predicted=got,
                     note=_note_if_off(got, pub, k), **common)
            )  # fmt: skip
    return out


def narayanan_solve(row: dict) -> tuple[Any, Fleet]:
    """DistributedModel's result for one row of Narayanan et al. Table 1, in the authors'
    own layout (micro-batch and interleaving of ``examples/sc21/run_table_1.sh``).

    Parameters
    ----------
    row : dict
        A row of ``records("training", "narayanan")``.

    Returns
    -------
    tuple
        The DistributedResult and the fleet it ran on.
    """
    n = load_data("training")["narayanan"]
    fleet = _fleet(row["gpus"], _A100_FLEET)
    dp = row["gpus"] // (row["tp"] * row["pp"])
    model = _gpt(row["layers"], row["hidden"], row["heads"], n["vocab"], n["seq_len"])
    res = DistributedModel().solve(
        model, fleet, batch_size=row["global_batch"], precision=n["precision"],
        tp_size=row["tp"], pp_size=row["pp"], v_stages=row["v_stages"],
        microbatch_count=row["global_batch"] // (dp * row["micro_batch"]),
        recompute="full", flash_attention=False,
        # PyTorch DDP all-reduces during backward; Megatron's 2021 "local" DDP after it
        overlap=row["ddp"] == "torch",
        grad_accumulation_fusion=n["grad_accumulation_fusion"],
    )  # fmt: skip
    return res, fleet


def _narayanan() -> list[Case]:
    n = load_data("training")["narayanan"]
    out = []
    for row in records("training", "narayanan"):
        res, fleet = narayanan_solve(row)
        got = _hardware_tflops(res, fleet, n["precision"])
        out.append(
            Case(
                group="Training: Megatron-LM weak scaling (Narayanan et al. 2021)",
                name=_run_name("narayanan", row),
                quantity="per-GPU FLOP rate (Eq. 3 FLOPs)", unit="TFLOP/s",
                published=float(row["tflops_per_gpu"]), predicted=got, tolerance=n["tolerance"],
                basis="prediction", method="performance model", citation=n["citation"],
                url=n["url"], note=_note_if_off(got, row["tflops_per_gpu"], n),
                assumptions=assumptions_of(n),
                open_issue=n.get("open_issues", {}).get(f"{row['params_b']:g}", ""),
            )
        )  # fmt: skip
    return out


def mtnlg_solve(gpus: int) -> Any:
    """DistributedModel's result for MT-NLG 530B on ``gpus`` A100 (Smith et al. 2022)."""
    m = load_data("training")["mtnlg"]
    model = _gpt(m["layers"], m["hidden"], m["heads"], m["vocab"], m["seq_len"])
    dp = gpus // (m["tp"] * m["pp"])
    return DistributedModel().solve(
        model, _fleet(gpus, _A100_FLEET), batch_size=m["global_batch"], tp_size=m["tp"],
        pp_size=m["pp"], microbatch_count=m["global_batch"] // (dp * m["micro_batch"]),
        recompute=m["recompute"], zero_stage=1, flash_attention=False,
        grad_accumulation_fusion=m["grad_accumulation_fusion"],
        pipeline_p2p=m["pipeline_p2p"],
        overlap=False,  # DeepSpeed's engine reduces gradients after the batch (grad_reduce_source)
    )  # fmt: skip


def _mtnlg() -> list[Case]:
    m = load_data("training")["mtnlg"]
    out = []
    for row in records("training", "mtnlg"):
        res = mtnlg_solve(row["gpus"])
        out.append(
            prediction_case(
                m, group=_GROUP_OTHER, name=_run_name("mtnlg", row),
                quantity="iteration time", unit="s", published=row["iteration_s"],
                predicted=res.si("step_time"), note=m["note"],
            )
        )  # fmt: skip
    return out


def llama3_solve(row: dict, zero_stage: int = 1) -> Any:
    """DistributedModel's result for one row of Llama 3's Table 4 (Dubey et al. 2024).

    Rows with context parallelism (``cp > 1``) need ``DistributedModel.solve(cp_size=)``.
    ``zero_stage`` 1 prices the step (one gradient reduce-scatter and one parameter
    all-gather a step); 3 holds the model states as Meta's FSDP shards them, for the
    memory check (``[llama3] fsdp_source``).
    """
    c = load_data("training")["llama3"]
    fleet = _fleet(row["gpus"], _H100_FLEET)
    kw: dict[str, Any] = {}
    if row["cp"] > 1:
        kw["cp_size"] = row["cp"]
        kw["cp_comm_type"] = c["cp_comm_type"]
    batch = row["dp"] * row["batch_per_dp"]
    return DistributedModel().solve(
        Models[c["catalog"]], fleet, batch_size=batch, seq_len=row["seq_len"],
        tp_size=row["tp"], pp_size=row["pp"], v_stages=c["v_stages"],
        microbatch_count=row["batch_per_dp"], zero_stage=zero_stage, sequence_parallel=True,
        recompute=c["recompute"], grad_accumulation_fusion=c["grad_accumulation_fusion"],
        dropout=c["dropout"], **kw,
    )  # fmt: skip


def llama3_mfu(row: dict, res: Any = None) -> float:
    """MFU of one Llama 3 Table 4 row as Meta counts it: causal attention.

    DistributedModel's ``mfu`` counts attention non-causally (Megatron-LM's and
    Korthikanti's model FLOPs, ``4·s·d_attn`` per token and layer forward), but a causal
    fused kernel executes half of that. Meta's convention is read from its own table:
    the 8k row and the 131k row on 16,384 GPUs share TP 8, PP 16, 16 micro-batches per
    data-parallel group and 16M tokens per batch, and differ only in CP 16 and the
    sequence length. At 131k attention is over half of the non-causal count, so on that
    count the long-context row's MFU would come out about 25 % above the 8k row's (the
    extra half of attention is counted but never run); Meta's falls 7 % (0.41 to 0.38),
    which is what counting the executed, causal attention gives (see the test that
    checks it). The same convention applies to every Llama 3 row.

    Parameters
    ----------
    row : dict
        A row of ``records("training", "llama3")``.
    res : DistributedResult, optional
        The row's :func:`llama3_solve` result (computed if not given).

    Returns
    -------
    float
        Model FLOPs utilisation (fraction) with causal attention FLOPs.

    References
    ----------
    Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Table 1 (causal
    attention, ``2·l·ctx·d_attn`` per token forward); Dubey et al. (2024), "The Llama 3
    Herd of Models", arXiv:2407.21783, Table 4.
    """
    c = load_data("training")["llama3"]
    model = Models[c["catalog"]]
    res = llama3_solve(row) if res is None else res
    # the solver's own counts (build_problem), so the two conventions differ only in
    # the attention term
    P = build_problem(model, _fleet(row["gpus"], _H100_FLEET), 1, seq_len=row["seq_len"])
    causal = float(training_flops_per_token(P.n_layer * P.L, P.n_head, P.L, P.s, P.d_attn,
                                            causal=True))  # fmt: skip
    return float(res.mfu) * causal / P.model_flops_per_token


def _context_parallel_supported() -> bool:
    import inspect

    return "cp_size" in inspect.signature(DistributedModel.solve).parameters


def _llama3() -> list[Case]:
    c = load_data("training")["llama3"]
    out = []
    for row in records("training", "llama3"):
        if row["cp"] > 1 and not _context_parallel_supported():
            continue  # the 131k-token row waits for DistributedModel's cp_size
        res = llama3_solve(row)
        issue = c.get("open_issues", {}).get(f"{row['gpus']}/{row['cp']}", "")
        got = llama3_mfu(row, res)
        out.append(
            prediction_case(
                c, group=_GROUP_OTHER, name=_llama3_name(row),
                quantity="MFU (causal attention FLOPs)", unit="fraction",
                published=row["mfu"], predicted=got,
                note=issue or _note_if_off(got, row["mfu"], c), open_issue=issue,
            )
        )  # fmt: skip
    return out


def bridge_solve(row: dict, section: str = "bridge", **overrides: Any) -> tuple[Any, Fleet]:
    """DistributedModel's result for one Megatron-Bridge performance-summary row, and its
    fleet (the row's own layout: FSDP, TP, PP, CP, VP, micro-batch, global batch).

    Parameters
    ----------
    row : dict
        A row of ``records("training", section)``.
    section : str
        ``"bridge"`` (the 25.11 summary), ``"bridge_archive"`` (later releases' rows,
        set up the same way) or ``"bridge_moe"`` (the 25.11 summary's mixture-of-experts
        rows: their own precision, expert parallelism and CUDA-graph scope).
    **overrides
        Keyword arguments of :meth:`DistributedModel.solve` to change (a what-if, e.g.
        ``grad_dtype="fp32"``).

    Returns
    -------
    tuple
        The DistributedResult and the fleet it ran on.
    """
    b = load_data("training")[section]
    fleet = _bridge_fleet(Nodes[row["node"]], row["gpus"], Fabrics[b["fabric"]])
    dp = row["gpus"] // (row["tp"] * row["pp"] * row["cp"])
    kw: dict[str, Any] = dict(
        batch_size=row["global_batch"], precision=row.get("precision", b.get("precision")),
        seq_len=row["seq_len"],
        tp_size=row["tp"], pp_size=row["pp"], v_stages=row["vp"],
        microbatch_count=row["global_batch"] // (dp * row["micro_batch"]),
        zero_stage=3 if row["fsdp"] else 1, sequence_parallel=row["tp"] > 1,
        grad_dtype=b["grad_dtype"],
        # the performance scripts: userbuffers TP overlap wherever TP > 1; Megatron-FSDP
        # rows turn gradient-accumulation fusion off (comm_overlap_source)
        tp_comm_overlap=row["tp"] > 1, grad_accumulation_fusion=not row["fsdp"],
        dropout=b["dropout"],
    )  # fmt: skip
    if row["cp"] > 1:
        kw["cp_size"] = row["cp"]
    if "ep" in row:  # the MoE rows: expert ranks carved out of the data-parallel ones
        kw.update(ep_size=row["ep"], cuda_graph_scope=tuple(row["cuda_graph_scope"]))
    res = DistributedModel().solve(Models[row["model"]], fleet, **{**kw, **overrides})
    return res, fleet


def _bridge_fleet(node: Any, gpus: int, fabric: Any) -> Fleet:
    """The nodes a performance-summary row ran on: whole nodes, or on a rack-scale NVLink
    domain (GB200 NVL72) the trays Megatron-Bridge's launcher asks Slurm for, in segments
    of up to 18 four-GPU trays (``[bridge]`` ``rack_layout_source``)."""
    per_node = node.accelerators_per_node
    if gpus % per_node == 0:
        return Fleet(node=node, count=gpus // per_node, fabric=fabric)
    rule = load_data("training")["bridge"]
    trays = gpus // rule["rack_tray_gpus"]
    segment = max(d for d in range(1, rule["rack_segment_trays_max"] + 1) if trays % d == 0)
    return Fleet(node=node, count=trays // segment, fabric=fabric,
                 accelerators_per_node=segment * rule["rack_tray_gpus"])  # fmt: skip


def _bridge_name(row: dict, fleet: Fleet) -> str:
    model = Models[row["model"]].display_name
    gpus = f"{row['gpus']} {fleet.accelerator.name}"
    if "ep" in row:
        return f"{model} FP8 on {gpus}, EP {row['ep']} (Megatron-Bridge)"
    if "release" not in row:
        return f"{model} FP8 on {gpus} (Megatron-Bridge)"
    task = "" if row["task"] == "pretrain" else f" {row['task']}"
    return (f"{model} FP8{task} on {gpus}, batch {row['global_batch']} "
            f"(Megatron-Bridge {row['release']})")  # fmt: skip


def _bridge(section: str = "bridge") -> list[Case]:
    b = load_data("training")[section]
    out = []
    for row in records("training", section):
        res, fleet = bridge_solve(row, section)
        got = res.si("tokens_per_second") / row["gpus"]
        key = f"{row['model']}/{row['node']}/{row['gpus']}"
        issue = b.get("open_issues", {}).get(key, "")
        misconfigured = b.get("publisher_reports_misconfigured", {}).get(key, "")
        off = abs(got / row["tokens_per_s_per_gpu"] - 1) > 0.10
        note = (b.get("notes", {}).get(key) or b["note_if_off"]) if off else ""
        out.append(
            prediction_case(
                b, group=_GROUP_MISCONFIGURED if misconfigured else _GROUP_OTHER,
                name=_bridge_name(row, fleet), quantity="tokens/s per GPU",
                unit="token/s", published=row["tokens_per_s_per_gpu"], predicted=got,
                note=issue or note, open_issue=issue,
                publisher_reports_misconfigured=misconfigured,
            )
        )  # fmt: skip
    return out


def bridge_moe_guide_solve(**overrides: Any) -> tuple[Any, Fleet]:
    """DistributedModel's result for the eager Qwen3-30B-A3B run of Megatron-Bridge's MoE
    optimisation guide (16 H100, EP 16 across two nodes), and its fleet: the section is
    one row, set up as :func:`bridge_solve` sets up the performance summary's.

    Parameters
    ----------
    **overrides
        Keyword arguments of :meth:`DistributedModel.solve` to change.

    Returns
    -------
    tuple
        The DistributedResult and the fleet it ran on.
    """
    return bridge_solve(load_data("training")["bridge_moe_guide"], "bridge_moe_guide", **overrides)


def _bridge_moe_guide() -> Case:
    g = load_data("training")["bridge_moe_guide"]
    res, _ = bridge_moe_guide_solve()
    got = res.si("step_time")
    off = abs(got / g["step_time_s"] - 1) > 0.10
    return prediction_case(
        g, group=_GROUP_OTHER,
        name="Qwen3-30B-A3B bf16 on 16 H100, EP 16 across two nodes (Megatron-Bridge guide)",
        quantity="step time", unit="s", published=g["step_time_s"], predicted=got,
        note=g["note_if_off"] if off else "",
    )  # fmt: skip


def _bridge_rows() -> list[tuple[str, dict]]:
    return [
        (sec, row)
        for sec in ("bridge", "bridge_archive", "bridge_moe")
        for row in records("training", sec)
    ]


# case names of the runs, one template per data-file section (filled from its row, or from
# the section itself for a single run); Llama 3 and MPT build theirs below
_RUN_NAMES = {
    "korthikanti": "GPT {name} on {gpus} A100",
    "narayanan": "GPT {params_b:g}B on {gpus} A100",
    "mtnlg": "MT-NLG 530B on {gpus} A100",
    "bloom": "BLOOM 176B on {gpus} A100",
    "neox": "GPT-NeoX-20B on {gpus} A100 40GB",
    "opt": "OPT-175B on {gpus} A100",
}


def _run_name(section: str, row: dict) -> str:
    return _RUN_NAMES[section].format(**row)


def _llama3_name(row: dict) -> str:
    cp = f", CP {row['cp']}, {row['seq_len'] // 1024}k tokens" if row["cp"] > 1 else ""
    return f"Llama 3 405B on {row['gpus']} H100{cp}"


def _mosaic_name(row: dict) -> str:
    ckpt = ", act. checkpointing" if row["act_ckpt"] else ""
    return (f"MPT-{row['model'].upper()} on {row['gpus']} {_MOSAIC_GPU_NAMES[row['gpu']]}, "
            f"seq {row['seq_len']}{ckpt} (llm-foundry FSDP)")  # fmt: skip


def _ran(res: Any) -> Any:
    """The DistributedResult of a ``*_solve`` that returns it alone or with its fleet."""
    return res[0] if isinstance(res, tuple) else res


def training_runs() -> list[tuple[str, str, Any, str]]:
    """Every published training run of this suite as its layout ran: ``(data-file section,
    case name, DistributedResult, open issue of its memory check)``.

    The layouts are the authors' own (each ``*_solve``), so each must fit the memory its
    device exposes; :func:`layout_fit_cases` checks that. Llama 3 405B's three rows are
    solved with the model states sharded as its FSDP shards them (``[llama3]
    fit_zero_stage``, ``fsdp_source``), which their step-time cases price with ZeRO-1's
    data-parallel traffic.

    Returns
    -------
    list of tuple
    """
    data = load_data("training")
    runs: list[tuple[str, str, Any, str]] = []
    for row in records("training", "korthikanti"):
        runs.append(("korthikanti", _run_name("korthikanti", row), korthikanti_solve(row), ""))
    for row in records("training", "narayanan"):
        runs.append(("narayanan", _run_name("narayanan", row), _ran(narayanan_solve(row)), ""))
    for row in records("training", "mtnlg"):
        runs.append(("mtnlg", _run_name("mtnlg", row), mtnlg_solve(row["gpus"]), ""))
    fsdp = data["llama3"]["fit_zero_stage"]
    for row in records("training", "llama3"):
        if row["cp"] > 1 and not _context_parallel_supported():
            continue
        runs.append(("llama3", _llama3_name(row), llama3_solve(row, fsdp), ""))
    for section, row in _bridge_rows():
        res, fleet = bridge_solve(row, section)
        runs.append((section, _bridge_name(row, fleet), res, ""))
    runs.append(("bloom", _run_name("bloom", data["bloom"]), _ran(bloom_solve()), ""))
    runs.append(("neox", _run_name("neox", data["neox"]), _ran(neox_solve()), ""))
    runs.append(("opt", _run_name("opt", data["opt"]), _ran(opt_solve()), ""))
    for row in records("training", "mosaic"):
        runs.append(("mosaic", _mosaic_name(row), _ran(mosaic_solve(row)), ""))
    for row in records("training", "torchtitan"):
        runs.append(("torchtitan", _torchtitan_name(row), _ran(torchtitan_solve(row)), ""))
    return runs


def layout_fit_cases() -> list[Case]:
    """Layouts that ran must fit: memory needed per GPU over the memory the device
    exposes, judged one-sided (at most 1), for every training run of the suite
    (:func:`training_runs`; the TPU runs: :func:`mlsys.validation.tpu.tpu_layout_fit_cases`).

    Among them Megatron-Bridge's Llama 3 70B FP8 on 64 H100 (TP 4, PP 8, VP 5, global batch
    128, sequence 8192), which needs about 71 GB of the 85.5 GB an H100 exposes (it came out
    "does not fit" while the catalog read "80 GB" as 80e9 bytes).
    """
    data = load_data("training")
    runs = training_runs()
    return [layout_fit_case(data[sec], name, res, issue) for sec, name, res, issue in runs]


def bloom_solve(recompute: str = "full") -> tuple[Any, Fleet]:
    """DistributedModel's result for BLOOM 176B's layout (Le Scao et al. 2022), and its fleet."""
    b = load_data("training")["bloom"]
    fleet = _fleet(b["gpus"], _A100_FLEET)
    dp = b["gpus"] // (b["tp"] * b["pp"])
    res = DistributedModel().solve(
        Models[b["catalog"]], fleet, batch_size=b["global_batch"], tp_size=b["tp"],
        pp_size=b["pp"], microbatch_count=b["global_batch"] // (dp * b["micro_batch"]),
        zero_stage=1, recompute=recompute, flash_attention=False,
        grad_accumulation_fusion=b["grad_accumulation_fusion"],
        pipeline_p2p=b["pipeline_p2p"],
        overlap=False,  # DeepSpeed's engine reduces gradients after the batch ([mtnlg])
    )  # fmt: skip
    return res, fleet


def _bloom() -> Case:
    b = load_data("training")["bloom"]
    res, fleet = bloom_solve()
    return Case(
        group=_GROUP_OTHER, name=_run_name("bloom", b),
        quantity="per-GPU FLOP rate (with recompute)", unit="TFLOP/s",
        published=float(b["tflops_per_gpu"]), predicted=_hardware_tflops(res, fleet),
        tolerance=b["tolerance"], basis="prediction", method="performance model",
        citation=b["citation"], url=b["url"], assumptions=assumptions_of(b),
    )  # fmt: skip


def neox_solve() -> tuple[Any, Fleet]:
    """DistributedModel's result for GPT-NeoX-20B's layout (Black et al. 2022; the run's
    ``configs/20B.yml``), and its fleet: twelve 8 x A100 40GB servers whose four HDR
    HCAs give each GPU half a DGX A100's network bandwidth.

    Returns
    -------
    tuple
        The DistributedResult and the fleet it ran on.
    """
    c = load_data("training")["neox"]
    base = Nodes.DGX_A100
    node = Node(
        **{
            **base.model_dump(),
            "name": "GPT-NeoX-20B server",
            "accelerator": Hardware.A100_40GB,
            "intra_fabric": base.intra_fabric,
        }
    )
    fabric = Fabric(**{**Fabrics.IB_HDR.model_dump(), "name": "IB_HDR, 4 HCAs per 8 GPUs",
                       "bandwidth": c["nic_bandwidth"]})  # fmt: skip
    fleet = Fleet(node=node, count=c["gpus"] // node.accelerators_per_node, fabric=fabric)
    # gpt_j_residual: true in configs/20B.yml: attention and MLP in parallel, one
    # tensor-parallel all-reduce per forward (Black et al. 2022, Sec. 2.1)
    model = _gpt(c["layers"], c["hidden"], c["heads"], c["vocab"], c["seq_len"],
                 tied_embeddings=False, parallel_block=True)  # fmt: skip
    dp = c["gpus"] // (c["tp"] * c["pp"])
    res = DistributedModel().solve(
        model, fleet, batch_size=dp * c["micro_batch"] * c["microbatches"], precision="fp16",
        tp_size=c["tp"], pp_size=c["pp"], microbatch_count=c["microbatches"], zero_stage=1,
        recompute="full", flash_attention=False,
        grad_accumulation_fusion=c["grad_accumulation_fusion"], pipeline_p2p=c["pipeline_p2p"],
        overlap=False,  # DeepSpeed's engine reduces gradients after the batch ([mtnlg])
        dropout=False,  # attention-dropout: 0, hidden-dropout: 0 (configs/20B.yml)
    )  # fmt: skip
    return res, fleet


def neox_logged_flops_per_token(params: float, seq_len: int, hidden: int, layers: int) -> float:
    """FLOPs per trained token as GPT-NeoX logged them when GPT-NeoX-20B was trained.

    GPT-NeoX's ``get_flops`` (``megatron/logging.py`` until September 2023) counted
    ``6·P`` for the weights (forward and backward, no recomputation, every parameter
    including both embeddings) plus ``60·s·h·l`` for attention, whatever the
    checkpointing; the paper's "117 teraFLOPS per GPU" is that count per second.

    Parameters
    ----------
    params : float
        Total parameters ``P`` (count), as ``get_total_params`` sums them over the
        model-parallel ranks.
    seq_len : int
        Sequence length ``s`` (tokens).
    hidden : int
        Hidden size ``h`` (elements).
    layers : int
        Transformer layers ``l`` (count).

    Returns
    -------
    float
        FLOPs per token (FLOP/token).

    References
    ----------
    EleutherAI/gpt-neox, ``megatron/logging.py`` at commit a42805b4 (12 April 2022),
    ``get_flops``: ``ff = model.total_params * 6``, ``attn = seq_length * hidden_size *
    num_layers * 60``, FLOP/s per GPU ``= train_batch_size * seq_length * (ff + attn) /
    (iter_time_s * world_size)``; replaced by Megatron's Eq. 3 in PR 1044 (September
    2023). Black et al. (2022), arXiv:2204.06745, Sec. 3.

    Examples
    --------
    >>> round(neox_logged_flops_per_token(20_556_201_984, 2048, 6144, 44) / 1e11, 4)
    1.5656
    """
    return 6.0 * params + 60.0 * seq_len * hidden * layers


def _neox() -> Case:
    c = load_data("training")["neox"]
    res, _ = neox_solve()
    model = _gpt(c["layers"], c["hidden"], c["heads"], c["vocab"], c["seq_len"],
                 tied_embeddings=False)  # fmt: skip
    per_token = neox_logged_flops_per_token(model.total_params, c["seq_len"], c["hidden"],
                                            c["layers"])  # fmt: skip
    got = res.si("tokens_per_second") / c["gpus"] * per_token / 1e12
    return prediction_case(
        c, group=_GROUP_OTHER, name=_run_name("neox", c),
        quantity="per-GPU FLOP rate (GPT-NeoX's logged count)", unit="TFLOP/s",
        published=c["tflops_per_gpu"], predicted=got, note=c["note"],
    )  # fmt: skip


def opt_solve() -> tuple[Any, Fleet]:
    """DistributedModel's result for OPT-175B's layout (Zhang et al. 2022; metaseq's
    ``opt_baselines.py``), and its fleet."""
    o = load_data("training")["opt"]
    fleet = _fleet(o["gpus"], _A100_FLEET)
    res = DistributedModel().solve(
        Models[o["catalog"]], fleet, batch_size=o["global_batch"], precision="fp16",
        tp_size=o["tp"], microbatch_count=1, zero_stage=o["zero_stage"], recompute="full",
        flash_attention=False, fsdp_flat_params=True,  # fairscale's flat parameters
    )  # fmt: skip
    return res, fleet


def _opt() -> Case:
    o = load_data("training")["opt"]
    res, fleet = opt_solve()
    return Case(
        group=_GROUP_OTHER, name=_run_name("opt", o),
        quantity="per-GPU FLOP rate (with recompute)", unit="TFLOP/s",
        published=float(o["tflops_per_gpu"]), predicted=_hardware_tflops(res, fleet, "fp16"),
        tolerance=o["tolerance"], basis="prediction", method="performance model",
        citation=o["citation"], url=o["url"], note=o.get("note", ""),
        assumptions=assumptions_of(o),
    )  # fmt: skip


_MOSAIC_GPU_NAMES = {"h100_80gb": "H100", "a100_80gb": "A100 80GB", "a100_40gb": "A100 40GB"}


def _mosaic_fleet(gpu: str, gpus: int) -> Fleet:
    if gpu == "h100_80gb":
        return _fleet(gpus, _H100_FLEET)
    if gpu == "a100_80gb":
        return _fleet(gpus, _A100_FLEET)
    # eight A100 40GB with NVLink 3 and 1,600 Gbps to the network, a DGX A100's shape
    base = Nodes.DGX_A100
    node = Node(**{**base.model_dump(), "name": "8 x A100 40GB, 1600 Gbps",
                   "accelerator": Hardware.A100_40GB,
                   "intra_fabric": base.intra_fabric})  # fmt: skip
    return Fleet(node=node, count=gpus // node.accelerators_per_node, fabric=Fabrics.IB_HDR)


def mosaic_solve(row: dict, **overrides: Any) -> tuple[Any, Fleet]:
    """DistributedModel's result for one row of MosaicML llm-foundry's MPT benchmark
    tables (eager PyTorch with FSDP FULL_SHARD), and its fleet.

    The row's own layout: every GPU one FSDP (ZeRO-3) rank, its micro-batch and gradient
    accumulation, full recomputation where the table says activation checkpointing,
    bf16 under autocast, PyTorch's separate gradient-accumulation kernel, FSDP's flat
    parameters (``fsdp_flat_params``: the gradients concatenated from the views and
    pre-divided every micro-batch), and the
    benchmark's Triton FlashAttention kernel priced as FlashAttention-1's generation, half
    FlashAttention-2's rate (``attention_kernel="flash1"``; ``[mosaic]`` of the training
    data file), without dropout (the Triton kernel has none).

    Parameters
    ----------
    row : dict
        A row of ``records("training", "mosaic")``.
    **overrides
        Keyword arguments of :meth:`DistributedModel.solve` to change (a what-if).

    Returns
    -------
    tuple
        The DistributedResult and the fleet it ran on.
    """
    c = load_data("training")["mosaic"]
    fleet = _mosaic_fleet(row["gpu"], row["gpus"])
    model = _gpt(row["layers"], row["hidden"], row["heads"], c["vocab"], row["seq_len"])
    kw: dict[str, Any] = dict(
        batch_size=row["global_batch"], precision=c["precision"], seq_len=row["seq_len"],
        microbatch_count=row["grad_accum"], zero_stage=3,
        recompute="full" if row["act_ckpt"] else "none", flash_attention=True,
        grad_accumulation_fusion=False, grad_dtype=c["grad_dtype"],
        attention_kernel=c["attention_kernel"], fsdp_flat_params=True,
        dropout=c["dropout"],
    )  # fmt: skip
    res = DistributedModel().solve(model, fleet, **{**kw, **overrides})
    return res, fleet


def _torchtitan_fleet(section: dict) -> Fleet:
    """Eight-GPU A100 80GB nodes on NVSwitch with the network ``section`` names (AWS
    p4de: 400 Gbit/s of EFA per node, one eighth of it per GPU)."""
    source = {"kind": "datasheet", "reference": section["network_source"], "url": None,
              "note": None}  # fmt: skip
    latency = {"kind": "estimate", "reference": "EFA's SRD transport above an InfiniBand "
               "NIC's few microseconds (assumed)", "url": None, "note": None}  # fmt: skip
    fabric = Fabric(**{**Fabrics.ROCE_100G.model_dump(), "name": "EFA_P4DE",
                       "display_name": "AWS EFA, 400 Gbit/s per 8-GPU node",
                       "bandwidth": section["network_bandwidth"], "link_rate": None,
                       "latency": section["network_latency"],
                       "provenance": {"default": source, "latency": latency}})  # fmt: skip
    return Fleet(node=Nodes.DGX_A100, count=section["gpus"] // 8, fabric=fabric)


def torchtitan_solve(row: dict, **overrides: Any) -> tuple[Any, Fleet]:
    """DistributedModel's result for one row of torchtitan's 64-A100 table (PyTorch
    FSDP2 on eager PyTorch), and its fleet.

    Every GPU one FSDP2 rank (ZeRO-3, per-parameter sharding: ``fsdp_per_parameter``),
    the row's local batch as one micro-batch, bf16 with fp32 gradient reduction, PyTorch's
    gradient accumulation (no fused weight-gradient GEMM), FlashAttention-2 through
    ``scaled_dot_product_attention``, and the row's element-wise stack (``"eager"``, or
    ``"eager_fused_norm"`` with the Triton RMSNorm); ``[torchtitan]`` of the training data
    file states the sources.

    Parameters
    ----------
    row : dict
        A row of ``records("training", "torchtitan")``.
    **overrides
        Keyword arguments of :meth:`DistributedModel.solve` to change (a what-if).

    Returns
    -------
    tuple
        The DistributedResult and the fleet it ran on.
    """
    c = load_data("training")["torchtitan"]
    fleet = _torchtitan_fleet(c)
    kw: dict[str, Any] = dict(
        batch_size=c["gpus"] * row["local_batch"], precision=c["precision"],
        seq_len=row["seq_len"], microbatch_count=1, zero_stage=3,
        recompute=row["recompute"], grad_accumulation_fusion=False,
        grad_dtype=c["grad_dtype"], attention_kernel=c["attention_kernel"],
        elementwise_kernels=row["elementwise_kernels"], fsdp_per_parameter=True,
        dropout=c["dropout"],
    )  # fmt: skip
    res = DistributedModel().solve(Models[row["model"]], fleet, **{**kw, **overrides})
    return res, fleet


def _torchtitan_name(row: dict) -> str:
    ckpt = ", full act. checkpointing" if row["recompute"] == "full" else ""
    return (f"{row['model'].replace('_', ' ')} on 64 A100 80GB, seq {row['seq_len']}, "
            f"local batch {row['local_batch']}{ckpt} (torchtitan FSDP2, eager)")  # fmt: skip


def _torchtitan() -> list[Case]:
    c = load_data("training")["torchtitan"]
    out = []
    for row in records("training", "torchtitan"):
        res, fleet = torchtitan_solve(row)
        out.append(
            prediction_case(
                c, group=_GROUP_OTHER, name=_torchtitan_name(row),
                quantity="tokens/s per GPU", unit="token/s",
                published=row["tokens_per_s_per_gpu"],
                predicted=res.si("tokens_per_second") / fleet.total_accelerators,
            )
        )  # fmt: skip
    return out


_FA2_VOCAB = 50264  # GPT-2's 50257 padded to a multiple of 8 (pad_vocab_size_multiple)
_FA2_FLEET = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)  # one node of 8


def flashattention2_solve(row: dict, **overrides: Any) -> tuple[Any, TransformerWorkload]:
    """DistributedModel's result for one row of FlashAttention-2's end-to-end table (Dao
    2023, Table 1: GPT-style models on one node of 8 A100 80GB), and the model.

    The training code's own configuration (``[flashattention2]`` of the training data
    file): GPT-2-style blocks with learned positions and tied embeddings, fused kernels, no
    recomputation, DDP with ZeRO-1 over the 8 GPUs, fp32 parameters and gradients under
    bf16 autocast, gradient accumulation by autograd, dropout 0.1, and the row's attention
    kernel generation.

    Parameters
    ----------
    row : dict
        A row of ``records("training", "flashattention2")``.
    **overrides
        Keyword arguments of :meth:`DistributedModel.solve` to change (a what-if).

    Returns
    -------
    tuple
        The DistributedResult and the TransformerWorkload.
    """
    c = load_data("training")["flashattention2"]
    model = _gpt(row["layers"], row["hidden"], row["heads"], _FA2_VOCAB, row["seq_len"],
                 position_embedding="learned", tied_embeddings=True)  # fmt: skip
    gpus = _FA2_FLEET.total_accelerators
    kw: dict[str, Any] = dict(
        batch_size=row["global_batch"], precision="bf16", seq_len=row["seq_len"],
        microbatch_count=row["global_batch"] // (gpus * row["micro_batch"]), zero_stage=1,
        recompute="none", grad_accumulation_fusion=False, grad_dtype="fp32",
        attention_kernel=row["attention_kernel"], dropout=c["dropout"],
    )  # fmt: skip
    return DistributedModel().solve(model, _FA2_FLEET, **{**kw, **overrides}), model


def _flashattention2() -> list[Case]:
    c = load_data("training")["flashattention2"]
    kernels = {"flash2": "FlashAttention-2", "flash1": "FlashAttention"}
    out = []
    for row in records("training", "flashattention2"):
        res, model = flashattention2_solve(row)
        # the paper's count per token: 6N + 12 l h s (Sec. 4.2)
        per_token = 6.0 * model.total_params + 12.0 * row["layers"] * row["hidden"] * row["seq_len"]
        tflops = res.si("tokens_per_second") / _FA2_FLEET.total_accelerators * per_token / 1e12
        name = (f"{row['model']} on 8 A100 80GB, seq {row['seq_len']} "
                f"({kernels[row['attention_kernel']]}; Dao 2023, Table 1)")  # fmt: skip
        out.append(
            prediction_case(
                c, group=_GROUP_OTHER, name=name,
                quantity="model FLOP rate per GPU (6N + 12 l h s per token)", unit="TFLOP/s",
                published=row["tflops_per_gpu"], predicted=tflops,
            )
        )  # fmt: skip
    return out


def _mosaic_key(row: dict) -> str:
    return f"{row['model']}/{row['gpu']}/{row['gpus']}/{row['seq_len']}"


def _mosaic() -> list[Case]:
    c = load_data("training")["mosaic"]
    out = []
    for row in records("training", "mosaic"):
        res, _ = mosaic_solve(row)
        got = res.si("tokens_per_second")
        key = _mosaic_key(row)
        issue = c.get("open_issues", {}).get(key, "")
        off = abs(got / row["tokens_per_s"] - 1) > 0.10
        note = (c.get("notes", {}).get(key) or c["note_if_off"]) if off else ""
        out.append(
            prediction_case(
                c, group=_GROUP_OTHER, name=_mosaic_name(row), quantity="tokens/s", unit="token/s",
                published=row["tokens_per_s"], predicted=got, note=issue or note,
                open_issue=issue,
            )
        )  # fmt: skip
    return out


def other_run_cases() -> list[Case]:
    """Narayanan Table 1, MT-NLG 530B, Llama 3 405B, Megatron-Bridge's Llama 3 FP8 runs
    on H100 and B200 (25.11, and later releases' rows the model was not built against),
    BLOOM 176B, GPT-NeoX-20B, OPT-175B, MosaicML's MPT benchmarks (FSDP), torchtitan's
    64-A100 table (FSDP2, eager PyTorch) and FlashAttention-2's end-to-end GPT runs; the
    runs their publisher reports as misconfigured come last, in a group of their own."""
    runs = [*_narayanan(), *_mtnlg(), *_llama3(), *_bridge(), *_bridge("bridge_archive"),
            *_bridge("bridge_moe"), _bridge_moe_guide(),
            _bloom(), _neox(), _opt(), *_mosaic(), *_torchtitan(),
            *_flashattention2()]  # fmt: skip
    # runs their publisher reports as misconfigured last, as the group of their own they are
    return sorted(runs, key=lambda c: bool(c.publisher_reports_misconfigured))
