"""Serving engines and releases as data: ``data/engines.toml``, one cited row per engine.

A serving engine's kernels and loop change what a decode step costs as much as the GPU
does: which decode-attention kernel reads the KV cache (and how many times under
grouped-query attention), whether gate and up projections are one GEMM, how tensor-parallel
all-reduces run, and how much host work each iteration adds. Each row of the table gives
those choices for one engine and version, with its source; ``ServingModel(engine=...)``
takes them as the defaults of the matching ``solve`` parameters.

>>> from mlsys.core.catalog.engines import serving_engine
>>> serving_engine("trtllm-0.5").decode_attention_heads_per_block
1
>>> serving_engine("TRTLLM_0.5") is serving_engine("trtllm-0.5")
True
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover
    import tomli as _toml

from mlsys.core.errors import ParameterError

__all__ = ["DEFAULT_ENGINE", "ServingEngine", "serving_engine", "serving_engines"]

DEFAULT_ENGINE = "reference"
"""The engine ServingModel prices when none is named: group-packed decode attention,
fused gate and up, NCCL all-reduces, no host work charged (see its row)."""

_FILE = Path(__file__).with_name("data") / "engines.toml"
_KNOBS = (
    "decode_attention_heads_per_block",
    "gate_up_fused",
    "tp_allreduce",
    "vocab_parallel",
    "host_overlap",
    "host_time",
    "cuda_graphs",
)


@dataclass(frozen=True)
class ServingEngine:
    """One serving engine and version: its kernel choices and host work.

    Attributes
    ----------
    name : str
        Canonical key (e.g. ``"trtllm-0.5"``).
    display_name, description, citation : str
        What it is, what of it mlsys prices, and where each choice is read from.
    decode_attention_heads_per_block : int or None
        Query heads per thread block of its decode-attention kernel; ``None``: the kernel
        reads each KV head once for its whole group.
    gate_up_fused : bool
        Gate and up projections of a gated MLP as one GEMM.
    tp_allreduce : {"nccl", "custom"}
        How it runs tensor-parallel all-reduces.
    vocab_parallel : bool
        Embedding and output head split over the tensor-parallel GPUs.
    host_overlap : bool
        It schedules one step ahead of the device.
    host_time : str or None
        Key of :data:`mlsys.core.formulas.serving.ENGINE_HOST_TIME_PER_STEP_S` holding its
        measured host time per iteration; ``None``: none charged.
    cuda_graphs : bool
        Its decode steps replay a CUDA graph (a lower fixed cost per kernel:
        :func:`mlsys.core.formulas.overheads.graph_replayed_kernel_overhead`).
    """

    name: str
    display_name: str
    description: str
    citation: str
    decode_attention_heads_per_block: int | None
    gate_up_fused: bool
    tp_allreduce: str
    vocab_parallel: bool
    host_overlap: bool
    host_time: str | None
    cuda_graphs: bool


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


@cache
def serving_engines() -> dict[str, ServingEngine]:
    """Every engine of ``data/engines.toml``, by canonical name.

    Returns
    -------
    dict
        Name -> :class:`ServingEngine`; a field a row leaves out takes the reference row's.
    """
    with _FILE.open("rb") as fh:
        table = _toml.load(fh)
    base = table[DEFAULT_ENGINE]
    out = {}
    for name, row in table.items():
        merged = {k: row.get(k, base.get(k)) for k in _KNOBS}
        out[name] = ServingEngine(
            name=name,
            display_name=row["display_name"],
            description=row["description"],
            citation=row["citation"],
            **merged,
        )
    return out


@cache
def _index() -> dict[str, str]:
    """Normalised name or alias -> canonical engine name."""
    with _FILE.open("rb") as fh:
        table = _toml.load(fh)
    out = {}
    for name, row in table.items():
        for spelling in (name, *row.get("aliases", ())):
            out[_key(spelling)] = name
    return out


def serving_engine(name: str | None) -> ServingEngine:
    """One engine by name (case and separators ignored); ``None`` is the default engine.

    Parameters
    ----------
    name : str or None
        E.g. ``"vllm-v0"``, ``"trtllm-0.9"``, ``"lmdeploy-0.1"``, ``"sglang"``, or one of
        a row's ``aliases`` (``"tensorrt-llm-v0.5"``).

    Returns
    -------
    ServingEngine

    Raises
    ------
    ParameterError
        For a name the table does not hold; the message lists the known engines.
    """
    engines = serving_engines()
    if name is None:
        return engines[DEFAULT_ENGINE]
    found = _index().get(_key(str(name)))
    if found is not None:
        return engines[found]
    raise ParameterError("engine", name, "one of " + ", ".join(map(repr, engines)))
