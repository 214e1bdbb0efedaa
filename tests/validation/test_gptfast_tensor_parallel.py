"""gpt-fast's tensor-parallel table: the engines' custom all-reduce is what runs.

gpt-fast (README, 8 A100-80GB, batch 1) publishes tokens/s on 1, 2, 4 and 8 GPUs with
PyTorch's intra-node one-shot all-reduce (``ENABLE_INTRA_NODE_COMM=1``). Its rows in
``serving.toml`` state the engine as its code runs it (custom all-reduce, the head whole
on every GPU, gate and up as two linears). With those, every row is within 10 %; priced
as NCCL's LL ring the 8-GPU rows are 18-50 % slow, which is what the peer-read kernel's
one latency per all-reduce removes.
"""

from __future__ import annotations

import pytest

from mlsys.validation import load_data
from mlsys.validation.serving import serve_row

ROWS = [r for r in load_data("serving")["point"] if r["source"] == "gpt-fast"]


def _error(row: dict) -> float:
    return serve_row(row).si("itl") / row["published"] - 1.0


def test_the_table_is_all_there():
    # Llama-2-7B and Llama-3-8B on 1/2/4/8 GPUs, Llama-2-70B on 2/4/8
    assert sorted((r["model"], r["tp_size"]) for r in ROWS) == sorted(
        [("Llama2_7B", n) for n in (1, 2, 4, 8)]
        + [("Llama3_8B", n) for n in (1, 2, 4, 8)]
        + [("Llama2_70B", n) for n in (2, 4, 8)]
    )
    # tokens/s as published, compared as one decode step each
    by = {(r["model"], r["tp_size"]): r["published"] for r in ROWS}
    assert 1.0 / by[("Llama2_7B", 8)] == pytest.approx(328.43, rel=1e-5)
    assert 1.0 / by[("Llama2_70B", 8)] == pytest.approx(62.50, rel=1e-5)


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_within_ten_percent_with_the_engine_as_it_runs(row):
    assert abs(_error(row)) <= 0.10, (row["id"], _error(row))


@pytest.mark.parametrize("row", [r for r in ROWS if r["tp_size"] == 8], ids=lambda r: r["id"])
def test_nccl_pricing_misses_the_eight_gpu_rows(row):
    nccl = serve_row(dict(row, tp_allreduce="nccl")).si("itl") / row["published"] - 1.0
    assert nccl > 0.18, (row["id"], nccl)
    # the engine as it runs misses by a third of NCCL's miss or less (70B: -6% / +18%)
    assert abs(_error(row)) < nccl / 2.5
