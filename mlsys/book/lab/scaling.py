"""Part 1 of the lab, the communication wall: strong-scaling curves of each track on each link."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from mlsys.book.lab.tracks import WALL_THRESHOLD, solver_keywords, track
from mlsys.core.catalog import Fabrics
from mlsys.core.solvers.scaling import scaling_curve

__all__ = ["scaling_data"]


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
        throughput) and ``origin`` (the :func:`scaling_curve` result's origin: its inputs
        and the catalog entries behind them; not part of the OJS payload).
    """
    t = track(key)
    seq = float(t.model.seq_len)
    out: dict[str, Any] = {"fabrics": {}}
    for fab in t.fabrics:
        res = scaling_curve(
            t.model, t.node, Fabrics[fab], t.nodes, t.batch_size, precision=t.precision,
            microbatch_size=t.microbatch_size, threshold=WALL_THRESHOLD,
            **solver_keywords(t.layout),
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
            "origin": res.origin,
        }
    return out
