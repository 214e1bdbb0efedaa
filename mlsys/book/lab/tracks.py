"""The lab's tracks: the four teams, their devices, models and links, and its constants."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlsys.core.catalog import Fabrics, Hardware, Models, Nodes
from mlsys.core.layout import TrainingLayout
from mlsys.core.types import Accelerator, Node, Provenance, TransformerWorkload

__all__ = [
    "WALL_THRESHOLD",
    "BUBBLE_TARGET",
    "NODES_PER_RACK",
    "NODES_PER_POD",
    "STRAGGLER_SLOWDOWN",
    "STRAGGLER_FRACTIONS",
    "GLASSES_SOC",
    "Track",
    "VIT_S",
    "GAZE",
    "NOISE",
    "TRACKS",
    "track",
    "with_layout",
    "solver_keywords",
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
    layout : TrainingLayout
        Layout within a replica (``dp`` left to the fleet), built once through
        :class:`mlsys.TrainingLayout` and passed to ``DistributedModel`` and
        ``MemoryModel``; ``scaling_curve`` gets it through :func:`solver_keywords`.
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
    layout: TrainingLayout = field(default_factory=TrainingLayout)
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

_CLOUD_LAYOUT = TrainingLayout(
    tp=8, pp=4, zero_stage=1, recompute="selective", sequence_parallel=True
)

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


def with_layout(layout: TrainingLayout, **changes: Any) -> TrainingLayout:
    """``layout`` with some fields changed, validated again by :class:`mlsys.TrainingLayout`.

    Parameters
    ----------
    layout : TrainingLayout
        The track's layout.
    **changes
        Fields to replace (``microbatch_count=32``, ``dp=16``, ``zero_stage=2``).

    Returns
    -------
    TrainingLayout
        A new layout; an invalid combination raises the layout's ``ParameterError``.

    Examples
    --------
    >>> with_layout(TrainingLayout(tp=8), microbatch_count=4).microbatch_count
    4
    """
    return TrainingLayout(**{**layout.model_dump(), **changes})


def solver_keywords(layout: TrainingLayout) -> dict[str, Any]:
    """The keyword form of ``layout`` that :func:`mlsys.scaling_curve` takes.

    ``scaling_curve`` sets ``dp`` and the micro-batch count per fleet size itself, so it
    takes the rest of the layout as keywords rather than one fixed layout.

    Parameters
    ----------
    layout : TrainingLayout
        The track's layout.

    Returns
    -------
    dict
        ``tp_size``, ``pp_size``, ``ep_size``, ``v_stages``, ``zero_stage``,
        ``recompute``, ``sequence_parallel``, ``schedule``, ``flash_attention``.

    Examples
    --------
    >>> solver_keywords(TrainingLayout(tp=8, pp=4))["pp_size"]
    4
    """
    return {
        "tp_size": layout.tp,
        "pp_size": layout.pp,
        "ep_size": layout.ep,
        "v_stages": layout.v_stages,
        "zero_stage": layout.zero_stage,
        "recompute": layout.recompute,
        "sequence_parallel": layout.sequence_parallel,
        "schedule": layout.schedule,
        "flash_attention": layout.flash_attention,
    }
