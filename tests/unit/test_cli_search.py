"""``mlsys search``: ranks layouts and reports rejection reasons."""

import json

from mlsys.cli import main


def test_search_prints_ranked_layouts(capsys):
    status = main(
        [
            "search",
            "--model",
            "Llama3_70B",
            "--node",
            "DGX_H100",
            "--nodes",
            "4",
            "--batch-size",
            "64",
            "--top",
            "3",
            "--rejected",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "x H100" in out and "| 1 |" in out and "Rejected layouts by reason" in out


def test_search_json_records_are_consistent(capsys):
    main(
        [
            "search",
            "--model",
            "Llama3_8B",
            "--node",
            "DGX_H100",
            "--nodes",
            "1",
            "--batch-size",
            "16",
            "--top",
            "5",
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    top = data["top"]
    assert data["feasible"] >= 1 and len(top) == 5
    # Every layout uses the whole node: dp * tp * pp = 8 GPUs.
    assert all(r["dp"] * r["tp"] * r["pp"] == 8 for r in top)
    # Ranked by throughput, best first.
    rates = [r["tokens_per_second"] for r in top]
    assert rates == sorted(rates, reverse=True)
