"""The lab's data handed to Observable JS (``ojs_define``) for the interactive HTML page."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from mlsys.book.lab.audit import sync_grid
from mlsys.book.lab.puzzle import memory_grid, puzzle_challenge
from mlsys.book.lab.scaling import scaling_data
from mlsys.book.lab.schedules import _schedule_ops, bubble_table, pipeline_schedule
from mlsys.book.lab.tracks import BUBBLE_TARGET, NODES_PER_POD, NODES_PER_RACK, TRACKS, _clean

__all__ = ["ojs_payload", "payload_json_bytes"]


@cache
def _line(origin: Any, limit: int = 240) -> str:
    """An origin's text for a hover, cut (if at all) between words."""
    text = " ".join(getattr(origin, "origin", origin).describe().split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ;,:") + "…"


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
        ``packing`` (GPUs per node, nodes per rack and pod), ``sources`` (key → the
        hover text of the scaling, memory and synchronisation numbers the OJS cells
        compute: the solver and the scenario, one short line each).
    """
    out: dict[str, Any] = {
        "tracks": {},
        "scaling": {},
        "memory": {},
        "sync": {},
        "layers": {},
        "sources": {},
    }
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
        sync = sync_grid(key)
        out["sync"][key] = {k: v for k, v in sync.items() if k != "sources"}
        # the hover text of the numbers the lab's interactive cells compute: one line
        # per quantity, naming the solver and the scenario it ran
        out["sources"][key] = {
            "scaling": {f: _line(d["origin"]) for f, d in sd["fabrics"].items() if d.get("origin")},
            "memory": (
                f"MemoryModel: {t.model.label} on {t.node.accelerator.label}, each TP, PP, DP "
                "and m of the lab's grid; the device's memory from the catalog"
            ),
            "sync": {k: _line(v) for k, v in sync["sources"].items()},
        }
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
