"""Adapters that keep the older ``calc_*`` formula spellings working.

Books written against the earlier API call ``calc_ring_allreduce_time(...)`` with pint
Quantities and expect a Quantity back. Each adapter here converts its arguments once,
calls the current formula (floats in SI) and returns a Quantity, so old chapters keep
rendering while :mod:`mlsys.formulas` warns with the new spelling.

Nothing here is physics: every number comes from :mod:`mlsys.core.formulas`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlsys.core.units import Q_, as_si

__all__ = ["LegacyFormula", "LEGACY_FORMULAS"]


@dataclass(frozen=True)
class LegacyFormula:
    """An old formula name mapped onto its replacement.

    Parameters
    ----------
    old : str
        The deprecated name.
    new : str
        The replacement's name in :mod:`mlsys.formulas`.
    arg_units : tuple of (str or None)
        Unit of each old positional argument (``None``: a plain number).
    returns : str or None
        Unit the old function returned its Quantity in (``None``: a plain number).
    reorder : callable, optional
        Maps the converted old arguments (a dict by old name) to the new function's
        positional arguments.
    post : callable, optional
        ``post(result, converted_args)`` adjusts the result to the old meaning (e.g.
        multiplies a per-layer figure by the layer count).
    arg_names : tuple of str
        Old argument names, in order (for keyword calls and messages).
    defaults : dict
        Old defaults.
    """

    old: str
    new: str
    arg_names: tuple[str, ...]
    arg_units: tuple[str | None, ...]
    returns: str | None
    reorder: Callable[[dict[str, Any]], tuple[Any, ...]] | None = None
    defaults: tuple[tuple[str, Any], ...] = ()
    post: Callable[[Any, dict[str, Any]], Any] | None = None

    def target(self) -> Callable[..., Any]:
        """The replacement function."""
        return getattr(importlib.import_module("mlsys.core.formulas"), self.new)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        values = dict(self.defaults)
        values.update(zip(self.arg_names, args, strict=False))
        values.update(kwargs)
        converted = {}
        for name, unit in zip(self.arg_names, self.arg_units, strict=True):
            value = values[name]
            converted[name] = value if unit is None else as_si(value, unit, name)
        new_args = (
            self.reorder(converted) if self.reorder else tuple(converted[n] for n in self.arg_names)
        )
        result = self.target()(*new_args)
        if self.post is not None:
            result = self.post(result, converted)
        return result if self.returns is None else Q_(result, self.returns)


def _entry(
    old: str,
    new: str,
    args: str,
    units: tuple[str | None, ...],
    returns: str | None,
    reorder: Callable[[dict[str, Any]], tuple[Any, ...]] | None = None,
    post: Callable[[Any, dict[str, Any]], Any] | None = None,
    **defaults: Any,
) -> LegacyFormula:
    return LegacyFormula(
        old, new, tuple(args.split()), units, returns, reorder, tuple(defaults.items()), post
    )


_COLLECTIVE_ARGS = "message_bytes n_gpus bandwidth_bytes_s latency_s"
_COLLECTIVE_UNITS = ("byte", None, "byte/s", "s")

LEGACY_FORMULAS: dict[str, LegacyFormula] = {
    e.old: e
    for e in (
        _entry(
            "calc_ring_allreduce_time",
            "ring_allreduce_time",
            _COLLECTIVE_ARGS,
            _COLLECTIVE_UNITS,
            "s",
        ),
        _entry(
            "calc_tree_allreduce_time",
            "tree_allreduce_time",
            _COLLECTIVE_ARGS,
            _COLLECTIVE_UNITS,
            "s",
        ),
        _entry("calc_all_to_all_time", "alltoall_time", _COLLECTIVE_ARGS, _COLLECTIVE_UNITS, "s"),
        _entry(
            "calc_hierarchical_allreduce_time",
            "hierarchical_allreduce_time",
            "message_bytes n_nodes gpus_per_node intra_node_bw inter_node_bw "
            "intra_node_lat inter_node_lat",
            ("byte", None, None, "byte/s", "byte/s", "s", "s"),
            "s",
            lambda a: (
                a["message_bytes"],
                a["gpus_per_node"],
                a["n_nodes"],
                a["intra_node_bw"],
                a["intra_node_lat"],
                a["inter_node_bw"],
                a["inter_node_lat"],
            ),
            intra_node_lat=500e-9,
            inter_node_lat=5e-6,
        ),
        _entry(
            "calc_transformer_training_flops",
            "training_flops",
            "n_params n_tokens",
            ("parameter", "token"),
            "flop",
        ),
        _entry(
            "calc_kv_cache_size",
            "kv_cache_bytes",
            "n_layers n_heads head_dim seq_len batch_size bytes_per_elem",
            (None, None, None, None, None, "byte"),
            "byte",
            bytes_per_elem=2,
        ),
        _entry(
            "calc_activation_memory",
            "activation_bytes_per_layer",
            "n_layers seq_len batch_size hidden_dim n_heads precision_bytes strategy",
            (None, None, None, None, None, None, None),
            "byte",
            # The old helper multiplied by layers and took the TP-free Table 2 rows.
            lambda a: (
                a["seq_len"],
                a["batch_size"],
                a["hidden_dim"],
                a["n_heads"] or 1,
                1,
                False,
                a["strategy"],
            ),
            lambda per_layer, a: per_layer * a["n_layers"] * a["precision_bytes"],
            n_heads=None,
            precision_bytes=1,
            strategy="selective",
        ),
    )
}
"""Old formula name -> adapter (warned about by :mod:`mlsys.formulas`)."""
