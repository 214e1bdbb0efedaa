"""The step time is the sum of its named terms, on every layout.

evaluate() returns the terms it added into the step (the keys starting with
TERM_PREFIX, grouped by STEP_TERMS) beside the step time; explain() shows those same
numbers. For random layouts (random sizes, micro-batches, ZeRO stages, recompute modes,
sequence parallelism, schedules, context parallelism and software-stack options) of four
models on two fleets, priced in the search's vectorised pass, this checks:

* the grouped sum of the terms is the step time, bitwise, and a flat exactly-rounded sum
  of the leaves agrees to 1e-12;
* each group is the result field it names (compute_time, dp_communication_time, the TP,
  PP, EP, CP, bubble and host times);
* every term is non-negative (but the userbuffers-overlapped tensor-parallel time);
* one-layout solves of a sample of rows give a tree whose root is their step time.

EXAMPLES × LAYOUTS = 24 × 500 = 12,000 layouts per run.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mlsys import Fabrics, Fleet, Models, Nodes
from mlsys.core.solvers import _layout
from mlsys.core.solvers._explain import step_tree

EXAMPLES = 24
LAYOUTS = 500
MODELS = ("GPT3_175B", "Llama2_13B", "Llama3_8B", "Mixtral_8x7B")
NODES = {"DGX_A100": Fabrics.IB_HDR, "DGX_H100": Fabrics.IB_NDR}
PRECISIONS = {"DGX_A100": ["bf16", "fp16"], "DGX_H100": ["bf16", "fp8"]}
FIELDS = {
    "compute": "compute_time",
    "data_parallel": "dp_communication_time",
    "tp": "tp_communication_time",
    "pp": "pp_communication_time",
    "ep": "ep_communication_time",
    "cp": "cp_communication_time",
    "bubble": "pipeline_bubble_time",
    "moe_host": "moe_host_time",
    "optimizer": "optimizer_time",
}


def _leaves(out):
    return {k: v for k, v in out.items() if k.startswith(_layout.TERM_PREFIX)}


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_terms_sum_to_the_step_time_on_every_layout(data):
    draw = data.draw
    model = Models.get(draw(st.sampled_from(MODELS)))
    node = draw(st.sampled_from(sorted(NODES)))
    fleet = Fleet(node=getattr(Nodes, node), count=draw(st.sampled_from([1, 2, 4, 8])),
                  fabric=NODES[node])  # fmt: skip
    P = _layout.build_problem(
        model, fleet, fleet.total_accelerators * 4, draw(st.sampled_from(PRECISIONS[node])),
        None, draw(st.sampled_from([1024, 4096])), None, draw(st.booleans()), "adam", "fused",
        draw(st.sampled_from(["fused", "eager"])),
    )  # fmt: skip
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = LAYOUTS

    def pick(*values):
        return rng.choice(np.asarray(values, dtype=float), n)

    flat, per = draw(st.booleans()), False
    if not flat:
        per = draw(st.booleans())
    options = dict(
        topo=draw(st.sampled_from([0, 1, 2, 3])), overlap=draw(st.booleans()),
        cp=pick(1, 2, 4), tp_overlap=draw(st.booleans()), cp_all_gather=draw(st.booleans()),
        grad_accum_fusion=draw(st.booleans()), recompute_fraction=draw(st.sampled_from([1.0, 0.5])),
        deepspeed_p2p=draw(st.booleans()), rerun_residuals=draw(st.booleans()),
        flat_params=flat, dropout=draw(st.booleans()), per_parameter=per,
        cuda_graph_scope=draw(st.sampled_from([(), ("attn",), ("full_iteration",)])),
    )  # fmt: skip
    sizes = (
        pick(1, 2, 4, 8, 16), pick(1, 2, 4, 8), pick(1, 2, 8), pick(1, 2, 4, 16),
        pick(1, 2, 8, 32), pick(1, 2, 3), pick(0, 1, 2, 3), pick(0, 1, 2, 3), pick(0, 1),
        rng.choice([0, 1], n),
    )  # fmt: skip
    out = _layout.evaluate(P, *sizes, **options)
    terms = _leaves(out)
    sums = _layout.sum_terms(terms)
    step = np.broadcast_to(out["step_time"], (n,))
    ok = np.isfinite(step)
    assert ok.mean() > 0.5
    assert np.array_equal(np.broadcast_to(sums["step"], (n,))[ok], step[ok])
    stacked = np.stack([np.broadcast_to(v, (n,)) for v in terms.values()])
    for i in np.flatnonzero(ok)[:: max(1, n // 50)]:
        assert abs(np.sum(np.sort(stacked[:, i])) - step[i]) <= 1e-12 * step[i]
    # every term a time spent, except the exposed tensor-parallel time under userbuffers
    # overlap, which carries the chunked GEMMs' shape cost: negative where T/t-token
    # chunks quantise better than the whole GEMM (userbuffers_exposed_time)
    signed = ["term.tp"] if options["tp_overlap"] else []
    kept = [j for j, k in enumerate(terms) if k not in signed]
    assert (stacked[kept][:, ok] >= 0.0).all()
    for group, field in FIELDS.items():
        a = np.broadcast_to(sums.get(group, sums.get("term." + group)), (n,))[ok]
        b = np.broadcast_to(out[field], (n,))[ok]
        assert np.allclose(a, b, rtol=1e-12, atol=0.0), field
    # one layout at a time (the solve's scalar path) gives the tree explain() shows
    for i in np.flatnonzero(ok)[:3]:
        one = [float(x[i]) for x in sizes[:9]] + [int(sizes[9][i])]
        kw = {**options, "cp": float(options["cp"][i])}
        single = _layout.evaluate(P, *one, **kw)
        layout = dict(zip(("tp", "pp", "ep", "dp", "m", "v", "zero"), one, strict=False))
        tree = step_tree(single, P, {**layout, "cp": kw["cp"]})
        assert tree.value == single["step_time"]
        assert single["step_time"] == step[i] or abs(single["step_time"] / step[i] - 1) < 1e-12
