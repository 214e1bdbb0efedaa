"""The work a mixture-of-experts layer adds around its expert GEMMs in training.

A dropless MoE layer with expert parallelism (Megatron-Core's all-to-all token
dispatcher) does more than its experts' matmuls: it copies every token once per chosen
expert into expert order (the *permute*), exchanges the copies with the other expert
ranks (the all-to-all, priced in :mod:`mlsys.core.formulas.collectives`), regroups the
received chunks from (source rank, expert) order into expert order when a rank holds
more than one expert (the *chunk sort*), runs the experts, and undoes each step on the
way back, the last one (the *unpermute*) summing each token's ``k`` expert outputs
weighted by its routing probabilities. These copies are memory-bound: this module
counts their bytes. The backward pass moves the same bytes in the opposite direction
(the gradient of a gather is a scatter-add and the other way round).

References
----------
Lepikhin et al. (2021), "GShard", ICLR, Sec. 2.2 (dispatch and combine around the
experts); Fedus, Zoph & Shazeer (2022), "Switch Transformers", JMLR 23, Sec. 2.1; NVIDIA
Megatron-Core, ``megatron/core/transformer/moe/token_dispatcher.py``
(``MoEAlltoAllTokenDispatcher``: permute, all-to-all, ``sort_chunks_by_idxs`` when a
rank holds several experts, and their inverses) and ``moe_utils.py`` (``permute``,
``unpermute``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "tokens_per_local_expert",
    "moe_token_shuffle_bytes",
]


def tokens_per_local_expert(
    tokens: Any, experts_per_token: Any, expert_parallel: Any, experts: Any
) -> Any:
    """Rows each local expert's GEMMs take under perfectly balanced routing.

    ``T`` tokens on each of ``ep`` expert ranks choose ``k`` experts each; balanced over
    ``E`` experts, every expert receives ``T·k·ep/E`` rows, and a rank holding ``E/ep``
    of them processes ``T·k`` rows in all.

    Parameters
    ----------
    tokens : float or ndarray
        Tokens ``T`` one rank routes per micro-batch.
    experts_per_token : float or ndarray
        Experts chosen per token ``k``.
    expert_parallel : float or ndarray
        Expert-parallel ranks ``ep``.
    experts : float or ndarray
        Routed experts ``E``.

    Returns
    -------
    float or ndarray
        Tokens per expert (rows of its GEMMs).

    References
    ----------
    Fedus, Zoph & Shazeer (2022), "Switch Transformers", JMLR 23, Sec. 2.1 (expert
    capacity ``tokens per batch / experts``, here times ``k`` for top-k routing).

    Examples
    --------
    Qwen3-30B-A3B (128 experts, top 8) on 8 expert ranks, 4,096 tokens each:
    4096 · 8 · 8 / 128 = 2,048 rows per expert, 16 experts per rank.

    >>> tokens_per_local_expert(4096, 8, 8, 128)
    2048.0
    """
    out = np.multiply(tokens, experts_per_token) * np.divide(expert_parallel, experts)
    return float(out) if np.ndim(out) == 0 else out


def moe_token_shuffle_bytes(
    tokens: Any,
    hidden: Any,
    experts_per_token: Any,
    bytes_per_element: Any,
    *,
    sort_chunks: Any = True,
) -> Any:
    """HBM bytes of one MoE layer's token copies in one pass (forward, or backward).

    For ``T`` tokens of width ``h`` each routed to ``k`` experts, in ``e``-byte elements:

    * permute: each of the ``T·k`` copies read and written, ``2·T·k·h·e``;
    * chunk sort after the dispatch all-to-all and its inverse before the combine (a rank
      with several experts regroups the received rows by expert): ``2 × 2·T·k·h·e``;
    * unpermute: the ``T·k`` expert outputs read and the ``T`` weighted sums written,
      ``(k + 1)·T·h·e``.

    ``(3k + 1)·T·h·e`` without the chunk sort, ``(7k + 1)·T·h·e`` with it. The backward
    pass runs the adjoint of each copy and moves the same bytes.

    Parameters
    ----------
    tokens : float or ndarray
        Tokens ``T`` the rank routes per micro-batch.
    hidden : float or ndarray
        Model width ``h``.
    experts_per_token : float or ndarray
        Experts chosen per token ``k``.
    bytes_per_element : float or ndarray
        Bytes of one activation element ``e`` (the dispatched tokens' dtype).
    sort_chunks : bool or ndarray
        The rank holds several experts and exchanges tokens with other expert ranks, so
        the received chunks are regrouped (Megatron-Core ``sort_chunks_by_idxs``).

    Returns
    -------
    float or ndarray
        Bytes read and written.

    References
    ----------
    NVIDIA Megatron-Core, ``megatron/core/transformer/moe/moe_utils.py`` (``permute``,
    ``unpermute``, ``sort_chunks_by_idxs``) and ``token_dispatcher.py``
    (``MoEAlltoAllTokenDispatcher``: the chunk sort runs when ``num_local_experts > 1``).

    Examples
    --------
    Qwen3-30B-A3B on 8 expert ranks (16 experts each): 4,096 tokens of width 2,048 in
    bf16, top 8: (7·8 + 1) · 4096 · 2048 · 2 = 956 MB a pass.

    >>> round(moe_token_shuffle_bytes(4096, 2048, 8, 2) / 1e6, 1)
    956.3
    >>> round(moe_token_shuffle_bytes(4096, 2048, 8, 2, sort_chunks=False) / 1e6, 1)
    419.4
    """
    k = (
        np.asarray(experts_per_token, dtype=float)
        if np.ndim(experts_per_token)
        else float(experts_per_token)
    )
    copies = 3.0 * k + 1.0 + 4.0 * k * np.where(sort_chunks, 1.0, 0.0)
    out = copies * tokens * hidden * bytes_per_element
    return float(out) if np.ndim(out) == 0 else out
