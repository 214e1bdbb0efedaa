"""``mlsys demo``: a short tour that prints a roofline table and a training-memory table.

Every number is computed from the shipped catalog by the solvers; nothing is typed in.
"""

from __future__ import annotations

import argparse

from mlsys.cli import positive_int

__all__ = ["add_arguments", "run", "roofline_rows", "memory_rows", "table"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach the ``demo`` subcommand's arguments.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    parser.add_argument("--model", default="Llama3_8B", help="model for the roofline table")
    parser.add_argument("--train-model", default="Llama2_70B", help="model for the memory table")
    parser.add_argument(
        "--dp-size", type=positive_int, default=64, help="data-parallel ranks for ZeRO"
    )


def table(header: list[str], rows: list[list[str]]) -> str:
    """Render rows as a GitHub-flavoured Markdown table (readable as plain text too).

    Parameters
    ----------
    header : list of str
        Column titles.
    rows : list of list of str
        Cells.

    Returns
    -------
    str
    """
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    return "\n".join([line, rule, *body])


def roofline_rows(model_name: str) -> list[list[str]]:
    """One row per (accelerator, phase, batch): latency, throughput, bound and MFU.

    Parameters
    ----------
    model_name : str
        Catalog model.

    Returns
    -------
    list of list of str
    """
    from mlsys.core.catalog import Hardware, Models
    from mlsys.core.fmt import fmt, pct
    from mlsys.core.solvers.roofline import SingleNodeModel

    model = Models.get(model_name)
    solver = SingleNodeModel()
    rows = []
    for device in ("A100_80GB", "H100", "H200"):
        if device not in Hardware:
            continue
        hw = Hardware.get(device)
        for phase, batch in (("prefill", 1), ("decode", 1), ("decode", 64)):
            res = solver.solve(model, hw, batch_size=batch, phase=phase, seq_len=2048)
            rows.append(
                [
                    hw.name,
                    phase,
                    str(batch),
                    fmt(res.latency, digits=3),
                    fmt(res.tokens_per_second, digits=3),
                    res.bound,
                    pct(res.mfu, digits=2),
                    "yes" if res.feasible else "no",
                ]
            )
    return rows


def memory_rows(model_name: str, dp_size: int) -> list[list[str]]:
    """One row per ZeRO stage: per-GPU weights, gradients, optimizer, activations, total.

    bf16 training with MemoryModel's defaults: bf16 weights, fp32 gradients
    (:func:`mlsys.core.precision.default_grad_dtype`), Adam state of 12 bytes per
    parameter.

    Parameters
    ----------
    model_name : str
        Catalog model.
    dp_size : int
        Data-parallel ranks the ZeRO stages partition over.

    Returns
    -------
    list of list of str
    """
    from mlsys.core.catalog import Hardware, Models
    from mlsys.core.fmt import fmt
    from mlsys.core.solvers.memory import MemoryModel

    model = Models.get(model_name)
    hw = Hardware.get("H100")
    rows = []
    for stage in (0, 1, 2, 3):
        res = MemoryModel().solve(
            model,
            hw,
            batch_size=dp_size,
            seq_len=4096,
            dp_size=dp_size,
            tp_size=8,
            zero_stage=stage,
            recompute="selective",
            sequence_parallel=True,
        )
        rows.append(
            [
                f"ZeRO-{stage}",
                *(
                    fmt(res[k], "GB", digits=3)
                    for k in ("weights", "gradients", "optimizer_state", "activations", "total")
                ),
                "yes" if res.feasible else "no",
            ]
        )
    return rows


def run(args: argparse.Namespace) -> int:
    """Print the two tables.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments.

    Returns
    -------
    int
        Exit status (0).
    """
    # Both tables are computed before either is printed: a bad argument fails cleanly,
    # not after half the output.
    roofline = roofline_rows(args.model)
    memory = memory_rows(args.train_model, args.dp_size)
    print(f"Roofline of {args.model} on one accelerator (bf16, 2,048-token context)\n")
    print(
        table(
            ["device", "phase", "batch", "latency", "throughput", "bound", "MFU", "fits"],
            roofline,
        )
    )
    print(
        f"\nTraining memory per H100 for {args.train_model}: TP 8, DP {args.dp_size}, "
        "4,096 tokens, selective recompute, sequence parallel, mixed-precision Adam "
        "(bf16 weights, fp32 gradients)\n"
    )
    print(
        table(
            ["stage", "weights", "gradients", "optimizer", "activations", "total", "fits"],
            memory,
        )
    )
    return 0
