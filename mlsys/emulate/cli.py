"""``mlsys emulate``: run real parallelism on CPU processes and print measured vs predicted.

Examples
--------
::

    mlsys emulate matmul --policy inner --ranks 4 --m 1024 --k 1024 --n 1024
    mlsys emulate matmul --policy all --ranks 4
    mlsys emulate ffn --ranks 2 --batch-size 4 --seq-len 64 --hidden 256
    mlsys emulate pipeline --stages 4 --microbatches 8 --schedule 1f1b
    mlsys emulate collectives --ranks 4 --bytes 4194304

torch is imported only when a subcommand runs (it is the ``[emulate]`` extra).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

__all__ = ["add_arguments", "run", "format_table"]

_POLICIES = ("unsharded", "inner", "inner_a", "inner_b", "outer_m", "outer_n", "outer_inner")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach the ``emulate`` sub-subcommands and their options to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The ``emulate`` subcommand's parser.
    """
    sub = parser.add_subparsers(dest="workload", metavar="WORKLOAD")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--timeout", type=float, default=120.0, help="seconds (default 120)")

    mm = sub.add_parser(
        "matmul", parents=[common], help="tensor-parallel C = A·B under a sharding policy"
    )
    mm.add_argument(
        "--policy",
        default="all",
        help="one of " + ", ".join(_POLICIES) + ", or 'all' (default)",
    )
    mm.add_argument("--ranks", type=int, default=4)
    mm.add_argument("--m", type=int, default=256)
    mm.add_argument("--k", type=int, default=256)
    mm.add_argument("--n", type=int, default=256)
    mm.add_argument("--inner-ranks", type=int, default=None, help="inner axis for outer_inner")
    mm.add_argument(
        "--output", choices=("replicated", "sharded"), default="replicated", help="result layout"
    )
    mm.add_argument("--no-dtensor", action="store_true", help="skip the DTensor cross-check")

    ffn = sub.add_parser(
        "ffn", parents=[common], help="Megatron tensor-parallel MLP, forward and backward"
    )
    ffn.add_argument("--ranks", type=int, default=2)
    ffn.add_argument("--batch-size", type=int, default=2)
    ffn.add_argument("--seq-len", type=int, default=16)
    ffn.add_argument("--hidden", type=int, default=64)
    ffn.add_argument("--ffn-hidden", type=int, default=None, help="default 4 × hidden")

    pp = sub.add_parser(
        "pipeline", parents=[common], help="pipeline-parallel 4-layer MLP, GPipe / 1F1B"
    )
    pp.add_argument("--stages", type=int, default=4)
    pp.add_argument("--microbatches", type=int, default=8)
    pp.add_argument("--schedule", default="1f1b", help="gpipe, 1f1b or both")
    pp.add_argument("--microbatch-size", type=int, default=4)
    pp.add_argument("--steps", type=int, default=3)
    pp.add_argument("--layers", type=int, default=4)
    pp.add_argument("--forward-ms", type=float, default=20.0, help="padded forward per micro-batch")
    pp.add_argument(
        "--backward-ms", type=float, default=40.0, help="padded backward per micro-batch"
    )

    co = sub.add_parser(
        "collectives", parents=[common], help="p2p ring collectives vs gloo vs the formulas"
    )
    co.add_argument("--ranks", type=int, default=4)
    co.add_argument("--bytes", type=int, default=1 << 20, help="buffer size M in bytes")


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table with aligned columns.

    Parameters
    ----------
    headers : sequence of str
        Column titles.
    rows : sequence of sequences
        Cells (converted with ``str``).

    Returns
    -------
    str
        The table, one line per row.
    """
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _b(x: float) -> str:
    for unit, div in (("MiB", 2**20), ("KiB", 2**10)):
        if abs(x) >= div:
            return f"{x / div:.2f} {unit}"
    return f"{x:.0f} B"


def _t(x: float) -> str:
    return f"{x * 1e3:.2f} ms" if x >= 1e-3 else f"{x * 1e6:.0f} µs"


def _bw(x: float) -> str:
    # Loopback copies are so fast that scheduling noise can swamp them.
    return "not resolved (> 100 GB/s)" if x > 1e11 else f"{x / 1e9:.2f} GB/s"


def _ok(a: float, b: float) -> str:
    return "yes" if abs(a - b) <= 1e-9 * max(1.0, abs(b)) else "NO"


def _matmul(args: argparse.Namespace) -> int:
    from mlsys.emulate.tp import run_matmul

    policies = _POLICIES if args.policy == "all" else (args.policy,)
    reports = run_matmul(
        args.ranks,
        policies,
        args.m,
        args.k,
        args.n,
        inner_ranks=args.inner_ranks,
        output=args.output,
        dtensor=not args.no_dtensor,
        timeout_s=args.timeout,
    )
    link = reports[0]["link"]
    rows = []
    for pol in reports[0]:
        if pol == "link":
            continue
        per = [r[pol] for r in reports]
        rep = per[0]
        sent = max(p["bytes_sent"] for p in per)
        rows.append(
            [
                pol,
                "+".join(rep["predicted_steps"]) or "-",
                _b(sent),
                _b(rep["predicted_bytes"]),
                _ok(sent, rep["predicted_bytes"]),
                _t(max(p["comm_seconds"] for p in per)),
                _t(rep["predicted_seconds"]),
                f"{max(p['rel_err'] for p in per):.1e}",
                ", ".join(f"{k}×{v}" for k, v in rep.get("dtensor_comms", {}).items()) or "-",
            ]
        )
    print(
        f"C[{args.m},{args.n}] = A[{args.m},{args.k}]·B[{args.k},{args.n}] fp32 on "
        f"{args.ranks} gloo ranks; fitted link α = {_t(link['latency_s'])} per step, "
        f"β = {_bw(link['bandwidth_Bps'])} (ring all-gathers of two sizes)"
    )
    print(
        format_table(
            [
                "policy",
                "collectives",
                "sent/rank",
                "predicted",
                "equal",
                "comm time",
                "α-β time",
                "rel err",
                "DTensor comms",
            ],
            rows,
        )
    )
    print(
        "bytes: measured payload of the point-to-point rings (max over ranks); "
        "times: measured wall time (max over ranks) vs the α-β model on the calibrated link."
    )
    return 0 if all(r[4] == "yes" for r in rows) else 1


def _ffn(args: argparse.Namespace) -> int:
    from mlsys.core.layout import TrainingLayout
    from mlsys.emulate.tp import run_ffn

    # the one layout type validates the tensor-parallel size (a ParameterError names it)
    layout = TrainingLayout(tp=args.ranks)
    reports = run_ffn(
        layout.tp,
        args.batch_size,
        args.seq_len,
        args.hidden,
        args.ffn_hidden,
        timeout_s=args.timeout,
    )
    r = reports[0]
    rows = []
    for phase in ("forward", "backward"):
        sent = max(x[f"{phase}_bytes"] for x in reports)
        pred = r[f"predicted_{phase}_bytes"]
        rows.append([phase, _b(sent), _b(pred), _ok(sent, pred), _t(r[f"{phase}_seconds"])])
    print(
        f"Megatron MLP b={args.batch_size} s={args.seq_len} h={args.hidden} fp32 on "
        f"{args.ranks} ranks (one all-reduce of b·s·h per pass)"
    )
    print(format_table(["pass", "sent/rank", "predicted", "equal", "time"], rows))
    errs = {k: max(x["rel_err"][k] for x in reports) for k in r["rel_err"]}
    print("max relative error vs unsharded: " + ", ".join(f"{k} {v:.1e}" for k, v in errs.items()))
    return 0 if all(row[3] == "yes" for row in rows) else 1


def _pipeline(args: argparse.Namespace) -> int:
    from mlsys.core.layout import TrainingLayout
    from mlsys.emulate.pipeline import run_pipeline

    # each schedule is a TrainingLayout (pp stages, m micro-batches), validated once
    names = ("gpipe", "1f1b") if args.schedule == "both" else (args.schedule,)
    layouts = [
        TrainingLayout(pp=args.stages, microbatch_count=args.microbatches, schedule=name)
        for name in names
    ]
    schedule = tuple(lay.schedule for lay in layouts) if len(layouts) > 1 else layouts[0].schedule
    results = run_pipeline(
        layouts[0].pp,
        layouts[0].microbatch_count,
        schedule,
        microbatch_size=args.microbatch_size,
        steps=args.steps,
        layers=args.layers,
        forward_s=args.forward_ms / 1e3,
        backward_s=args.backward_ms / 1e3,
        timeout_s=args.timeout,
    )
    status = 0
    for kind, res in results.items():
        print(
            f"{kind}: p={res['stages']} stages, m={res['microbatches']} micro-batches, "
            f"step {_t(res['makespan_s'])} measured vs {_t(res['predicted_makespan_s'])} "
            "(m+p-1)(t_f+t_b)"
        )
        rows = [
            [s, f"{idle:.3f}", f"{res['predicted_bubble']:.3f}"]
            for s, idle in enumerate(res["idle_fraction"])
        ]
        print(format_table(["stage", "idle (measured)", "bubble (p-1)/(m+p-1)"], rows))
        diff = max(
            abs(a - b) / max(abs(b), 1e-30)
            for a, b in zip(res["losses"], res["reference_losses"], strict=True)
        )
        print(
            "losses: "
            + ", ".join(f"{x:.6f}" for x in res["losses"])
            + f"  (single process: max relative difference {diff:.1e})"
        )
        status |= 0 if diff < 1e-5 else 1
    return status


def _collectives(args: argparse.Namespace) -> int:
    from mlsys.emulate.collectives import run_collectives

    reports = run_collectives(args.ranks, args.bytes, timeout_s=args.timeout)
    rows = []
    for kind in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        per = [r[kind] for r in reports]
        sent = max(p["bytes_sent"] for p in per)
        rows.append(
            [
                kind,
                "yes" if all(p["equal"] for p in per) else "NO",
                _b(sent),
                _b(per[0]["predicted_bytes"]),
                _ok(sent, per[0]["predicted_bytes"]),
                _t(max(p["seconds_ring"] for p in per)),
                _t(max(p["seconds_library"] for p in per)),
                _t(per[0]["predicted_seconds"]),
            ]
        )
    link = reports[0]["link"]
    print(
        f"M = {_b(args.bytes)} fp32 on {args.ranks} gloo ranks; fitted link "
        f"α = {_t(link['latency_s'])} per step, β = {_bw(link['bandwidth_Bps'])}"
    )
    print(
        format_table(
            [
                "collective",
                "ring == gloo",
                "sent/rank",
                "predicted",
                "equal",
                "ring time",
                "gloo time",
                "α-β time",
            ],
            rows,
        )
    )
    return 0 if all(r[1] == "yes" and r[4] == "yes" for r in rows) else 1


def run(args: argparse.Namespace) -> int:
    """Run the chosen emulation and print measured against predicted.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments (see :func:`add_arguments`).

    Returns
    -------
    int
        0 when every measured byte count equals its prediction (and results match), 1
        otherwise, 2 for a usage error, 130 when interrupted (Ctrl-C).
    """
    handlers = {
        "matmul": _matmul,
        "ffn": _ffn,
        "pipeline": _pipeline,
        "collectives": _collectives,
    }
    workload = getattr(args, "workload", None)
    if workload not in handlers:
        print("usage: mlsys emulate {matmul,ffn,pipeline,collectives} [options]")
        return 2
    try:
        return handlers[workload](args)
    except KeyboardInterrupt:
        print("mlsys emulate: interrupted; every rank was stopped.")
        return 130
