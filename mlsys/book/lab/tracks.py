"""The lab's tracks: the four teams, their devices, models and links, and its constants."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlsys.book.lab.devices import GAZE, GLASSES_SOC, NOISE, VIT_S
from mlsys.core.catalog import Fabrics, Hardware, Models, Nodes
from mlsys.core.layout import TrainingLayout
from mlsys.core.provenance import TextOrigin
from mlsys.core.types import Accelerator, Node, TransformerWorkload

__all__ = [
    "WALL_THRESHOLD",
    "BUBBLE_TARGET",
    "NODES_PER_RACK",
    "NODES_PER_POD",
    "STRAGGLER_SLOWDOWN",
    "STRAGGLER_FRACTIONS",
    "SOURCES",
    "Track",
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
"""Straggler intensities the lab offers: 0 to 10 % of worker-steps slow, in steps of 0.5 %."""

SOURCES: dict[str, str] = {
    "WALL_THRESHOLD": (
        "The lab's definition of diminishing returns: a step up in fleet size whose "
        "marginal speed-up (its share of the ideal, linear speed-up) falls below one half "
        "(mlsys.book.lab.WALL_THRESHOLD, a choice of this lab)"
    ),
    "BUBBLE_TARGET": (
        "The lab's puzzle budget: at most 10% of the step idle in the pipeline bubble "
        "(mlsys.book.lab.BUBBLE_TARGET, a choice of this lab)"
    ),
    "NODES_PER_RACK": (
        "Four 10.2 kW DGX H100 systems per ~40 kW rack, as in NVIDIA's DGX SuperPOD "
        "reference architecture for DGX H100 (an estimate of a typical deployment)"
    ),
    "NODES_PER_POD": (
        "One DGX SuperPOD scalable unit: 32 DGX H100 nodes (256 GPUs) under one tier of "
        "leaf switches (NVIDIA DGX SuperPOD reference architecture for DGX H100)"
    ),
    "STRAGGLER_SLOWDOWN": (
        "The lab's straggler model: a slow worker-step takes twice as long, the two-point "
        "example of Dean & Barroso (2013), 'The Tail at Scale' (an illustration, not a "
        "measurement of any fleet)"
    ),
    "STRAGGLER_FRACTIONS": (
        "The lab's straggler control: 0 to 10% of worker-steps slow in steps of 0.5% "
        "(scenarios for the exercise, not measurements)"
    ),
}
"""Where each of the lab's constants comes from, as the chapter's hover text shows it:
a citation for a fact, or what the lab's choice stands for."""


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
    why: str = ""

    @property
    def scenario(self) -> str:
        """The track as the lab sets it up, in one sentence (the hover text of its numbers).

        Returns
        -------
        str
            Model, devices, fleet sizes, link and batch, then why they were chosen.
        """
        per_node = self.node.accelerators_per_node
        first, last = self.nodes[0] * per_node, self.devices
        text = (
            f"The lab's {self.title.split(' (')[0]} track (mlsys.book.lab.TRACKS[{self.key!r}]): "
            f"{self.model.label} on {first:,} to {last:,} × {self.node.accelerator.label} "
            f"over {Fabrics[self.own_fabric].label}; global batch {self.batch_size:,} "
            f"samples, a sample being one {self.sample}"
        )
        return f"{text}. {self.why}" if self.why else text

    @property
    def origin(self) -> TextOrigin:
        """:attr:`scenario` as an origin: ``count(t.devices, source=t)`` shows it on hover.

        Returns
        -------
        mlsys.core.provenance.TextOrigin
        """
        return TextOrigin(self.scenario)

    @property
    def fabrics(self) -> tuple[str, ...]:
        """The links the Part 1 toggle offers: 10 GbE, InfiniBand NDR and the track's own."""
        base = ("ETH_10G", "IB_NDR")
        return base if self.own_fabric in base else (*base, self.own_fabric)

    @property
    def devices(self) -> int:
        """Accelerators in the whole fleet."""
        return self.nodes[-1] * self.node.accelerators_per_node


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
        why=(
            "TP 8 inside a node, PP 4, ZeRO-1, selective recomputation: the shape Megatron-LM "
            "uses for 70B-class models (Narayanan et al. 2021; Korthikanti et al. 2022); "
            "8.4M tokens a step (Llama 3's batch grew from 4M to 16M tokens, Dubey et al. "
            "2024, Sec. 3.4.1)"
        ),
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
        why=(
            "One Jetson AGX Orin per car (the automotive DRIVE Orin is the same SoC family), "
            "four frames per car per step, each car on its own LTE uplink: a scenario of "
            "this lab"
        ),
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
        why=(
            "A 3 W SoC derived from the Jetson AGX Orin, eight samples per device per step, "
            "each device on its own Wi-Fi access point: a scenario of this lab"
        ),
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
        why=(
            "A Cortex-M7 (1 MB of SRAM) per earbud, four clips per device per step "
            "accumulated one at a time, each earbud on its own BLE connection: a scenario "
            "of this lab"
        ),
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
