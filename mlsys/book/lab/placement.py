"""Where the lab's layouts place their pipeline stages and tensor-parallel groups.

Ranks map to nodes, racks and pods (:data:`NODES_PER_RACK`, :data:`NODES_PER_POD`).
"""

from __future__ import annotations

import numpy as np

from mlsys.book.lab.tracks import NODES_PER_POD, NODES_PER_RACK

__all__ = ["layout_map"]


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
    gpus_per_node : int
        Physical packing: GPUs per node.
    nodes_per_rack : int
        Physical packing: nodes per rack.
    nodes_per_pod : int
        Physical packing: nodes per pod.

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
