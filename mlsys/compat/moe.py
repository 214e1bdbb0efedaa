"""The textbook's MoE routing model: what unbalanced routing costs a mixture of experts.

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``MoERoutingModel().solve(model, batch_size, seq_len, precision="fp16", ep_size=1,
routing_imbalance_factor=1.0, fleet=None)``. A routing imbalance ``f ≥ 1`` says the busiest
expert receives ``f`` times its balanced share of tokens (the capacity factor of GShard and
Switch Transformers, Lepikhin et al. 2021; Fedus et al. 2022, Sec. 2.2); the layer waits
for it, so each token's expert work behaves like ``min(E, k f)`` experts instead of ``k``.
mlsys serves it from its own parameter count (``param_breakdown``: the routed experts' share
of the active parameters is scaled, attention and shared experts are not) and its
all-to-all formula (:func:`~mlsys.core.formulas.collectives.alltoall_time`, Thakur et al.
2005) for the token dispatch of an expert-parallel group.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mlsys.compat._args import at_least
from mlsys.compat._unwrap import as_catalog
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.collectives import alltoall_time, effective_bandwidth
from mlsys.core.results import Result

__all__ = ["MoERoutingModel", "MoERoutingResult"]


class MoERoutingResult(Result):
    """What the book's ``MoERoutingModel().solve`` returns.

    Attributes
    ----------
    effective_active_experts : float
        ``min(E, k f)``: routed experts a token's work behaves like.
    effective_active_parameters : Quantity [parameter_count]
        Active parameters with the routed experts' share scaled by
        ``active_parameter_multiplier``.
    active_parameter_multiplier : float
        ``effective_active_experts / k``.
    routing_imbalance_factor : float
        ``f``, as given.
    token_dispatch_bytes : Quantity [B]
        Bytes of routed activations a rank sends to the other ``ep_size − 1`` ranks.
    all_to_all_latency : Quantity [s] or None
        The dispatch all-to-all on the fleet's fabric (None without a fleet or with
        ``ep_size`` 1).
    ep_size : int
        Expert-parallel ranks.
    """

    _title: ClassVar[str] = "MoE routing"
    _units: ClassVar[dict[str, str | None]] = {
        "effective_active_experts": None,
        "effective_active_parameters": "parameter_count",
        "active_parameter_multiplier": None,
        "routing_imbalance_factor": None,
        "token_dispatch_bytes": "B",
        "all_to_all_latency": "s",
        "ep_size": None,
    }


class MoERoutingModel:
    """The book's MoERoutingModel: effective active parameters and the dispatch all-to-all."""

    def solve(
        self,
        model: Any,
        batch_size: int,
        seq_len: int,
        precision: str = "fp16",
        ep_size: int = 1,
        routing_imbalance_factor: float = 1.0,
        fleet: Any = None,
    ) -> MoERoutingResult:
        """What an imbalance ``f`` does to a mixture of experts' work and token traffic.

        Parameters
        ----------
        model : BookModel or TransformerWorkload
            A mixture of experts in the catalog (``experts``, ``experts_per_token``).
        batch_size, seq_len : int
            Sequences and tokens per sequence a rank routes.
        precision : str
            The dispatched activations' precision.
        ep_size : int
            Expert-parallel ranks.
        routing_imbalance_factor : float
            ``f ≥ 1``: the busiest expert's load over the balanced share.
        fleet : Fleet or a book cluster view, optional
            Its scale-out fabric prices the all-to-all.

        Returns
        -------
        MoERoutingResult

        Raises
        ------
        ParameterError
            For a dense model, counts that are not whole numbers of at least 1, or
            ``f < 1``.

        Examples
        --------
        DeepSeek-V3 (top-8 of 256 experts) at ``f = 1.5``: 12 experts' worth of work per
        token; its 20.4 B routed active parameters become 30.7 B.

        >>> from mlsys import Models
        >>> res = MoERoutingModel().solve(Models.Language.DeepSeek_V3, 1, 4096,
        ...                               routing_imbalance_factor=1.5)
        >>> res.effective_active_experts, res.active_parameter_multiplier
        (12.0, 1.5)
        """
        from mlsys.core.checks import positive_int
        from mlsys.core.precision import bytes_per_element

        workload = as_catalog(model)
        experts, top_k = (
            getattr(workload, "experts", None),
            getattr(workload, "experts_per_token", None),
        )
        if not experts or experts < 2 or not top_k:
            raise ParameterError(
                "model", model, "a mixture of experts (experts and experts_per_token)"
            )
        tokens = positive_int("batch_size", batch_size) * positive_int("seq_len", seq_len)
        ranks = positive_int("ep_size", ep_size)
        f = at_least(routing_imbalance_factor, "routing_imbalance_factor", 1.0)
        effective = min(float(experts), top_k * f)
        multiplier = effective / top_k
        counts = workload.param_breakdown
        routed = counts["mlp_experts_active"]
        params = counts["active"] - routed + routed * multiplier
        buffer_b = tokens * top_k * multiplier * workload.hidden * bytes_per_element(precision)
        latency = None
        if fleet is not None and ranks > 1:
            fabric = as_catalog(fleet).fabric
            link_bps = float(effective_bandwidth(fabric.bandwidth_Bps, fabric.oversubscription))
            latency = float(alltoall_time(buffer_b, ranks, link_bps, fabric.latency_s))
        return MoERoutingResult(
            effective_active_experts=effective,
            effective_active_parameters=params,
            active_parameter_multiplier=multiplier,
            routing_imbalance_factor=f,
            token_dispatch_bytes=buffer_b * (ranks - 1) / ranks,
            all_to_all_latency=latency,
            ep_size=ranks,
        )
