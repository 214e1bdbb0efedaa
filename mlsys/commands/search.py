"""``mlsys search``: rank every parallel layout of a training job on a fleet.

Example: ``mlsys search --model Llama3_405B --node DGX_H100 --nodes 2048 --fabric IB_NDR
--batch-size 2048 --top 10``.
"""

from __future__ import annotations

import argparse
import json
import time

from mlsys.cli import positive_int
from mlsys.commands.demo import table

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach the ``search`` subcommand's arguments.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    parser.add_argument("--model", required=True, help="catalog model, e.g. Llama3_70B")
    parser.add_argument("--node", required=True, help="catalog node, e.g. DGX_H100")
    parser.add_argument("--nodes", type=positive_int, required=True, help="number of nodes")
    parser.add_argument("--fabric", default="IB_NDR", help="scale-out fabric (default IB_NDR)")
    parser.add_argument(
        "--batch-size", type=positive_int, required=True, help="global batch (sequences)"
    )
    parser.add_argument("--seq-len", type=positive_int, help="tokens per sequence (model default)")
    parser.add_argument("--precision", default="bf16", help="compute precision (default bf16)")
    parser.add_argument("--top", type=positive_int, default=10, help="how many layouts to print")
    parser.add_argument("--rejected", action="store_true", help="also list rejection reasons")
    parser.add_argument("--json", action="store_true", help="print records as JSON")


def run(args: argparse.Namespace) -> int:
    """Search and print the best layouts.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments.

    Returns
    -------
    int
        0 when at least one layout fits, 1 when none does.
    """
    from mlsys.core.catalog import Fabrics, Models, Nodes
    from mlsys.core.fmt import fmt, fmt_int, pct
    from mlsys.core.solvers.search import ParallelismSearch
    from mlsys.core.types import Fleet
    from mlsys.core.units import Q_

    fleet = Fleet(node=Nodes.get(args.node), count=args.nodes, fabric=Fabrics.get(args.fabric))
    start = time.perf_counter()
    res = ParallelismSearch().solve(
        Models.get(args.model),
        fleet,
        batch_size=args.batch_size,
        seq_len=args.seq_len,
        precision=args.precision,
    )
    elapsed_s = time.perf_counter() - start
    records = res.top(args.top)
    if args.json:
        print(
            json.dumps(
                {"candidates": res.candidates, "feasible": res.feasible_count, "top": records},
                indent=2,
                default=str,
            )
        )
        return 0 if res.feasible_count else 1
    print(
        f"{fmt_int(res.candidates)} layouts of {args.model} on {fleet.total_accelerators} "
        f"x {fleet.accelerator.name}; {fmt_int(res.feasible_count)} fit; "
        f"searched in {elapsed_s:.2f} s\n"
    )
    rows = [
        [
            str(i),
            str(fmt(Q_(r["tokens_per_second"], "token/s"), digits=3)),
            str(fmt(Q_(r["step_time"], "s"), digits=3)),
            pct(r["mfu"], digits=3),
            str(fmt(Q_(r["memory_per_accelerator"], "byte"), digits=3)),
            *(
                str(r[k])
                for k in (
                    "dp",
                    "tp",
                    "pp",
                    "ep",
                    "microbatch_count",
                    "v_stages",
                    "zero_stage",
                    "recompute",
                )
            ),
            "yes" if r["sequence_parallel"] else "no",
            r["reason"] or "",
        ]
        for i, r in enumerate(records, 1)
    ]
    print(
        table(
            [
                "#",
                "throughput",
                "step",
                "MFU",
                "memory/device",
                "dp",
                "tp",
                "pp",
                "ep",
                "m",
                "v",
                "ZeRO",
                "recompute",
                "SP",
                "note",
            ],
            rows,
        )
    )
    if args.rejected:
        reasons: dict[str, int] = {}
        for r in res.rejected():
            reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
        print("\nRejected layouts by reason:")
        for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            print(f"  {fmt_int(n):>9}  {reason}")
    return 0 if res.feasible_count else 1
