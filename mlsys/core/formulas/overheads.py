"""Fixed costs a roofline leaves out: the per-kernel launch and synchronisation time.

Every kernel a GPU runs costs a few microseconds that do not depend on its size: the
host's launch call, the GPU's start of the grid, the drain of its last wave before the
next kernel (which depends on it) may start. A large kernel hides them; a decode step of
a small model runs a dozen kernels per layer of a few microseconds each, and there the
fixed costs are a fifth of the step.

This module counts kernels per transformer layer from the operators a layer runs (the
names are listed, so the count is the length of a list, not a bare number) and prices
them at :data:`KERNEL_OVERHEAD_S` each, less :data:`CUDA_GRAPH_LAUNCH_SAVING_S` where
an engine replays its decode step from a CUDA graph
(:func:`graph_replayed_kernel_overhead`). Collective latencies are not here: they are the
``α`` of :mod:`mlsys.core.formulas.collectives` (per NCCL protocol).

References
----------
Gray (2019), "Getting Started with CUDA Graphs", NVIDIA Technical Blog: a 2.9 µs
kernel launched back to back costs 3.8 µs per kernel when the host streams launches and
9.6 µs when each is synchronised — 0.9 to 6.7 µs of fixed cost per kernel — and 3.4 µs
per kernel when the same kernels are replayed from a CUDA graph.
Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053, Fig. 2-3, and Narayanan et al.
(2021), "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM", SC'21, Sec. 4.2 (the operators of a layer, and its fused element-wise
kernels: bias+GeLU, bias+dropout+add, scale+mask+softmax).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "KERNEL_OVERHEAD_S",
    "CUDA_GRAPH_LAUNCH_SAVING_S",
    "INFERENCE_LAYER_KERNELS",
    "TRAINING_LAYER_FORWARD_KERNELS",
    "TRAINING_LAYER_BACKWARD_KERNELS",
    "kernels_per_layer",
    "fixed_kernel_time",
    "graph_replayed_kernel_overhead",
]

KERNEL_OVERHEAD_S = 4e-6
"""Fixed time per kernel, in seconds: an estimate inside Gray's (2019) measured 0.9 µs
(streamed launches) to 6.7 µs (synchronised launches) per kernel, closer to the upper
end because each kernel of a layer waits for the previous one to drain."""

CUDA_GRAPH_LAUNCH_SAVING_S = 0.4e-6
"""Fixed time per kernel a CUDA graph saves over kernels launched one by one, in seconds:
Gray's (2019) 2.9 µs kernel, launched back to back on one stream, costs 3.8 µs a kernel
streamed from the host and 3.4 µs replayed from a graph (graph launch included), so
3.8 - 3.4 = 0.4 µs. A measurement outside the serving suite, not fitted to it."""

INFERENCE_LAYER_KERNELS: tuple[str, ...] = (
    "input norm",
    "QKV projection",
    "rotary embedding and KV-cache write",
    "attention",
    "output projection",
    "residual add and post-attention norm",
    "MLP up (and gate) projection",
    "activation",
    "MLP down projection",
    "residual add",
)
"""Kernels of one layer's forward pass in an inference engine with fused element-wise
kernels (TensorRT-LLM, lmdeploy TurboMind, vLLM): the tensor-parallel all-reduces are
collectives, priced with their own latency."""

TRAINING_LAYER_FORWARD_KERNELS: tuple[str, ...] = (
    "layer norm",
    "QKV projection",
    "attention scores Q·Kᵀ",
    "scale, mask and softmax",
    "attention over values P·V",
    "output projection",
    "bias, dropout and residual add",
    "layer norm",
    "MLP up projection",
    "bias and GeLU",
    "MLP down projection",
    "bias, dropout and residual add",
)
"""Kernels of one Megatron-LM layer's forward pass with its fused element-wise kernels
(Narayanan et al. 2021, Sec. 4.2). FlashAttention replaces the three attention kernels
by one (:func:`kernels_per_layer`)."""

TRAINING_LAYER_BACKWARD_KERNELS: tuple[str, ...] = (
    "dropout and residual gradient",
    "MLP down projection: data gradient",
    "MLP down projection: weight gradient",
    "GeLU gradient",
    "MLP up projection: data gradient",
    "MLP up projection: weight gradient",
    "layer norm gradient",
    "dropout and residual gradient",
    "output projection: data gradient",
    "output projection: weight gradient",
    "attention over values: two gradients",
    "softmax gradient",
    "attention scores: two gradients",
    "QKV projection: data gradient",
    "QKV projection: weight gradient",
    "layer norm gradient",
    "gradient accumulation",
)
"""Kernels of one layer's backward pass: every GEMM twice (data and weight gradients),
the element-wise gradients, and the accumulation of the weight gradients."""

_ATTENTION_UNFUSED_FORWARD = 3  # Q·Kᵀ, softmax, P·V
_ATTENTION_UNFUSED_BACKWARD = 3  # their gradients
_PHASES = ("inference", "forward", "backward")


def kernels_per_layer(phase: str = "inference", flash_attention: bool = True) -> int:
    """Kernels one transformer layer launches in a phase.

    Parameters
    ----------
    phase : {"inference", "forward", "backward"}
        An inference engine's forward pass, or a training forward or backward pass.
    flash_attention : bool
        A fused attention kernel (one kernel, forward or backward) instead of the
        unfused GEMM-softmax-GEMM (three). Inference engines always fuse.

    Returns
    -------
    int
        Kernels per layer.

    References
    ----------
    Narayanan et al. (2021), SC'21, Sec. 4.2 (Megatron-LM's fused kernels); Dao (2023),
    "FlashAttention-2" (one attention kernel per pass).

    Examples
    --------
    An inference layer runs 10 kernels; a Megatron training layer 12 forward and 17
    backward, or 10 and 15 with FlashAttention.

    >>> kernels_per_layer("inference"), kernels_per_layer("forward", False)
    (10, 12)
    >>> kernels_per_layer("forward", True) + kernels_per_layer("backward", True)
    25
    """
    if phase == "inference":
        return len(INFERENCE_LAYER_KERNELS)
    if phase == "forward":
        n = len(TRAINING_LAYER_FORWARD_KERNELS)
        return n - _ATTENTION_UNFUSED_FORWARD + 1 if flash_attention else n
    if phase == "backward":
        n = len(TRAINING_LAYER_BACKWARD_KERNELS)
        return n - _ATTENTION_UNFUSED_BACKWARD + 1 if flash_attention else n
    from mlsys.core.errors import ParameterError

    raise ParameterError("phase", phase, "one of " + ", ".join(_PHASES))


def fixed_kernel_time(kernels: Any, overhead_s: Any = KERNEL_OVERHEAD_S) -> Any:
    """Fixed time of a sequence of dependent kernels: ``kernels × overhead``.

    Parameters
    ----------
    kernels : float or ndarray
        Kernels launched one after another (e.g. layers × :func:`kernels_per_layer`).
    overhead_s : float or ndarray
        Fixed time per kernel, in seconds (default :data:`KERNEL_OVERHEAD_S`).

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Gray (2019), "Getting Started with CUDA Graphs", NVIDIA Technical Blog.

    Examples
    --------
    A Llama-2-7B decode step: 32 layers × 10 kernels × 4 µs = 1.28 ms.

    >>> round(fixed_kernel_time(32 * kernels_per_layer("inference")) * 1e3, 2)
    1.28
    """
    if type(kernels) in (int, float) and type(overhead_s) in (int, float):
        return float(kernels) * float(overhead_s)
    out = np.multiply(kernels, overhead_s)
    return float(out) if np.ndim(out) == 0 else out


def graph_replayed_kernel_overhead(
    overhead_s: Any = KERNEL_OVERHEAD_S, saving_s: Any = CUDA_GRAPH_LAUNCH_SAVING_S
) -> Any:
    """Fixed time per kernel of a step replayed from a CUDA graph.

    A graph submits its kernels to the device in one launch, so the driver's per-launch
    work between two dependent kernels goes; what stays is the device's own start and
    drain of each grid. The saving is Gray's measured difference between the two launch
    modes of one kernel, taken off the eagerly launched fixed cost and floored at zero.

    Parameters
    ----------
    overhead_s : float or ndarray
        Fixed time per eagerly launched kernel, in seconds (default
        :data:`KERNEL_OVERHEAD_S`).
    saving_s : float or ndarray
        What a graph saves per kernel, in seconds (default
        :data:`CUDA_GRAPH_LAUNCH_SAVING_S`).

    Returns
    -------
    float or ndarray
        Seconds per kernel, ``max(overhead_s - saving_s, 0)``.

    References
    ----------
    Gray (2019), "Getting Started with CUDA Graphs", NVIDIA Technical Blog: 3.8 µs a
    kernel streamed, 3.4 µs replayed from a graph (a 2.9 µs kernel).

    Examples
    --------
    4 µs per eager kernel less 0.4 µs: 3.6 µs. A Llama-2-7B decode step of 32 layers ×
    11 kernels saves 352 × 0.4 µs = 0.14 ms.

    >>> round(graph_replayed_kernel_overhead() * 1e6, 2)
    3.6
    >>> round(32 * 11 * (KERNEL_OVERHEAD_S - graph_replayed_kernel_overhead()) * 1e3, 3)
    0.141
    """
    if type(overhead_s) in (int, float) and type(saving_s) in (int, float):
        left = float(overhead_s) - float(saving_s)
        return left if left > 0.0 else 0.0
    out = np.maximum(np.subtract(overhead_s, saving_s), 0.0)
    return float(out) if np.ndim(out) == 0 else out
