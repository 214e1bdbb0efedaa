"""Data and figures of the lab chapter "The Parallelism Paradox".

Every number the lab shows is computed here with mlsys solvers; the chapter hands the
results to Observable JS (``ojs_define``) for the interactive HTML page and draws the
same data with matplotlib for the static (PDF) version. Nothing here imports matplotlib
at module level: the ``*_figure`` functions import it when called.

The four tracks
---------------
The reader follows one team; every grid is computed for each track.

``cloud`` — a cloud LLM team trains a Llama-3-70B-class model (``Models.Llama3_70B``) on
    DGX H100 nodes. Layout within a replica: TP = 8 inside a node, PP = 4 across nodes,
    ZeRO-1, selective recomputation, sequence parallelism (the shape Megatron-LM uses for
    70B-class models; Narayanan et al. 2021, Korthikanti et al. 2022). Global batch 1,024
    sequences of 8,192 tokens = 8.4 M tokens (Llama 3 405B's batch grew from 4 M to
    16 M tokens during pre-training; Dubey et al. 2024, Sec. 3.4.1). Its own link: InfiniBand NDR.
``fleet`` — a fleet-learning team trains a perception backbone on logs of 10,000 cars.
    Model: a ViT-S/16-class encoder (12 layers, width 384, 6 heads, 196 patches + 1
    class token; about 22 M parameters, the size of DeiT-S, Touvron et al. 2021), the
    patch projection (16·16·3 = 768 inputs) modelled as a 768-entry embedding. Device:
    the catalog's Jetson AGX Orin (the automotive DRIVE Orin is the same SoC family),
    fp16. Four frames per car per step (a small on-device batch); global batch 40,000.
    Link: LTE cellular uplink (``Fabrics.CELLULAR_LTE``).
``glasses`` — a federated team trains across 1,000 AR glasses on battery. Model: a
    ~5 M-parameter transformer (6 layers, width 256, 4 heads, 64 tokens of 8×8×3
    patches) — the scale of an eye- or hand-tracking network. Device:
    :data:`GLASSES_SOC`, derived from the Jetson AGX Orin at a 3 W budget (below). Eight
    samples per device per step. Link: Wi-Fi (``Fabrics.WIFI``).
``hearables`` — 100 hearables share a noise model over Bluetooth LE. Device: the
    catalog's Cortex-M7 microcontroller (1 MB of SRAM). Training with Adam in fp32 holds
    16 bytes per parameter (weights, gradients, two moments), so the model must stay
    well under 65 k parameters to fit with its activations: a ~29 k-parameter
    transformer (2 layers, width 32, 2 heads, 32 frames of 64 mel bins) — smaller than
    RNNoise (Valin 2018), a recurrent noise suppressor of under 100 k weights. Four
    clips per device per step, accumulated one clip at a time: a four-clip micro-batch's
    activations overflow the 1 MB. Link: ``Fabrics.BLE``.

Conventions
-----------
* Every device has its link to itself: a car its own LTE uplink, a pair of glasses its own
  Wi-Fi access point, an earbud its own BLE connection (no shared medium; sharing would
  divide the bandwidth and move every wall closer). Gradients are reduced with the
  solver's all-reduce over those links; a real Bluetooth star through one phone would
  funnel every update through a single radio and be slower still.
* A *sample* is one sequence (LLM), one frame (cars), one crop (glasses), one clip
  (hearables): samples/s = tokens/s ÷ sequence length.
* Pipeline schedules count a forward pass as one time slot and a backward pass as two
  (backward ≈ 2 × forward FLOPs). With equal per-stage work the idle share of GPipe and
  1F1B is then ``3(p − 1)/(3(m + p − 1)) = (p − 1)/(m + p − 1)``, the share-of-total
  convention of :func:`mlsys.core.formulas.pipeline.pipeline_bubble_fraction`.
* Ranks are ordered ``tp → dp → pp`` (Megatron-Core, as in
  :class:`~mlsys.core.solvers.distributed.DistributedModel`). A rack holds
  :data:`NODES_PER_RACK` DGX H100 nodes and a pod (NVIDIA's "scalable unit")
  :data:`NODES_PER_POD`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from mlsys.core.catalog import Fabrics, Hardware, Models, Nodes
from mlsys.core.formulas.pipeline import pipeline_bubble_fraction
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.economics import EconomicsModel
from mlsys.core.solvers.memory import MemoryModel
from mlsys.core.solvers.reliability import ReliabilityModel
from mlsys.core.solvers.scaling import scaling_curve
from mlsys.core.solvers.search import ParallelismSearch
from mlsys.core.solvers.synchronization import SynchronizationModel
from mlsys.core.types import Accelerator, Fleet, Node, Provenance, TransformerWorkload

__all__ = [
    "GLASSES_SOC",
    "NODES_PER_RACK",
    "NODES_PER_POD",
    "WALL_THRESHOLD",
    "BUBBLE_TARGET",
    "STRAGGLER_SLOWDOWN",
    "STRAGGLER_FRACTIONS",
    "Track",
    "TRACKS",
    "PUZZLE_NODES",
    "PUZZLE_BATCH",
    "STAKEHOLDER_NODES",
    "STAKEHOLDER_SLOW_FRACTION",
    "VIT_S",
    "GAZE",
    "NOISE",
    "track",
    "scaling_data",
    "memory_grid",
    "memory_at",
    "bubble_table",
    "pipeline_schedule",
    "schedule_idle_fraction",
    "layout_map",
    "puzzle_challenge",
    "sync_grid",
    "checkpoint_cost",
    "stakeholder_comparison",
    "ojs_payload",
    "payload_json_bytes",
    "scaling_lab_figure",
    "memory_heatmap_figure",
    "schedule_figure",
    "layout_map_figure",
    "sync_figure",
]

WALL_THRESHOLD = 0.5
"""Marginal speed-up below which adding devices has hit diminishing returns."""

BUBBLE_TARGET = 0.10
"""The puzzle's bubble budget: at most 10 % of the step idle."""

NODES_PER_RACK = 4
"""DGX H100 nodes per rack: four 10.2 kW systems per ~40 kW rack, as in NVIDIA's DGX
SuperPOD reference architecture for DGX H100 (an estimate of a typical deployment)."""

NODES_PER_POD = 32
"""DGX H100 nodes per pod: one DGX SuperPOD "scalable unit" of 32 nodes (256 GPUs) under
one tier of leaf switches (NVIDIA DGX SuperPOD reference architecture)."""

STRAGGLER_SLOWDOWN = 2.0
"""A straggling worker-step takes twice as long: the two-point example of Dean & Barroso
(2013), "The Tail at Scale" (an illustration, not a measurement of any fleet). A worker
is one data-parallel replica: 32 GPUs in the cloud track, one device in the others."""

STRAGGLER_FRACTIONS: tuple[float, ...] = tuple(round(0.005 * i, 3) for i in range(21))
"""Straggler-intensity slider: 0 to 10 % of worker-steps slow, in steps of 0.5 %."""

GLASSES_SOC = Accelerator(
    name="AR_GLASSES_SOC",
    display_name="AR-glasses SoC (derived: Jetson AGX Orin at 3 W)",
    vendor="derived",
    kind="edge",
    peak_flops={
        "fp32": f"{Hardware.JETSON_ORIN.peak_flops_s('fp32') * 3.0 / 60.0} FLOP/s",
        "fp16": f"{Hardware.JETSON_ORIN.peak_flops_s('fp16') * 3.0 / 60.0} FLOP/s",
    },
    memory_capacity="4 GB",
    memory_bandwidth="51.2 GB/s",
    tdp="3 W",
    provenance={
        "default": Provenance(
            kind="derived",
            reference=(
                "Jetson AGX Orin catalog entry scaled to a 3 W sustained budget at the "
                "same FLOP per joule (60 W -> 3 W: 1/20 of its peaks)"
            ),
            note=(
                "A head-worn device dissipates a few watts before it is uncomfortable; 3 W "
                "is an estimate. Memory: 4 GB of 64-bit LPDDR5 at 6,400 MT/s "
                "(8 B x 6.4 GT/s = 51.2 GB/s, the JEDEC LPDDR5 rate)."
            ),
        )
    },
)
"""A derived glasses SoC: no catalog entry describes one, so the lab scales the catalog's
Jetson AGX Orin (60 W) to a 3 W battery and thermal budget at equal energy efficiency."""


def _edge_node(name: str, accelerator: Accelerator) -> Node:
    # One accelerator per device: every collective rides the scale-out (wireless) link;
    # the intra-node fabric is never used.
    return Node(
        name=name,
        display_name=accelerator.label,
        accelerator=accelerator,
        accelerators_per_node=1,
        intra_fabric=Fabrics.PCIE4,
    )


@dataclass(frozen=True)
class Track:
    """One of the lab's four teams: its model, devices, link and fleet sizes.

    Attributes
    ----------
    key : str
        Short name (``"cloud"``, ``"fleet"``, ``"glasses"``, ``"hearables"``).
    title : str
        Name shown in the radio button.
    model : TransformerWorkload
        The network trained.
    node : Node
        One node (a DGX, or one device).
    own_fabric : str
        Catalog key of the track's own scale-out link.
    nodes : tuple of int
        Fleet sizes (in nodes) of the scaling curve, increasing; the last is the fleet.
    batch_size : int
        Global batch in samples (sequences).
    precision : str
        Training precision.
    microbatch_size : int
        Samples per micro-batch.
    layout : dict
        Within-replica layout passed to ``scaling_curve`` / ``DistributedModel``.
    sample : str
        What one sample is.
    """

    key: str
    title: str
    model: TransformerWorkload
    node: Node
    own_fabric: str
    nodes: tuple[int, ...]
    batch_size: int
    precision: str
    microbatch_size: int = 1
    layout: dict[str, Any] = field(default_factory=dict)
    sample: str = "sample"

    @property
    def fabrics(self) -> tuple[str, ...]:
        """The links the Part 1 toggle offers: 10 GbE, InfiniBand NDR and the track's own."""
        base = ("ETH_10G", "IB_NDR")
        return base if self.own_fabric in base else (*base, self.own_fabric)

    @property
    def devices(self) -> int:
        """Accelerators in the whole fleet."""
        return self.nodes[-1] * self.node.accelerators_per_node


VIT_S = TransformerWorkload(
    name="ViT-S/16-class perception encoder",
    layers=12,
    hidden=384,
    heads=6,
    ffn_hidden=1536,
    vocab=768,
    seq_len=197,
    encoder_only=True,
)
GAZE = TransformerWorkload(
    name="~5M-parameter tracking transformer",
    layers=6,
    hidden=256,
    heads=4,
    ffn_hidden=1024,
    vocab=192,
    seq_len=64,
    encoder_only=True,
)
NOISE = TransformerWorkload(
    name="~29k-parameter noise model",
    layers=2,
    hidden=32,
    heads=2,
    ffn_hidden=128,
    vocab=64,
    seq_len=32,
    encoder_only=True,
)

_CLOUD_LAYOUT = {
    "tp_size": 8,
    "pp_size": 4,
    "zero_stage": 1,
    "recompute": "selective",
    "sequence_parallel": True,
}

TRACKS: dict[str, Track] = {
    "cloud": Track(
        key="cloud",
        title="Cloud LLM (Llama-3-70B-class, DGX H100)",
        model=Models.Llama3_70B,
        node=Nodes.DGX_H100,
        own_fabric="IB_NDR",
        nodes=(4, 8, 16, 32, 64, 128, 256, 512),
        batch_size=1024,
        precision="bf16",
        layout=_CLOUD_LAYOUT,
        sample="sequence of 8,192 tokens",
    ),
    "fleet": Track(
        key="fleet",
        title="Fleet learning (10,000 cars, LTE)",
        model=VIT_S,
        node=_edge_node("car", Hardware.JETSON_ORIN),
        own_fabric="CELLULAR_LTE",
        nodes=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000),
        batch_size=40_000,
        precision="fp16",
        microbatch_size=4,
        sample="camera frame",
    ),
    "glasses": Track(
        key="glasses",
        title="Federated AR glasses (1,000 devices, Wi-Fi)",
        model=GAZE,
        node=_edge_node("glasses", GLASSES_SOC),
        own_fabric="WIFI",
        nodes=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
        batch_size=8_000,
        precision="fp16",
        microbatch_size=8,
        sample="eye-camera crop",
    ),
    "hearables": Track(
        key="hearables",
        title="Hearables (100 earbuds, Bluetooth LE)",
        model=NOISE,
        node=_edge_node("hearable", Hardware.CORTEX_M7),
        own_fabric="BLE",
        nodes=(1, 2, 5, 10, 20, 50, 100),
        batch_size=400,
        precision="fp32",
        microbatch_size=1,
        sample="audio clip",
    ),
}
"""The four tracks, by key."""


def track(key: str | Track) -> Track:
    """The :class:`Track` named ``key`` (or ``key`` itself).

    Parameters
    ----------
    key : str or Track
        ``"cloud"``, ``"fleet"``, ``"glasses"`` or ``"hearables"``.

    Returns
    -------
    Track
    """
    if isinstance(key, Track):
        return key
    try:
        return TRACKS[key]
    except KeyError:
        from mlsys.core.errors import ParameterError

        raise ParameterError("track", key, "one of " + ", ".join(TRACKS)) from None


def _clean(values: Any, digits: int = 4) -> list[Any]:
    """Floats rounded to ``digits`` significant figures; NaN/inf become None (JSON null)."""
    out: list[Any] = []
    for v in np.asarray(values, dtype=float).ravel().tolist():
        out.append(float(f"{v:.{digits}g}") if math.isfinite(v) else None)
    return out


# -- Part 1: the communication wall ---------------------------------------------------------
@cache
def scaling_data(key: str) -> dict[str, Any]:
    """Strong-scaling curves of a track on each of its links (:func:`scaling_curve`).

    Parameters
    ----------
    key : str
        Track key.

    Returns
    -------
    dict
        ``{"devices": [...], "fabrics": {fabric_key: {...}}}``; per fabric:
        ``label``, ``samples_per_s`` (samples/s per fleet size, None where infeasible),
        ``ideal`` (linear scaling from the smallest fleet), ``efficiency`` (throughput per
        device over the smallest fleet's), ``marginal`` (marginal speed-up of each step
        up; None for the first), ``wall`` (devices at the first marginal speed-up below
        :data:`WALL_THRESHOLD`, or None) and ``peak_devices`` (fleet size of the highest
        throughput).
    """
    t = track(key)
    seq = float(t.model.seq_len)
    out: dict[str, Any] = {"fabrics": {}}
    for fab in t.fabrics:
        res = scaling_curve(
            t.model, t.node, Fabrics[fab], t.nodes, t.batch_size, precision=t.precision,
            microbatch_size=t.microbatch_size, threshold=WALL_THRESHOLD, **t.layout,
        )  # fmt: skip
        samples = np.asarray(res.si("tokens_per_second"), dtype=float) / seq
        devices = np.asarray(res.accelerators, dtype=float)
        ideal = samples[0] * devices / devices[0]
        out["devices"] = [int(d) for d in devices]
        out["fabrics"][fab] = {
            "label": Fabrics[fab].label,
            "samples_per_s": samples.tolist(),
            "ideal": ideal.tolist(),
            "efficiency": np.asarray(res.scaling_efficiency, dtype=float).tolist(),
            "marginal": np.asarray(res.marginal_speedup, dtype=float).tolist(),
            "wall": None if res.communication_wall is None else int(res.communication_wall),
            "peak_devices": int(devices[int(np.nanargmax(samples))]),
        }
    return out


# -- Part 2: the parallelism puzzle -------------------------------------------------------------
def _pow2_upto(n: int) -> list[int]:
    return [2**i for i in range(int(math.log2(n)) + 1)]


def _puzzle_axes(t: Track) -> dict[str, list[int]]:
    heads, layers = t.model.heads, t.model.layers
    tps = [d for d in range(1, min(heads, 32) + 1) if heads % d == 0 and d in _pow2_upto(32)]
    pps = [p for p in _pow2_upto(64) if p <= layers]
    return {"tp": tps, "pp": pps, "dp": _pow2_upto(512), "m": _pow2_upto(512)}


@cache
def memory_grid(key: str) -> dict[str, Any]:
    """Memory per device over (DP, TP, PP, m) from :class:`MemoryModel`.

    One sequence per micro-batch, so the global batch is ``dp · m`` samples; Adam, the
    track's precision, ZeRO-1 over the data-parallel group, selective recomputation and
    sequence parallelism (with TP > 1) — the settings of the cloud track's layout.

    Parameters
    ----------
    key : str
        Track key.

    Returns
    -------
    dict
        ``tp``, ``pp``, ``dp``, ``m`` (the axes); ``gb`` — total memory per device in GB
        (10⁹ bytes), flattened in C order over ``(dp, m, tp, pp)``; ``fits`` — the
        same shape, 1 where MemoryModel calls the layout feasible, else 0;
        ``capacity_gb``; ``device``.
    """
    t = track(key)
    axes = _puzzle_axes(t)
    acc = t.node.accelerator
    solver = MemoryModel()
    gb: list[float] = []
    fits: list[int] = []
    for dp in axes["dp"]:
        for m in axes["m"]:
            for tp in axes["tp"]:
                for pp in axes["pp"]:
                    res = solver.solve(
                        t.model, acc, batch_size=dp * m, precision=t.precision, dp_size=dp,
                        tp_size=tp, pp_size=pp, microbatch_count=m, zero_stage=1,
                        recompute="selective", sequence_parallel=tp > 1,
                    )  # fmt: skip
                    gb.append(res.si("total") / 1e9)
                    fits.append(1 if res.feasible else 0)
    return {
        **axes,
        "gb": _clean(gb, 4),
        "fits": fits,
        "capacity_gb": acc.memory_bytes / 1e9,
        "device": acc.label,
    }


def memory_at(grid: dict[str, Any], dp: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The (TP, PP) slice of :func:`memory_grid` at one DP and micro-batch count.

    Parameters
    ----------
    grid : dict
        A :func:`memory_grid` result.
    dp, m : int
        Data-parallel degree and micro-batches (values on the grid's axes).

    Returns
    -------
    (ndarray, ndarray)
        GB per device and feasibility, each of shape ``(len(tp), len(pp))``.
    """
    shape = (len(grid["dp"]), len(grid["m"]), len(grid["tp"]), len(grid["pp"]))
    i, j = grid["dp"].index(dp), grid["m"].index(m)
    gb = np.asarray([np.nan if v is None else v for v in grid["gb"]], dtype=float)
    return gb.reshape(shape)[i, j], np.asarray(grid["fits"], dtype=bool).reshape(shape)[i, j]


def bubble_table(pp_values: Any, m_values: Any) -> list[list[float]]:
    """Bubble share of the step for each (p, m): ``(p − 1)/(m + p − 1)``.

    From :func:`mlsys.core.formulas.pipeline.pipeline_bubble_fraction` (1F1B, GPipe).

    Parameters
    ----------
    pp_values, m_values : sequence of int
        Pipeline stages and micro-batch counts.

    Returns
    -------
    list of list of float
        ``table[i][j]`` for ``pp_values[i]``, ``m_values[j]``.
    """
    p = np.asarray(pp_values, dtype=float)[:, None]
    m = np.asarray(m_values, dtype=float)[None, :]
    return np.asarray(pipeline_bubble_fraction(p, m), dtype=float).tolist()


def pipeline_schedule(pp_size: int, microbatch_count: int, schedule: str = "1f1b") -> list[list]:
    """The time-slot grid of a pipeline schedule: which stage runs what, when.

    A forward pass takes one slot and a backward pass two (backward ≈ 2 × forward
    FLOPs); every stage has the same work. Each stage runs its operations in schedule
    order, each as soon as its input is ready: ``F(s, i)`` after ``F(s − 1, i)``,
    ``B(s, i)`` after ``B(s + 1, i)`` (the last stage's after its own ``F``).
    1F1B (PipeDream-flush, Narayanan et al. 2019/2021): stage ``s`` runs
    ``min(p − s − 1, m)`` warm-up forwards, then alternates one forward and one
    backward, then drains its backwards. GPipe (Huang et al. 2019): all forwards, then
    all backwards. Both finish in ``3(m + p − 1)`` slots, so the idle share is
    ``(p − 1)/(m + p − 1)``.

    Parameters
    ----------
    pp_size : int
        Stages ``p``.
    microbatch_count : int
        Micro-batches ``m``.
    schedule : {"1f1b", "gpipe"}
        Schedule.

    Returns
    -------
    list of list
        ``grid[stage][slot]`` is ``(microbatch, "F")``, ``(microbatch, "B")`` or None
        (idle); micro-batches are numbered from 0.
    """
    p, m = int(pp_size), int(microbatch_count)
    if p < 1 or m < 1:
        from mlsys.core.errors import ParameterError

        raise ParameterError("pp_size, microbatch_count", (pp_size, microbatch_count), ">= 1")
    kind = str(schedule).lower()
    orders: list[list[tuple[str, int]]] = []
    for s in range(p):
        if kind == "gpipe":
            order = [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
        elif kind == "1f1b":
            warm = min(p - s - 1, m)
            order = [("F", i) for i in range(warm)]
            f_next, b_next = warm, 0
            while f_next < m:
                order += [("F", f_next), ("B", b_next)]
                f_next += 1
                b_next += 1
            order += [("B", i) for i in range(b_next, m)]
        else:
            from mlsys.core.errors import ParameterError

            raise ParameterError("schedule", schedule, "'1f1b' or 'gpipe'")
        orders.append(order)
    dur = {"F": 1, "B": 2}
    done: dict[tuple[str, int, int], int] = {}
    free = [0] * p
    pos = [0] * p
    ops: list[tuple[int, int, str, int]] = []  # (stage, start, kind, microbatch)
    remaining = 2 * p * m
    while remaining:
        progressed = False
        for s in range(p):
            while pos[s] < len(orders[s]):
                k, i = orders[s][pos[s]]
                if k == "F":
                    dep = done.get(("F", s - 1, i)) if s > 0 else 0
                else:
                    dep = done.get(("B", s + 1, i)) if s < p - 1 else done.get(("F", s, i))
                if dep is None:
                    break
                start = max(free[s], dep)
                free[s] = start + dur[k]
                done[(k, s, i)] = free[s]
                ops.append((s, start, k, i))
                pos[s] += 1
                remaining -= 1
                progressed = True
        if not progressed:  # pragma: no cover - the orders above never deadlock
            raise RuntimeError("pipeline schedule deadlocked")
    span = max(free)
    grid: list[list[Any]] = [[None] * span for _ in range(p)]
    for s, start, k, i in ops:
        for slot in range(start, start + dur[k]):
            grid[s][slot] = (i, k)
    return grid


def schedule_idle_fraction(grid: list[list]) -> float:
    """Idle slots over all slots of a :func:`pipeline_schedule` grid.

    Parameters
    ----------
    grid : list of list
        ``grid[stage][slot]``.

    Returns
    -------
    float
        Fraction in [0, 1).
    """
    total = sum(len(row) for row in grid)
    idle = sum(1 for row in grid for cell in row if cell is None)
    return idle / total


def _schedule_ops(grid: list[list]) -> list[list[int]]:
    """Compact form for OJS: ``[stage, start slot, microbatch, 0 forward / 1 backward]``."""
    ops: list[list[int]] = []
    for s, row in enumerate(grid):
        prev = None
        for slot, cell in enumerate(row):
            # a backward pass fills two consecutive slots with the same cell
            if cell is not None and cell != prev:
                ops.append([s, slot, cell[0], 0 if cell[1] == "F" else 1])
            prev = cell
    return ops


def layout_map(
    dp_size: int,
    tp_size: int,
    pp_size: int,
    layers: int,
    batch_size: int,
    gpus_per_node: int = 8,
    nodes_per_rack: int = NODES_PER_RACK,
    nodes_per_pod: int = NODES_PER_POD,
) -> list[dict[str, int]]:
    """Where each (pipeline stage, data-parallel replica) block of a 3D layout lives.

    Ranks are ordered ``tp → dp → pp`` (Megatron-Core): the TP group of stage ``s`` of
    replica ``d`` is ranks ``tp·(d + dp·s)`` to ``tp·(d + dp·s) + tp − 1``. Layers are
    split evenly (the first ``L mod p`` stages take one extra); samples too.

    Parameters
    ----------
    dp_size, tp_size, pp_size : int
        Parallel degrees.
    layers : int
        Transformer layers of the model.
    batch_size : int
        Global batch in samples.
    gpus_per_node, nodes_per_rack, nodes_per_pod : int
        Physical packing.

    Returns
    -------
    list of dict
        One record per block: ``stage``, ``replica``, ``first_rank``, ``node``
        (of the first rank), ``nodes`` (nodes the TP group spans), ``rack``, ``pod``,
        ``layer_start``, ``layer_end`` (exclusive), ``sample_start``, ``sample_end``.
    """
    per_stage = [layers // pp_size + (1 if s < layers % pp_size else 0) for s in range(pp_size)]
    starts = np.concatenate(([0], np.cumsum(per_stage))).astype(int)
    per_rep = [
        batch_size // dp_size + (1 if d < batch_size % dp_size else 0) for d in range(dp_size)
    ]
    sstarts = np.concatenate(([0], np.cumsum(per_rep))).astype(int)
    out = []
    for s in range(pp_size):
        for d in range(dp_size):
            r0 = tp_size * (d + dp_size * s)
            node = r0 // gpus_per_node
            last = (r0 + tp_size - 1) // gpus_per_node
            out.append(
                {
                    "stage": s,
                    "replica": d,
                    "first_rank": r0,
                    "node": node,
                    "nodes": last - node + 1,
                    "rack": node // nodes_per_rack,
                    "pod": node // nodes_per_pod,
                    "layer_start": int(starts[s]),
                    "layer_end": int(starts[s + 1]),
                    "sample_start": int(sstarts[d]),
                    "sample_end": int(sstarts[d + 1]),
                }
            )
    return out


PUZZLE_NODES = 64
"""The puzzle's fleet: 64 DGX H100 nodes (512 GPUs)."""
PUZZLE_BATCH = 512
"""The puzzle's global batch: 512 sequences, one per micro-batch."""


@cache
def puzzle_challenge() -> dict[str, Any]:
    """Count the layouts that fit and keep the bubble under 10 % (:class:`ParallelismSearch`).

    The cloud track on :data:`PUZZLE_NODES` DGX H100 nodes over InfiniBand NDR, global
    batch :data:`PUZZLE_BATCH` sequences with one sequence per micro-batch (so
    ``m = batch / dp``), ZeRO-1, selective recomputation, sequence parallelism, no
    interleaving — the settings of :func:`memory_grid`. A layout *solves* the puzzle
    when ParallelismSearch finds it feasible and its bubble
    ``(p − 1)/(m + p − 1)`` is below :data:`BUBBLE_TARGET`; ``strict`` further asks
    MemoryModel (which adds a framework allowance) to agree.

    Returns
    -------
    dict
        ``gpus``, ``batch``, ``candidates`` (one-sequence micro-batch layouts
        enumerated), ``feasible`` (those that fit), ``solutions`` (feasible with
        the bubble under target), ``strict`` (solutions MemoryModel also fits),
        ``layouts`` (records ``dp, tp, pp, m, bubble, tokens_per_s, mfu, gb,
        memory_model_fits``, fastest first) and ``best`` (the fastest solution).
    """
    t = TRACKS["cloud"]
    grid = memory_grid("cloud")
    fleet = Fleet(node=t.node, count=PUZZLE_NODES, fabric=Fabrics.IB_NDR)
    res = ParallelismSearch().solve(
        t.model, fleet, batch_size=PUZZLE_BATCH, precision=t.precision,
        tp_sizes=grid["tp"], pp_sizes=grid["pp"], zero_stages=(1,),
        recompute=("selective",), sequence_parallel=(True, False), v_stages=(1,),
    )  # fmt: skip
    tb = res.table
    dp, tp, pp, m = (np.asarray(tb[k]) for k in ("dp", "tp", "pp", "microbatch_count"))
    # one row per (dp, tp, pp, m): sequence parallelism on when tp > 1, as in the grid
    sp = np.asarray(tb["sequence_parallel"], dtype=bool)
    one_seq = (dp * m == PUZZLE_BATCH) & (sp == (tp > 1))
    valid = one_seq & (np.asarray(tb["reason"]) != "heads not divisible by tp")
    feasible = valid & np.asarray(tb["feasible"], dtype=bool)
    bubble = np.asarray(pipeline_bubble_fraction(pp, m), dtype=float)
    solved = feasible & (bubble < BUBBLE_TARGET)
    layouts = []
    for i in np.flatnonzero(solved):
        _, fits = memory_at(grid, int(dp[i]), int(m[i]))
        fit = bool(fits[grid["tp"].index(int(tp[i])), grid["pp"].index(int(pp[i]))])
        layouts.append(
            {
                "dp": int(dp[i]),
                "tp": int(tp[i]),
                "pp": int(pp[i]),
                "m": int(m[i]),
                "bubble": float(bubble[i]),
                "tokens_per_s": float(tb["tokens_per_second"][i]),
                "mfu": float(tb["mfu"][i]),
                "gb": float(tb["memory_per_accelerator"][i]) / 1e9,
                "memory_model_fits": fit,
            }
        )
    layouts.sort(key=lambda r: -r["tokens_per_s"])
    return {
        "gpus": fleet.total_accelerators,
        "batch": PUZZLE_BATCH,
        "candidates": int(valid.sum()),
        "feasible": int(feasible.sum()),
        "solutions": len(layouts),
        "strict": sum(1 for r in layouts if r["memory_model_fits"]),
        "layouts": layouts,
        "best": layouts[0] if layouts else None,
    }


# -- Part 3: the synchronisation audit ----------------------------------------------------------
@cache
def _reference_step(key: str) -> dict[str, float]:
    """The track's full fleet on its own link: one DistributedModel step."""
    t = track(key)
    fleet = Fleet(node=t.node, count=t.nodes[-1], fabric=Fabrics[t.own_fabric])
    layout = dict(t.layout)
    n = fleet.total_accelerators
    replicas = n // (layout.get("tp_size", 1) * layout.get("pp_size", 1))
    m = t.batch_size // replicas // t.microbatch_size
    res = DistributedModel().solve(
        t.model, fleet, batch_size=t.batch_size, precision=t.precision, microbatch_count=m,
        **layout,
    )  # fmt: skip
    step = res.si("step_time")
    compute = res.si("compute_time")
    return {
        "replicas": float(replicas),
        "step_time": step,
        "compute_time": compute,
        "sync_time": step - compute,
        "samples_per_replica": t.batch_size / replicas,
        "feasible": float(res.feasible),
    }


@cache
def sync_grid(key: str) -> dict[str, Any]:
    """Synchronous vs asynchronous SGD over the straggler slider (SynchronizationModel).

    Workers are the track's data-parallel replicas at full fleet size on its own link;
    a straggler-free step computes for the DistributedModel compute time and
    synchronises for the rest of the step. A slow worker-step takes
    :data:`STRAGGLER_SLOWDOWN` times longer, with probability given by
    :data:`STRAGGLER_FRACTIONS`.

    Parameters
    ----------
    key : str
        Track key.

    Returns
    -------
    dict
        ``fractions``; ``sync`` and ``async`` samples/s per fraction;
        ``sync_staleness`` (0) and ``async_staleness`` (updates); ``waiting`` (share of
        a synchronous worker's compute spent waiting); ``workers``; ``ideal``
        (straggler-free, communication-free samples/s).
    """
    ref = _reference_step(key)
    solver = SynchronizationModel()
    sync, asyn, waiting = [], [], []
    res = None
    for q in STRAGGLER_FRACTIONS:
        res = solver.solve(
            int(ref["replicas"]), ref["compute_time"], batch_size=ref["samples_per_replica"],
            straggler="two-point", slow_fraction=q, slowdown=STRAGGLER_SLOWDOWN,
            sync_time=ref["sync_time"],
        )  # fmt: skip
        sync.append(res.si("sync_throughput"))
        asyn.append(res.si("async_throughput"))
        waiting.append(res.waiting_fraction)
    assert res is not None
    return {
        "fractions": list(STRAGGLER_FRACTIONS),
        "sync": _clean(sync, 5),
        "async": _clean(asyn, 5),
        "waiting": _clean(waiting, 4),
        "sync_staleness": 0.0,
        "async_staleness": float(res.async_staleness),
        "workers": int(ref["replicas"]),
        "ideal": ref["replicas"] * ref["samples_per_replica"] / ref["compute_time"],
    }


@cache
def checkpoint_cost(job_days: float = 30.0) -> dict[str, float]:
    """Checkpointing the cloud track's full fleet (:class:`ReliabilityModel`).

    Llama 3 failure rates per GPU (the model's default), a mixed-precision Adam
    checkpoint (14 bytes per parameter) written at 2 TB/s, Daly's optimum interval.

    Parameters
    ----------
    job_days : float
        Failure-free length of the run, in days.

    Returns
    -------
    dict
        ``gpus``, ``mtbf_h``, ``checkpoint_gb``, ``checkpoint_s``, ``storage_Bps`` (the
        write bandwidth assumed, B/s), ``interval_min``,
        ``goodput``, ``lost_fraction`` (1 − goodput).
    """
    t = TRACKS["cloud"]
    gpus = t.devices
    res = ReliabilityModel().solve(gpus, job_days * 86400.0, model=t.model)
    return {
        "gpus": gpus,
        "mtbf_h": res.si("fleet_mtbf") / 3600.0,
        "checkpoint_gb": res.si("checkpoint_bytes") / 1e9,
        "checkpoint_s": res.si("checkpoint_time"),
        "storage_Bps": res.si("checkpoint_bytes") / res.si("checkpoint_time"),
        "interval_min": res.si("checkpoint_interval") / 60.0,
        "goodput": float(res.goodput),
        "lost_fraction": 1.0 - float(res.goodput),
    }


STAKEHOLDER_NODES = 512
"""The stakeholder's fleet: 512 DGX H100 nodes (4,096 GPUs), the cloud track at full size."""
STAKEHOLDER_SLOW_FRACTION = 0.01
"""Straggler intensity of the stakeholder challenge: 1 % of worker-steps slow (2×)."""


@cache
def stakeholder_comparison(
    slow_fraction: float = STAKEHOLDER_SLOW_FRACTION, claim_usd_per_month: float = 1e6
) -> dict[str, Any]:
    """ "Wait-for-all synchronisation wastes $1M a month": ZeRO or asynchronous updates?

    The cloud track's fleet (:data:`STAKEHOLDER_NODES` DGX H100 over InfiniBand NDR,
    global batch 1,024 sequences at one sequence per micro-batch) is priced by
    :class:`EconomicsModel` (catalog node price, 10 % network, 5-year straight-line
    life, energy at the default price). Money follows throughput: a fix that raises
    samples/s by a factor ``g`` does the month's work in ``1/g`` of the time, saving
    ``(1 − 1/g)`` of the monthly cost.

    * **Waste of waiting**: synchronous SGD under stragglers against the same job with
      none (SynchronizationModel, two-point stragglers).
    * **ZeRO**: memory saved by sharding lets each micro-batch carry more sequences
      (DistributedModel: the largest micro-batch of 1, 2, 4 or 8 sequences that fits,
      ZeRO-0 against the best of ZeRO-1/2/3), at the same number of micro-batches; the
      straggler penalty stays.
    * **Asynchronous updates**: every replica runs at its own pace (SynchronizationModel's
      asynchronous throughput), paid for in staleness that may cost extra steps (not
      priced here).

    Parameters
    ----------
    slow_fraction : float
        Probability that a worker-step straggles.
    claim_usd_per_month : float
        The stakeholder's claim, in USD per month.

    Returns
    -------
    dict
        ``monthly_cost``, ``waste`` (USD per month lost to waiting), ``claim``,
        ``zero_saving``, ``async_saving`` (USD per month), ``zero_gain``,
        ``async_gain`` (throughput factors), ``zero_stage`` (the best stage),
        ``zero_microbatch`` and ``base_microbatch`` (sequences per micro-batch),
        ``winner`` (``"ZeRO"`` or ``"asynchronous updates"``), ``workers``,
        ``staleness``, ``gpus``.
    """
    t = TRACKS["cloud"]
    fleet = Fleet(node=t.node, count=STAKEHOLDER_NODES, fabric=Fabrics.IB_NDR)
    econ = EconomicsModel().solve(fleet)
    monthly = econ.si("annual_tco") / 12.0
    n = fleet.total_accelerators
    replicas = n // (t.layout["tp_size"] * t.layout["pp_size"])
    m = t.batch_size // replicas
    solver = DistributedModel()
    base = {k: v for k, v in t.layout.items() if k != "zero_stage"}

    def best_for(stages: tuple[int, ...]) -> tuple[float, Any, int, int]:
        best: tuple[float, Any, int, int] = (0.0, None, 0, 0)
        for z in stages:
            for b in (1, 2, 4, 8):
                res = solver.solve(
                    t.model, fleet, batch_size=b * replicas * m, precision=t.precision,
                    microbatch_count=m, zero_stage=z, **base,
                )  # fmt: skip
                if res.feasible and res.si("tokens_per_second") > best[0]:
                    best = (res.si("tokens_per_second"), res, z, b)
        return best

    tps0, res0, _, b0 = best_for((0,))
    tpsz, resz, zbest, bz = best_for((1, 2, 3))
    sync = SynchronizationModel()

    def stragglers(res: Any, q: float) -> Any:
        return sync.solve(
            replicas, res.si("compute_time"), batch_size=1, straggler="two-point",
            slow_fraction=q, slowdown=STRAGGLER_SLOWDOWN,
            sync_time=res.si("step_time") - res.si("compute_time"),
        )  # fmt: skip

    base_q = stragglers(res0, slow_fraction)
    base_clean = stragglers(res0, 0.0)
    zero_q = stragglers(resz, slow_fraction)
    # samples/s of each option: tokens per step over the step time under stragglers
    step_tokens0 = res0.si("tokens_per_second") * res0.si("step_time")
    step_tokensz = resz.si("tokens_per_second") * resz.si("step_time")
    sync_rate = step_tokens0 / base_q.si("sync_step_time")
    clean_rate = step_tokens0 / base_clean.si("sync_step_time")
    zero_rate = step_tokensz / zero_q.si("sync_step_time")
    async_rate = step_tokens0 / base_q.si("async_step_time")
    waste = monthly * (1.0 - sync_rate / clean_rate)
    zero_gain = zero_rate / sync_rate
    async_gain = async_rate / sync_rate
    zero_saving = monthly * (1.0 - 1.0 / zero_gain)
    async_saving = monthly * (1.0 - 1.0 / async_gain)
    return {
        "gpus": n,
        "workers": replicas,
        "monthly_cost": monthly,
        "claim": float(claim_usd_per_month),
        "waste": waste,
        "waiting_fraction": float(base_q.waiting_fraction),
        "zero_stage": zbest,
        "zero_microbatch": bz,
        "base_microbatch": b0,
        "zero_gain": zero_gain,
        "async_gain": async_gain,
        "zero_saving": zero_saving,
        "async_saving": async_saving,
        "winner": "ZeRO" if zero_saving > async_saving else "asynchronous updates",
        "staleness": float(base_q.async_staleness),
        "slow_fraction": float(slow_fraction),
        "base_tokens_per_s": tps0,
        "zero_tokens_per_s": tpsz,
    }


# -- the payload handed to Observable JS ----------------------------------------------------
@cache
def ojs_payload() -> dict[str, Any]:
    """Everything the lab's OJS cells read, as plain JSON-ready Python values.

    Returns
    -------
    dict
        ``tracks`` (key → title, sample, model label, parameters, device, links),
        ``scaling`` (key → :func:`scaling_data`), ``memory`` (key →
        :func:`memory_grid`), ``bubble`` (``pp``, ``m`` axes and table, from the cloud
        grid's axes), ``schedules`` (``"p,m"`` → compact 1F1B ops
        ``[stage, start, microbatch, 0 F / 1 B]``, and the slot count) for p ≤ 8, m ≤ 16,
        ``challenge`` (:func:`puzzle_challenge` without its long list beyond the
        solutions), ``sync`` (key → :func:`sync_grid`), ``layers`` (key → layer count),
        ``packing`` (GPUs per node, nodes per rack and pod).
    """
    out: dict[str, Any] = {"tracks": {}, "scaling": {}, "memory": {}, "sync": {}, "layers": {}}
    for key, t in TRACKS.items():
        out["tracks"][key] = {
            "title": t.title,
            "sample": t.sample,
            "model": t.model.label,
            "params": float(f"{t.model.total_params:.4g}"),
            "device": t.node.accelerator.label,
            "devices": t.devices,
            "own_fabric": t.own_fabric,
            "gpus_per_node": t.node.accelerators_per_node,
        }
        sd = scaling_data(key)
        out["scaling"][key] = {
            "devices": sd["devices"],
            "fabrics": {
                f: {
                    **{k: v for k, v in d.items() if k in ("label", "wall", "peak_devices")},
                    "samples_per_s": _clean(d["samples_per_s"]),
                    "ideal": _clean(d["ideal"]),
                    "marginal": _clean(d["marginal"], 3),
                }
                for f, d in sd["fabrics"].items()
            },
        }
        out["memory"][key] = memory_grid(key)
        out["sync"][key] = sync_grid(key)
        out["layers"][key] = t.model.layers
    cloud = memory_grid("cloud")
    out["bubble"] = {
        "pp": cloud["pp"],
        "m": cloud["m"],
        "table": [_clean(row, 4) for row in bubble_table(cloud["pp"], cloud["m"])],
    }
    schedules = {}
    for p in (1, 2, 4, 8):
        for m in (1, 2, 4, 8, 16):
            grid = pipeline_schedule(p, m)
            schedules[f"{p},{m}"] = {"slots": len(grid[0]), "ops": _schedule_ops(grid)}
    out["schedules"] = schedules
    ch = puzzle_challenge()
    out["challenge"] = {
        k: ch[k] for k in ("gpus", "batch", "candidates", "feasible", "solutions", "strict")
    }
    out["challenge"]["bubble_target"] = BUBBLE_TARGET
    out["challenge"]["layouts"] = [
        {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}
        for r in ch["layouts"]
    ]
    out["packing"] = {
        "gpus_per_node": TRACKS["cloud"].node.accelerators_per_node,
        "nodes_per_rack": NODES_PER_RACK,
        "nodes_per_pod": NODES_PER_POD,
    }
    return out


def payload_json_bytes() -> int:
    """Size of :func:`ojs_payload` as compact JSON, in bytes (what the page embeds).

    Returns
    -------
    int
        Bytes of UTF-8 JSON.
    """
    return len(json.dumps(ojs_payload(), separators=(",", ":")).encode())


# -- static figures (matplotlib, for PDF) -----------------------------------------------------
def _figure(width: float = 6.4, height: float = 4.0, ncols: int = 1) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, ncols)
    return fig, axes


def scaling_lab_figure(key: str = "cloud") -> Any:
    """Samples/s against devices on each of the track's links, with the ideal line.

    The first device count whose marginal speed-up falls below :data:`WALL_THRESHOLD`
    is circled.

    Parameters
    ----------
    key : str
        Track key.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; for each link a modelled line then its ideal (dashed) line.
    """
    sd = scaling_data(key)
    x = np.asarray(sd["devices"], dtype=float)
    fig, ax = _figure()
    for d in sd["fabrics"].values():
        y = np.asarray(d["samples_per_s"], dtype=float)
        (line,) = ax.plot(x, y, marker="o", ms=3, label=d["label"])
        ax.plot(x, d["ideal"], ls="--", lw=0.8, color=line.get_color())
        if d["wall"] is not None:
            i = sd["devices"].index(d["wall"])
            ax.plot([x[i]], [y[i]], "o", ms=11, mfc="none", mec=line.get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Devices")
    ax.set_ylabel(f"Samples/s (one {track(key).sample})")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small", title="dashed: ideal; circle: marginal < 0.5×")
    return fig


def memory_heatmap_figure(key: str = "cloud", dp: int = 16, m: int = 32) -> Any:
    """Memory per device over (TP, PP) at one DP and micro-batch count; X over the infeasible.

    Parameters
    ----------
    key : str
        Track key.
    dp, m : int
        Data-parallel degree and micro-batches.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes with the image (GB, rows TP, columns PP); cells MemoryModel calls
        infeasible carry an "X" text.
    """
    grid = memory_grid(key)
    gb, fits = memory_at(grid, dp, m)
    fig, ax = _figure(6.4, 3.6)
    from matplotlib.colors import LogNorm

    im = ax.imshow(gb, cmap="viridis", norm=LogNorm(), aspect="auto", origin="lower")
    for i in range(gb.shape[0]):
        for j in range(gb.shape[1]):
            if fits[i, j]:
                ax.text(j, i, f"{gb[i, j]:.3g}", ha="center", va="center", fontsize=7,
                        color="white")  # fmt: skip
            else:
                ax.text(j, i, "X", ha="center", va="center", fontsize=11,
                        fontweight="bold", color="red")  # fmt: skip
    ax.set_xticks(range(len(grid["pp"])), [str(v) for v in grid["pp"]])
    ax.set_yticks(range(len(grid["tp"])), [str(v) for v in grid["tp"]])
    ax.set_xlabel("Pipeline stages (PP)")
    ax.set_ylabel("Tensor-parallel size (TP)")
    ax.set_title(f"GB per device (limit {grid['capacity_gb']:.3g} GB; X: does not fit)",
                 fontsize="small")  # fmt: skip
    fig.colorbar(im, ax=ax, label="GB")
    return fig


def schedule_figure(pp_size: int = 4, microbatch_count: int = 8, schedule: str = "1f1b") -> Any:
    """A pipeline schedule as a Gantt chart: forward (light) and backward (dark) slots.

    Parameters
    ----------
    pp_size, microbatch_count : int
        ``p`` and ``m``.
    schedule : {"1f1b", "gpipe"}
        Schedule.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; one bar per operation (``broken_barh``), stage 0 on top.
    """
    grid = pipeline_schedule(pp_size, microbatch_count, schedule)
    fig, ax = _figure(6.4, 0.5 + 0.4 * pp_size)
    for op in _schedule_ops(grid):
        s, start, mb, kind = op
        width = 1 if kind == 0 else 2
        colour = "#9ecae1" if kind == 0 else "#3182bd"
        ax.broken_barh([(start, width)], (s - 0.4, 0.8), facecolors=colour, edgecolor="white")
        ax.text(start + width / 2, s, str(mb + 1), ha="center", va="center", fontsize=6)
    ax.set_ylim(pp_size - 0.5, -0.5)
    ax.set_xlim(0, len(grid[0]))
    ax.set_yticks(range(pp_size), [f"stage {s}" for s in range(pp_size)])
    idle = schedule_idle_fraction(grid)
    ax.set_xlabel(f"Time slot (forward 1, backward 2); idle share {100 * idle:.1f} %")
    return fig


def layout_map_figure(dp_size: int = 16, tp_size: int = 8, pp_size: int = 4) -> Any:
    """The cloud track's 3D layout: stages × replicas, coloured by pod, labelled by node.

    Parameters
    ----------
    dp_size, tp_size, pp_size : int
        Parallel degrees.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes with an RGBA image (rows stages, columns replicas): one colour per pod,
        alternate racks lighter; node labels when there are at most 128 blocks.
    """
    from matplotlib import colormaps

    t = TRACKS["cloud"]
    blocks = layout_map(dp_size, tp_size, pp_size, t.model.layers, PUZZLE_BATCH)
    palette = colormaps["tab10"]
    image = np.ones((pp_size, dp_size, 4))
    for b in blocks:
        rgba = list(palette(b["pod"] % 10))
        rgba[3] = 1.0 if b["rack"] % 2 == 0 else 0.55  # alternate racks lighter
        image[b["stage"], b["replica"]] = rgba
    fig, ax = _figure(6.4, 1.0 + 0.45 * pp_size)
    ax.imshow(image, aspect="auto")
    if dp_size * pp_size <= 128:
        for b in blocks:
            ax.text(b["replica"], b["stage"], f"n{b['node']}", ha="center", va="center",
                    fontsize=6)  # fmt: skip
    ticks = [f"layers {b['layer_start']}–{b['layer_end'] - 1}" for b in blocks[::dp_size]]
    ax.set_yticks(range(pp_size), ticks)
    ax.set_xlabel(f"Data-parallel replica (each a TP group of {tp_size} GPUs; label: node)")
    ax.set_title("Colour: pod; lighter: alternate racks", fontsize="small")
    return fig


def sync_figure(key: str = "cloud") -> Any:
    """Samples/s of synchronous and asynchronous SGD against the straggler fraction.

    Parameters
    ----------
    key : str
        Track key.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; line 0 synchronous, line 1 asynchronous (samples/s).
    """
    sg = sync_grid(key)
    x = 100 * np.asarray(sg["fractions"])
    fig, ax = _figure(6.4, 3.6)
    ax.plot(x, sg["sync"], marker="o", ms=3, label="synchronous (staleness 0)")
    ax.plot(x, sg["async"], marker="s", ms=3,
            label=f"asynchronous (staleness {sg['async_staleness']:.0f} updates)")  # fmt: skip
    ax.set_xlabel(f"Worker-steps that straggle ({STRAGGLER_SLOWDOWN:g}× slower), %")
    ax.set_ylabel("Samples/s")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig
