"""The emulator's numbers say where they were measured: the workload, the rank, how many CPU
processes, which backend (appendix "Emulating a cluster on a laptop").

The ring all-reduce of an M-byte buffer on N ranks sends 2(N-1)/N · M bytes per rank
(Patarasuk & Yuan 2009): 2 · 3/4 · 65,536 = 98,304 B for the suite's 4 ranks.
"""

from __future__ import annotations

import pickle

import pytest

from mlsys.core.fmt import fmt, pct
from mlsys.core.provenance import origin_of, split_span
from mlsys.core.traced import TracedFloat, TracedInt, origins
from mlsys.core.units import Q_
from mlsys.emulate.provenance import EmulationOrigin, ReferenceOrigin, mark_reference, mark_results


def _workload(ctx, n):  # a stand-in with a docstring, as the real workloads have
    """Send n bytes around a ring."""


def test_mark_results_traces_numbers_and_leaves_the_rest():
    per_rank = [
        {"bytes_sent": 98304, "ok": True, "name": "ring", "times": [0.5, 0.25], "x": (1.5,)},
        {"bytes_sent": 98304, "ok": False, "name": "ring", "times": [0.5], "x": (2.5,)},
    ]
    out = mark_results(per_rank, _workload, 2, "gloo")
    sent = out[1]["bytes_sent"]
    assert sent == 98304 and type(sent) is TracedInt
    assert out[0]["ok"] is True and out[0]["name"] == "ring"  # bools and strings untouched
    assert type(out[0]["times"][1]) is TracedFloat and type(out[1]["x"]) is tuple
    assert origins(sent) == (EmulationOrigin("_workload", "", "bytes_sent", 1, 2, "gloo", ""),)
    text = origin_of(sent).describe()
    assert text.startswith("bytes_sent measured by mlsys.emulate (_workload: Send n bytes")
    assert "on rank 1 of 2 CPU processes, torch.distributed gloo backend over loopback" in text
    # The positions of one series are one origin: a mean over steps names the run once.
    mean = sum(out[0]["times"]) / 2
    assert mean == 0.375 and len(origins(mean)) == 1
    # Numbers survive the trip between processes (pickle) with their text.
    back = pickle.loads(pickle.dumps(out))
    assert origin_of(back[1]["bytes_sent"]).describe() == text


def test_predictions_say_predicted_and_references_say_so():
    out = mark_results([{"predicted_forward_bytes": 1536}], "ffn_workload", 4)
    assert "predicted_forward_bytes predicted by mlsys.emulate (ffn_workload)" in (
        origin_of(out[0]["predicted_forward_bytes"]).describe()
    )
    ref = mark_reference([1.0, 0.5], "one process", "reference_losses")
    assert origins(ref[1]) == (ReferenceOrigin("one process", "reference_losses"),)
    assert "single-process reference run (one process" in origin_of(ref[0]).describe()


@pytest.mark.emulate
def test_the_suites_measurements_carry_their_run(collectives_4, suite):
    pytest.importorskip("torch")
    import torch

    sent = max(r["all_reduce"]["bytes_sent"] for r in collectives_4)
    assert sent == 2 * 3 / 4 * (1 << 16)  # Patarasuk & Yuan: 98,304 B
    text, title = split_span(fmt(Q_(sent, "B"))._repr_markdown_())
    assert text == "98.304 kB"  # exact digits: no silent rounding
    assert "all_reduce.bytes_sent measured by mlsys.emulate (collectives_workload" in title
    assert (
        "of 4 CPU processes, torch.distributed gloo backend over loopback, "
        f"torch {torch.__version__}" in title
    )
    # The pipeline summary keeps the stages' measured idle time traced through its mean.
    idle = suite["pipeline"]["gpipe"]["idle_fraction"][0]
    assert 0 < idle < 1 and "idle_fraction measured" in pct(idle).origin.describe()
    assert (
        "reference run" in origin_of(suite["pipeline"]["gpipe"]["reference_losses"][0]).describe()
    )
