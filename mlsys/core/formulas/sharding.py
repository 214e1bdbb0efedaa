"""Communication of a tensor-parallel matmul under each sharding policy.

The product ``C[m, n] = A[m, k] · B[k, n]`` is computed on ``N`` ranks. Where an operand
is split decides which collective restores a replicated result, and how many bytes each
rank moves. The policies, with ``e`` bytes per element and every split even:

=============  ===============================  ==========================  ===================
policy         A / B placement                  collective(s)               bytes sent per rank
=============  ===============================  ==========================  ===================
unsharded      both replicated                  none                        0
inner          A split on k, B split on k       all-reduce of C (m·n)       2(N-1)/N · m n e
               (partial sums of C)              (reduce-scatter if
                                                ``output="sharded"``)       (N-1)/N · m n e
inner_a        A split on k, B replicated       all-gather of A (m·k)       (N-1)/N · m k e
inner_b        A replicated, B split on k       all-gather of B (k·n)       (N-1)/N · k n e
outer_m        A split on m, B replicated       all-gather of C (m·n)       (N-1)/N · m n e
outer_n        A replicated, B split on n       all-gather of C (m·n)       (N-1)/N · m n e
outer_inner    2-D mesh To × Ti = N:            all-reduce of C[m/To, n]    2(Ti-1)/Ti · m n e/To
               A split on m over To and on k    over Ti, then all-gather    + (To-1)/To · m n e
               over Ti; B split on k over Ti    of C over To
=============  ===============================  ==========================  ===================

When only one operand is split along the contracted dimension (``inner_a``, ``inner_b``)
the other has nothing to gather; the rule used here is to **all-gather the split operand
first**, then multiply locally. The alternative — contract the local slice against the
matching slice of the replicated operand and all-reduce the partial ``C`` — moves
``2(N-1)/N · m n e`` instead; it is the ``inner`` row.

"Bytes sent per rank" uses ring collectives (:mod:`mlsys.core.formulas.collectives`)
and equals the bytes each rank receives.

References
----------
Shoeybi et al. (2019), "Megatron-LM: Training multi-billion parameter language models
using model parallelism", arXiv:1909.08053, Sec. 3.
Austin et al. (2025), "How to Scale Your Model", Google DeepMind, part 3 "Sharded
matrices and how to multiply them" (cases by sharded dimension).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mlsys.core.errors import ParameterError
from mlsys.core.formulas.collectives import (
    _ranks,
    _ret,
    collective_bytes_per_rank,
    collective_time,
)
from mlsys.core.precision import bytes_per_element

__all__ = [
    "SHARDING_POLICIES",
    "CollectiveStep",
    "matmul_collectives",
    "matmul_bytes_per_rank",
    "matmul_communication_time",
    "megatron_mlp_allreduce_bytes",
    "megatron_mlp_bytes_per_rank",
]

SHARDING_POLICIES: tuple[str, ...] = (
    "unsharded",
    "inner",
    "inner_a",
    "inner_b",
    "outer_m",
    "outer_n",
    "outer_inner",
)
"""Matmul sharding policies (``"outer"`` is accepted for ``"outer_m"``, ``"both"`` for
``"outer_inner"``, ``"replicated"`` for ``"unsharded"``)."""

_POLICY_ALIASES: dict[str, str] = {
    "outer": "outer_m",
    "both": "outer_inner",
    "replicated": "unsharded",
    "none": "unsharded",
}

_OUTPUTS = ("replicated", "sharded")


@dataclass(frozen=True)
class CollectiveStep:
    """One collective of a sharded computation.

    Attributes
    ----------
    kind : str
        Canonical collective name (``"all_reduce"``, ``"all_gather"``,
        ``"reduce_scatter"``).
    group_size : int
        Ranks in the group that runs it.
    message_bytes : float or ndarray
        Buffer size ``M`` in bytes, in the convention of
        :mod:`mlsys.core.formulas.collectives`.
    bytes_per_rank : float or ndarray
        Bytes each rank of the group sends (ring algorithms).
    operand : str
        The tensor moved: ``"A"``, ``"B"`` or ``"C"``.
    """

    kind: str
    group_size: int
    message_bytes: Any
    bytes_per_rank: Any
    operand: str


def _policy(policy: str) -> str:
    if not isinstance(policy, str):
        raise ParameterError("policy", policy, "one of " + ", ".join(SHARDING_POLICIES))
    key = policy.strip().lower().replace("-", "_")
    key = _POLICY_ALIASES.get(key, key)
    if key not in SHARDING_POLICIES:
        raise ParameterError("policy", policy, "one of " + ", ".join(SHARDING_POLICIES))
    return key


def _elem_bytes(precision: Any) -> float:
    if isinstance(precision, str):
        return bytes_per_element(precision)
    if isinstance(precision, (int, float)) and not isinstance(precision, bool) and precision > 0:
        return float(precision)
    raise ParameterError("precision", precision, "a precision name such as 'fp32', or bytes > 0")


def _dim(value: Any, name: str) -> Any:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(name, value, "a positive integer matrix dimension") from None
    if not np.all(np.isfinite(arr)) or np.any(arr < 1):
        raise ParameterError(name, value, "a positive integer matrix dimension")
    return float(arr) if arr.ndim == 0 else arr


def _square_split(n: int) -> int:
    """Largest divisor of ``n`` not above its square root (the inner mesh axis)."""
    best = 1
    for d in range(1, int(n**0.5) + 1):
        if n % d == 0:
            best = d
    return best


def matmul_collectives(
    policy: str,
    m: Any,
    k: Any,
    n: Any,
    ranks: int,
    precision: Any = "fp32",
    *,
    output: str = "replicated",
    inner_ranks: int | None = None,
) -> tuple[CollectiveStep, ...]:
    """The collectives a sharded matmul ``C[m,n] = A[m,k]·B[k,n]`` runs, in order.

    Parameters
    ----------
    policy : str
        One of :data:`SHARDING_POLICIES` (see the module table).
    m, k, n : int or ndarray
        Matrix dimensions (elements).
    ranks : int
        Ranks ``N`` sharing the product.
    precision : str or float
        Element type (``"fp32"``, ``"bf16"`` ...) or bytes per element.
    output : {"replicated", "sharded"}
        Whether every rank must end with all of ``C`` (default) or only its shard (then
        ``inner`` reduce-scatters instead of all-reducing and ``outer_*`` gathers
        nothing; ``outer_inner`` reduce-scatters over the inner axis and stops).
    inner_ranks : int, optional
        For ``outer_inner``: ranks ``Ti`` on the inner (k) mesh axis; ``N/Ti`` are on the
        outer (m) axis. Default: the most square split with ``Ti <= To``.

    Returns
    -------
    tuple of CollectiveStep
        Empty for ``unsharded``.

    References
    ----------
    Austin et al. (2025), "How to Scale Your Model", part 3 (sharded matmul cases);
    Patarasuk & Yuan (2009), J. Parallel Distrib. Comput. 69(2) (ring volumes).

    Examples
    --------
    Inner-sharded 1024³ fp32 matmul on 4 ranks: one all-reduce of the 4 MiB result,
    each rank sending 1.5 × 4 MiB = 6 MiB.

    >>> (step,) = matmul_collectives("inner", 1024, 1024, 1024, 4)
    >>> step.kind, step.message_bytes, step.bytes_per_rank
    ('all_reduce', 4194304.0, 6291456.0)
    """
    pol = _policy(policy)
    if output not in _OUTPUTS:
        raise ParameterError("output", output, "one of " + ", ".join(_OUTPUTS))
    N = _ranks(ranks)
    if np.ndim(N) != 0:
        raise ParameterError("ranks", ranks, "a single integer (dimensions may be arrays)")
    N = int(N)
    e = _elem_bytes(precision)
    m, k, n = _dim(m, "m"), _dim(k, "k"), _dim(n, "n")
    sharded = output == "sharded"

    def step(kind: str, group: int, msg: Any, operand: str) -> CollectiveStep:
        return CollectiveStep(
            kind, group, _ret(msg), collective_bytes_per_rank(kind, msg, group), operand
        )

    if pol == "unsharded" or (N == 1 and pol != "outer_inner"):
        return ()
    if pol == "inner":
        return (step("reduce_scatter" if sharded else "all_reduce", N, m * n * e, "C"),)
    if pol == "inner_a":
        return (step("all_gather", N, m * k * e, "A"),)
    if pol == "inner_b":
        return (step("all_gather", N, k * n * e, "B"),)
    if pol in ("outer_m", "outer_n"):
        return () if sharded else (step("all_gather", N, m * n * e, "C"),)
    # outer_inner on a To x Ti mesh
    Ti = _square_split(N) if inner_ranks is None else int(_ranks(inner_ranks, "inner_ranks"))
    if N % Ti != 0:
        raise ParameterError("inner_ranks", inner_ranks, f"a divisor of ranks={N}")
    To = N // Ti
    steps = []
    if Ti > 1:
        kind = "reduce_scatter" if sharded else "all_reduce"
        steps.append(step(kind, Ti, m * n * e / To, "C"))
    if To > 1 and not sharded:
        steps.append(step("all_gather", To, m * n * e, "C"))
    return tuple(steps)


def matmul_bytes_per_rank(
    policy: str,
    m: Any,
    k: Any,
    n: Any,
    ranks: int,
    precision: Any = "fp32",
    *,
    output: str = "replicated",
    inner_ranks: int | None = None,
) -> Any:
    """Bytes each rank sends for a sharded matmul ``C[m,n] = A[m,k]·B[k,n]``.

    The sum over :func:`matmul_collectives`; see the module table for the closed forms.

    Parameters
    ----------
    policy : str
        One of :data:`SHARDING_POLICIES`.
    m, k, n : int or ndarray
        Matrix dimensions (elements); broadcastable.
    ranks : int
        Ranks ``N``.
    precision : str or float
        Element type or bytes per element.
    output : {"replicated", "sharded"}
        Whether the result must be replicated on every rank.
    inner_ranks : int, optional
        Inner mesh axis size for ``outer_inner``.

    Returns
    -------
    float or ndarray
        Bytes.

    References
    ----------
    Austin et al. (2025), "How to Scale Your Model", part 3; Patarasuk & Yuan (2009),
    J. Parallel Distrib. Comput. 69(2).

    Examples
    --------
    ``outer_inner`` on 2×2 ranks, 1024³ fp32: all-reduce 2 MiB over 2 ranks (2 MiB sent)
    then all-gather 4 MiB over 2 ranks (2 MiB sent): 4 MiB = 4194304 bytes.

    >>> matmul_bytes_per_rank("outer_inner", 1024, 1024, 1024, 4)
    4194304.0
    """
    steps = matmul_collectives(
        policy, m, k, n, ranks, precision, output=output, inner_ranks=inner_ranks
    )
    shape = np.broadcast(_dim(m, "m"), _dim(k, "k"), _dim(n, "n")).shape
    total: Any = np.zeros(shape)
    for s in steps:
        total = total + s.bytes_per_rank
    return _ret(total)


def matmul_communication_time(
    policy: str,
    m: Any,
    k: Any,
    n: Any,
    ranks: int,
    bandwidth_Bps: Any,
    latency_s: Any,
    precision: Any = "fp32",
    *,
    output: str = "replicated",
    inner_ranks: int | None = None,
) -> Any:
    """Time of the collectives of a sharded matmul (ring algorithms, run in sequence).

    Parameters
    ----------
    policy : str
        One of :data:`SHARDING_POLICIES`.
    m, k, n : int or ndarray
        Matrix dimensions (elements).
    ranks : int
        Ranks ``N``.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth of one rank, in bytes per second.
    latency_s : float or ndarray
        Per-step latency, in seconds.
    precision : str or float
        Element type or bytes per element.
    output : {"replicated", "sharded"}
        Whether the result must be replicated on every rank.
    inner_ranks : int, optional
        Inner mesh axis size for ``outer_inner``.

    Returns
    -------
    float or ndarray
        Seconds (communication only; the local matmul is not included).

    References
    ----------
    Thakur, Rabenseifner & Gropp (2005), "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1).

    Examples
    --------
    Inner-sharded 8192³ bf16 matmul on 8 ranks at 450 GB/s, 1 µs: an all-reduce of
    128 MiB, 14 µs + 1.75 · 134217728 B / 450 GB/s = 536.0 µs.

    >>> round(matmul_communication_time("inner", 8192, 8192, 8192, 8, 450e9, 1e-6, "bf16") * 1e6, 1)
    536.0
    """
    steps = matmul_collectives(
        policy, m, k, n, ranks, precision, output=output, inner_ranks=inner_ranks
    )
    total: Any = 0.0
    for s in steps:
        total = total + collective_time(
            s.kind, s.message_bytes, s.group_size, bandwidth_Bps, latency_s
        )
    return _ret(np.asarray(total, dtype=float))


def megatron_mlp_allreduce_bytes(
    batch_size: Any, seq_len: Any, hidden: Any, precision: Any = "bf16"
) -> Any:
    """Size of the one all-reduce a Megatron tensor-parallel MLP runs per pass.

    The first linear layer is split by columns (each rank holds ``4h/t`` of the
    intermediate features, so GeLU needs no communication); the second by rows, so its
    outputs are partial sums of the full ``b × s × h`` activation, all-reduced once in
    the forward pass (operator ``g``). In the backward pass the gradient with respect to
    the block's input is a partial sum too and is all-reduced once (operator ``f``).

    Parameters
    ----------
    batch_size : int or ndarray
        Micro-batch size ``b`` (sequences).
    seq_len : int or ndarray
        Sequence length ``s`` (tokens).
    hidden : int or ndarray
        Hidden size ``h``.
    precision : str or float
        Activation element type or bytes per element.

    Returns
    -------
    float or ndarray
        Bytes: ``b·s·h·e``.

    References
    ----------
    Shoeybi et al. (2019), "Megatron-LM: Training multi-billion parameter language
    models using model parallelism", arXiv:1909.08053, Sec. 3 and Fig. 3 (``f``/``g``).

    Examples
    --------
    b = 1, s = 2048, h = 12288 in bf16: 50331648 bytes (48 MiB) per all-reduce.

    >>> megatron_mlp_allreduce_bytes(1, 2048, 12288, "bf16")
    50331648.0
    """
    e = _elem_bytes(precision)
    b, s, h = _dim(batch_size, "batch_size"), _dim(seq_len, "seq_len"), _dim(hidden, "hidden")
    return _ret(np.asarray(b * s * h * e, dtype=float))


def megatron_mlp_bytes_per_rank(
    batch_size: Any,
    seq_len: Any,
    hidden: Any,
    tp_size: int,
    precision: Any = "bf16",
    passes: str = "both",
) -> Any:
    """Bytes each rank sends for a Megatron tensor-parallel MLP block (ring all-reduces).

    Parameters
    ----------
    batch_size : int or ndarray
        Micro-batch size ``b``.
    seq_len : int or ndarray
        Sequence length ``s``.
    hidden : int or ndarray
        Hidden size ``h``.
    tp_size : int
        Tensor-parallel ranks ``t``.
    precision : str or float
        Activation element type or bytes per element.
    passes : {"forward", "backward", "both"}
        Which passes to count (one all-reduce each).

    Returns
    -------
    float or ndarray
        Bytes: ``2(t-1)/t · b·s·h·e`` per pass.

    References
    ----------
    Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053, Sec. 3.

    Examples
    --------
    b = 1, s = 2048, h = 12288 in bf16 on t = 8, forward and backward:
    2 × 1.75 × 48 MiB = 168 MiB = 176160768 bytes.

    >>> megatron_mlp_bytes_per_rank(1, 2048, 12288, 8, "bf16")
    176160768.0
    """
    count = {"forward": 1, "backward": 1, "both": 2}.get(passes)
    if count is None:
        raise ParameterError("passes", passes, "one of forward, backward, both")
    msg = megatron_mlp_allreduce_bytes(batch_size, seq_len, hidden, precision)
    return _ret(count * np.asarray(collective_bytes_per_rank("all_reduce", msg, tp_size)))
