"""Data and figures of the lab chapter "The Parallelism Paradox".

Every number the lab shows is computed in this package with mlsys solvers; the chapter hands the
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

Modules
-------
``devices`` (the lab's own SoC and models, with their sources), ``tracks`` (the teams,
devices, models, links and the lab's constants, each with its source in ``SOURCES``),
``origins`` (hover texts of derived numbers), ``scaling`` (Part 1, the communication
wall), ``puzzle`` (Part 2, memory over layouts),
``schedules`` and ``placement`` (pipeline timelines and where ranks sit), ``audit``
(Part 3, stragglers, checkpoints and the stakeholders' choice), ``payload`` (the data
handed to Observable JS) and ``figures`` (the static matplotlib versions). Every public
name is importable from ``mlsys.book.lab`` itself.
"""

from __future__ import annotations

from mlsys.book.lab.audit import (
    STAKEHOLDER_NODES,
    STAKEHOLDER_SLOW_FRACTION,
    checkpoint_cost,
    stakeholder_comparison,
    sync_grid,
)
from mlsys.book.lab.devices import GAZE, GLASSES_SOC, NOISE, VIT_S
from mlsys.book.lab.figures import (
    layout_map_figure,
    memory_heatmap_figure,
    scaling_lab_figure,
    schedule_figure,
    sync_figure,
)
from mlsys.book.lab.origins import derived
from mlsys.book.lab.payload import ojs_payload, payload_json_bytes
from mlsys.book.lab.placement import layout_map
from mlsys.book.lab.puzzle import (
    PUZZLE_BATCH,
    PUZZLE_NODES,
    memory_at,
    memory_grid,
    puzzle_challenge,
)
from mlsys.book.lab.scaling import scaling_data
from mlsys.book.lab.schedules import bubble_table, pipeline_schedule, schedule_idle_fraction
from mlsys.book.lab.tracks import (
    BUBBLE_TARGET,
    NODES_PER_POD,
    NODES_PER_RACK,
    SOURCES,
    STRAGGLER_FRACTIONS,
    STRAGGLER_SLOWDOWN,
    TRACKS,
    WALL_THRESHOLD,
    Track,
    solver_keywords,
    track,
    with_layout,
)

__all__ = [
    "GLASSES_SOC",
    "SOURCES",
    "derived",
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
    "with_layout",
    "solver_keywords",
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
