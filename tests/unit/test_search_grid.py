"""The search's fast paths equal the plain ones bit for bit: the layouts priced on a
(rows × options) broadcast grid, the distinct-shape grouping on that grid, the ranking."""

from __future__ import annotations

import numpy as np
import pytest

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.solvers import _layout
from mlsys.core.solvers.search import _ranking
from mlsys.core.types import Fleet

FLEET = Fleet(node=Nodes.DGX_H100, count=4, fabric=Fabrics.IB_NDR)


def _grid(seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Random layout rows (a column each) and options (a row each) of Llama-3 70B on 32
    H100s: sizes whose product is the fleet, every recompute mode, ZeRO stage, schedule."""
    rng = np.random.default_rng(seed)
    sizes = [(tp, pp, cp) for tp in (1, 2, 4, 8) for pp in (1, 2, 4) for cp in (1, 2)]
    shapes = [x for x in sizes if x[0] * x[1] * x[2] <= 32]
    rows = []
    for _ in range(12):
        tp, pp, cp = shapes[rng.integers(len(shapes))]
        dp = 32 // (tp * pp * cp)
        m = int(rng.choice([d for d in (1, 2, 4, 8) if (64 // dp) % d == 0]))
        rows.append((tp, pp, 1, dp, m, int(rng.choice([1, 2])) if pp > 1 else 1, cp))
    r = np.array(rows, dtype=float)
    col = {k: r[:, i, None] for i, k in enumerate(("tp", "pp", "ep", "dp", "m", "v", "cp"))}
    opts = np.array(
        [(z, rc, sp, sc) for z in range(4) for rc in range(4) for sp in (0, 1) for sc in (0, 1)],
        dtype=float,
    )
    row = {k: opts[None, :, i] for i, k in enumerate(("zero", "rc", "sp", "schedule"))}
    return col, row


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "knobs",
    [
        {},
        {"tp_overlap": True, "cp_all_gather": True, "grad_accum_fusion": False},
        {"overlap": False, "topo": 2, "deepspeed_p2p": True, "flat_params": True},
    ],
)
def test_grid_evaluate_equals_flat_evaluate(seed, knobs):
    P = _layout.build_problem(Models.Llama3_70B, FLEET, 64)
    col, row = _grid(seed)
    args = {**col, **row}
    grid = _layout.evaluate(P, **args, **knobs)
    shape = np.broadcast_shapes(*(a.shape for a in args.values()))
    flat_args = {k: np.broadcast_to(a, shape).ravel().copy() for k, a in args.items()}
    flat = _layout.evaluate(P, **flat_args, **knobs)
    for key, value in flat.items():
        g = np.broadcast_to(grid[key], shape).ravel()
        f = np.broadcast_to(value, g.shape)
        assert np.array_equal(g, f, equal_nan=g.dtype != bool), key


def test_distinct_on_a_grid_equals_distinct_on_the_flat_table():
    rng = np.random.default_rng(3)
    big = rng.choice([1024.0, 2048.0, 8192.0, 3.0], size=(40, 1))
    group = rng.choice([1.0, 2.0, 8.0], size=(40, 1))
    flag = rng.choice([0.0, 0.5, 1.0], size=(1, 9))
    shape = (40, 9)
    flat = [np.broadcast_to(x, shape).ravel() for x in (big, group, flag)]
    *rows_g, inv_g, shape_g = _layout._distinct(big, group, flag)
    *rows_f, inv_f, _ = _layout._distinct(*flat)
    assert shape_g == shape
    for a, b in zip(rows_g, rows_f, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(inv_g, inv_f)


@pytest.mark.parametrize("seed", range(5))
def test_ranking_equals_lexsort(seed):
    rng = np.random.default_rng(seed)
    n = 500
    tokens = rng.choice([0.0, 1.0, 2.5, 7.0], size=n) * (rng.random(n) < 0.7)
    tokens[rng.random(n) < 0.3] = rng.random(int((rng.random(n) < 0.3).sum()) or 1)[0]
    feasible = rng.random(n) < 0.4
    assert np.array_equal(_ranking(tokens, feasible), np.lexsort((-tokens, ~feasible)))
    tokens[3] = np.nan  # the general sort
    assert np.array_equal(_ranking(tokens, feasible), np.lexsort((-tokens, ~feasible)))
