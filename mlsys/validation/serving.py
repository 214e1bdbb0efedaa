"""Serving cases: ServingModel and ContinuousBatchingModel against published latencies
and throughputs of lmdeploy, TensorRT-LLM (v0.5 and v0.9), vLLM, NVIDIA NIM and gpt-fast."""

from __future__ import annotations

from mlsys.core.catalog import Hardware, Models
from mlsys.core.solvers.batching import ContinuousBatchingModel
from mlsys.core.solvers.serving import ServingModel, ServingResult
from mlsys.validation._case import Case, load_data

__all__ = ["capacity_cases", "latency_cases", "serve_row", "throughput_cases"]

_SOURCES = {
    "lmdeploy": (
        "InternLM/lmdeploy v0.1.0a1, docs/en/benchmark/a100_fp16.md ('Static Inference "
        "Benchmark' and 'Request Throughput Benchmark'), 8× A100-80G, fp16",
        "https://github.com/InternLM/lmdeploy/blob/3e391df4673326f79363eebe030876861a9b7090/docs/en/benchmark/a100_fp16.md",
    ),
    "trtllm": (
        "NVIDIA/TensorRT-LLM, docs/source/performance.md (v0.6.1 page, data from v0.5), "
        "'Low Latency' tables, batch 1 first-token latency; H100 rows FP8",
        "https://github.com/NVIDIA/TensorRT-LLM/blob/138f96d45f90b9667426f7c47297d8c06bafac73/docs/source/performance.md",
    ),
    "trtllm-v0.5": (
        "NVIDIA/TensorRT-LLM, docs/source/performance.md at release/0.5.0, 'High Throughput', "
        "H100 FP8 engines, output tokens/s of the TP group",
        "https://github.com/NVIDIA/TensorRT-LLM/blob/release/0.5.0/docs/source/performance.md",
    ),
    "vllm-nightly": (
        "vLLM nightly performance benchmark (buildkite vllm/performance-benchmark build 9515), "
        "'Latency tests' on H200: benchmark_latency.py, batch 8, 32 prompt and 128 output "
        "tokens, mean end-to-end latency; tests from .buildkite/nightly-benchmarks/tests/"
        "latency-tests.json",
        "https://buildkite.com/vllm/performance-benchmark/builds/9515",
    ),
    "vllm-nightly-h100": (
        "vLLM performance benchmark (buildkite vllm/performance-benchmark build 9555, "
        "the weeks of vLLM PR 9768), 'Latency tests' on 8xH100: benchmark_latency.py, batch 8, "
        "32 prompt and 128 output tokens, mean end-to-end latency",
        "https://buildkite.com/vllm/performance-benchmark/builds/9555",
    ),
    "vllm-nightly-a100": (
        "vLLM performance benchmark (buildkite vllm/performance-benchmark build 9523, "
        "the weeks of vLLM PR 9768), 'Latency tests' on A100-SXM4-80GB: benchmark_latency.py, "
        "batch 8, 32 prompt and 128 output tokens, mean end-to-end latency",
        "https://buildkite.com/vllm/performance-benchmark/builds/9523",
    ),
    "nim": (
        "NVIDIA NIM LLM benchmarking guide, 'Performance': Llama-3.3-70b-instruct NIM 1.8.0, "
        "2 x H100 80G, fp8 TP2, AIPerf at concurrency 1",
        "https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance",
    ),
    "gpt-fast": (
        "pytorch-labs/gpt-fast, README.md, 'Benchmarks' and 'Tensor Parallelism' tables: "
        "8x A100-80GB power-limited to 330 W, hybrid cube mesh, batch 1, 5-token prompt, "
        "generate.py --compile, ENABLE_INTRA_NODE_COMM=1 for tensor parallelism",
        "https://github.com/pytorch-labs/gpt-fast/blob/0f925b5d/README.md",
    ),
    "trtllm-v0.9": (
        "NVIDIA/TensorRT-LLM, docs/source/performance.md at v0.9.0 ('All data was generated "
        "using version 0.9.0'): 'Low Latency' batch-1 first-token latency and 'Peak "
        "Throughput' output tokens/s per GPU; H200/H100 FP8, A100 FP16",
        "https://github.com/NVIDIA/TensorRT-LLM/blob/v0.9.0/docs/source/performance.md",
    ),
}
_METRIC = {
    "itl": "time per output token",
    "ttft": "time to first token",
    "e2e_latency": "end-to-end latency of a static batch",
}
_SLACK = 0.05  # a bound may be missed by this much on its wrong side


def serve_row(row: dict) -> ServingResult:
    """Solve one serving row of ``serving.toml`` as the suite reads it.

    Parameters
    ----------
    row : dict
        A ``[[point]]`` or ``[[throughput]]`` table: catalog model and hardware, batch,
        prompt and output lengths in tokens, precisions, ``tp_size``, the serving
        ``engine`` (a row of ``mlsys/core/catalog/data/engines.toml``; absent, the
        ``engine_of_source`` entry of the row's ``source``, else the reference engine) and
        any engine property the row states itself (``gate_up_fused``,
        ``decode_attention_heads_per_block``, ``host_time_per_step`` in seconds,
        ``host_overlap``, ``tp_allreduce``, ``vocab_parallel``, ``cuda_graphs``), which
        overrides the
        engine's; ``batched_prefill``.

    Returns
    -------
    ServingResult
        The solve (latencies in seconds, throughputs in tokens per second).

    References
    ----------
    The row's own ``source`` (see the file's header).
    """
    engine = row.get("engine") or load_data("serving")["engine_of_source"].get(row.get("source"))
    own = {k: row[k] for k in _ENGINE_FIELDS if k in row}
    return ServingModel(engine=engine).solve(
        Models[row["model"]],
        Hardware[row["hardware"]],
        batch_size=row["batch_size"],
        prompt_len=row["prompt_len"],
        output_len=row["output_len"],
        precision=row["precision"],
        kv_precision=row.get("kv_precision"),
        tp_size=row["tp_size"],
        batched_prefill=row.get("batched_prefill", False),
        **own,
    )


_ENGINE_FIELDS = (
    "decode_attention_heads_per_block",
    "gate_up_fused",
    "host_time_per_step",
    "host_overlap",
    "tp_allreduce",
    "vocab_parallel",
    "cuda_graphs",
)


def _label(row: dict) -> str:
    tp = f" TP{row['tp_size']}" if row["tp_size"] > 1 else ""
    return f"{row['model']}{tp} {row['hardware']} {row['precision']}"


def latency_cases() -> list[Case]:
    """Decode step (ITL), first-token latency (TTFT) and static-batch end-to-end rows.

    An ``e2e_latency`` row with ``batched_prefill = true`` is one batch's prefill and its
    ``output_len - 1`` decode steps (vLLM's benchmark_latency.py).

    The model is an optimistic roofline, so ``lower_bound_only`` rows (fixed overheads
    dominate) are judged one-sided: mlsys must not exceed the measurement.
    """
    out = []
    for row in load_data("serving")["point"]:
        citation, url = _SOURCES[row["source"]]
        lower = row.get("lower_bound_only", False)
        out.append(
            Case(
                group="Serving: latency",
                name=f"{_label(row)} b{row['batch_size']} in{row['prompt_len']} ({row['id']})",
                quantity=_METRIC[row["metric"]],
                unit="s",
                published=float(row["published"]),
                predicted=serve_row(row).si(row["metric"]),
                tolerance=_SLACK if lower else row["tolerance"],
                basis="prediction",
                method="performance model",
                citation=citation,
                url=url,
                bound="at_most" if lower else None,
                note=row.get("note", ""),
                assumptions=load_data("serving").get("assumed", ""),
            )
        )
    return out


def throughput_cases() -> list[Case]:
    """Static-batch output throughput (TensorRT-LLM v0.5 and v0.9).

    A row's ``source`` defaults to v0.5's table (output tokens/s of the TP group);
    ``per_accelerator = true`` rows publish tokens/s per GPU (v0.9's table) and are
    compared with ``tokens_per_second_per_accelerator``.
    """
    out = []
    for row in load_data("serving")["throughput"]:
        citation, url = _SOURCES[row.get("source", "trtllm-v0.5")]
        per_gpu = row.get("per_accelerator", False)
        bound = row.get("bound_only", False)
        suffix = f" ({row['id']})" if "source" in row else ""
        out.append(
            Case(
                group="Serving: throughput",
                name=(
                    f"{_label(row)} b{row['batch_size']} "
                    f"{row['prompt_len']}→{row['output_len']}{suffix}"
                ),
                quantity="output tokens/s per GPU" if per_gpu else "output tokens/s",
                unit="token/s",
                published=float(row["published"]),
                predicted=serve_row(row).si(
                    "tokens_per_second_per_accelerator" if per_gpu else "tokens_per_second"
                ),
                tolerance=_SLACK if bound else row["tolerance"],
                basis="prediction",
                method="performance model",
                citation=citation,
                url=url,
                bound="at_least" if bound else None,
                note=row.get("note", ""),
                assumptions=load_data("serving").get("assumed", ""),
            )
        )
    return out


def capacity_cases() -> list[Case]:
    """Saturation request rate under continuous batching (lmdeploy request benchmark)."""
    citation, url = _SOURCES["lmdeploy"]
    out = []
    for row in load_data("serving")["capacity"]:
        rps = row["published_rps"]
        out_len = row["out_tokens_per_s"] / rps
        prompt_len = (row["total_tokens_per_s"] - row["out_tokens_per_s"]) / rps
        res = ContinuousBatchingModel().solve(
            Models[row["model"]],
            Hardware[row["hardware"]],
            arrival_rate=1.0,
            prompt_len={"distribution": "exponential", "mean": prompt_len},
            output_len={"distribution": "exponential", "mean": out_len},
            precision=row["precision"],
            tp_size=row["tp_size"],
            max_num_seqs=row["max_num_seqs"],
            decode_attention_heads_per_block=row.get("decode_attention_heads_per_block"),
            gate_up_fused=row.get("gate_up_fused", True),
            host_time_per_step=row.get("host_time_per_step", 0.0),
            host_overlap=row.get("host_overlap", False),
            tp_allreduce=row.get("tp_allreduce", "nccl"),
            vocab_parallel=row.get("vocab_parallel", True),
        )
        bound = row.get("bound_only", False)
        row_ = dict(row, batch_size=row["max_num_seqs"])
        out.append(
            Case(
                group="Serving: throughput",
                name=f"{_label(row_)} max_num_seqs {row['max_num_seqs']} ({row['id']})",
                quantity="saturation request rate",
                unit="request/s",
                published=float(rps),
                predicted=res.si("max_arrival_rate"),
                tolerance=_SLACK if bound else row["tolerance"],
                basis="prediction",
                method="performance model",
                citation=citation,
                url=url,
                bound="at_least" if bound else None,
                note=row.get("note", ""),
                assumptions=load_data("serving").get("assumed", ""),
            )
        )
    return out
