"""One rulebook, one physics: DistributedModel, MemoryModel and ParallelismSearch agree.

Each hypothesis example builds a fleet, a model (dense GPT-3 175B, Llama-2-13B with 40
layers for uneven pipelines, Llama-3-8B with grouped-query attention, and the Mixtral
8x7B mixture of experts), a batch, a sequence length and FlashAttention on or off, runs
ParallelismSearch over a randomly restricted grid (GPipe and 1F1B, v up to 3, ZeRO 0–3,
every recompute mode, sequence parallelism on and off, context parallelism 1–4), then
re-solves ROWS rows of its table one by one:

* a row the search rejects by a layout rule makes both solvers raise a ParameterError;
* a row the search prices has the same memory per device in all three (relative 1e-9),
  the same feasibility, and the search's step time equals DistributedModel's.

EXAMPLES × ROWS = 42 × 250 = 10,500 layouts are checked per run.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mlsys import Fabrics, Fleet, Models, Nodes, ParameterError
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.memory import MemoryModel
from mlsys.core.solvers.search import ParallelismSearch

EXAMPLES = 42
ROWS = 250
MODELS = ("GPT3_175B", "Llama2_13B", "Llama3_8B", "Mixtral_8x7B")
NODES = {"DGX_A100": Fabrics.IB_HDR, "DGX_H100": Fabrics.IB_NDR}


def _subset(draw, options, always=None):
    chosen = draw(st.lists(st.sampled_from(options), min_size=1, max_size=len(options)))
    return tuple(sorted(set(chosen) | ({always} if always is not None else set())))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    # no shrinking: a failure prints its draws, and shrinking 10^4 solves would take
    # minutes of the shared CPUs
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_solve_memory_and_search_agree_on_every_layout(data):
    draw = data.draw
    model = Models.get(draw(st.sampled_from(MODELS)))
    node_key = draw(st.sampled_from(sorted(NODES)))
    count = draw(st.sampled_from([1, 2, 3, 4, 5, 8]))
    fleet = Fleet(node=getattr(Nodes, node_key), count=count, fabric=NODES[node_key])
    n = fleet.total_accelerators
    batch = n * draw(st.sampled_from([1, 2, 3, 4]))
    seq = draw(st.sampled_from([1024, 2048, 4096]))
    flash = draw(st.booleans())
    precision = draw(st.sampled_from(["bf16", "fp16"]))
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    search = ParallelismSearch().solve(
        model, fleet, batch_size=batch, precision=precision, seq_len=seq,
        flash_attention=flash,
        tp_sizes=_subset(draw, [d for d in divisors if d <= 16], always=1),
        pp_sizes=_subset(draw, [d for d in divisors if d <= 16], always=1),
        v_stages=_subset(draw, [1, 2, 3]),
        cp_sizes=_subset(draw, [1, 2, 4]),
        schedules=_subset(draw, ["1f1b", "gpipe"]),
    )  # fmt: skip
    table = search.table
    size = len(table["tp"])
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    picks = rng.integers(0, size, ROWS)
    dist, mem_model = DistributedModel(), MemoryModel()
    for i in picks:
        row = {k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in table.items()}
        kw = dict(
            tp_size=row["tp"], pp_size=row["pp"], ep_size=row["ep"], cp_size=row["cp"],
            microbatch_count=row["microbatch_count"], v_stages=row["v_stages"],
            zero_stage=row["zero_stage"], recompute=row["recompute"],
            sequence_parallel=row["sequence_parallel"], schedule=row["schedule"],
            flash_attention=flash,
        )  # fmt: skip
        common = dict(batch_size=batch, precision=precision, seq_len=seq)
        priced = row["reason"] in ("", "does not fit in memory")
        if not priced:  # rejected by a layout rule: both solvers refuse it too
            with pytest.raises(ParameterError):
                dist.solve(model, fleet, **common, **kw)
            with pytest.raises(ParameterError):
                mem_model.solve(model, fleet.node.accelerator, dp_size=row["dp"], **common, **kw)
            continue
        d = dist.solve(model, fleet, **common, **kw)
        m = mem_model.solve(model, fleet.node.accelerator, dp_size=row["dp"], **common, **kw)
        total = d.memory_per_accelerator.si("total")
        assert m.si("total") == pytest.approx(total, rel=1e-9)
        assert row["memory_per_accelerator"] == pytest.approx(total, rel=1e-9)
        assert d.feasible == bool(m.feasible) == row["feasible"]
        assert row["step_time"] == pytest.approx(d.si("step_time"), rel=1e-9)
