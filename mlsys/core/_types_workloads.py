"""Workloads: :class:`Workload` (totals) and :class:`TransformerWorkload` (a shape).

Part of :mod:`mlsys.core.types`, which imports this module when one of its classes is
first asked for (``from mlsys.core.types import TransformerWorkload`` works as always): creating a
pydantic model class costs about a millisecond, and a book's first formatted number needs
only :class:`~mlsys.core.types.Accelerator`. Conventions (dense peaks, per-direction
link bandwidths, SI bytes) are those stated in :mod:`mlsys.core.types`.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar, Literal

import pint
from pydantic import Field, model_validator

from mlsys.core._types_core import _Model
from mlsys.core.checks import count, flag
from mlsys.core.precision import normalize_precision
from mlsys.core.provenance import CatalogOrigin, register_value
from mlsys.core.traced import TracedFloat

__all__ = ["Workload", "TransformerWorkload"]


class Workload(_Model):
    """A model described by its totals (for non-transformer networks such as ResNet-50).

    Attributes
    ----------
    kind : str
        ``"cnn"``, ``"mlp"``, ``"transformer"``...
    params : float
        Parameter count.
    flops_per_sample : float
        Forward-pass FLOPs for one sample (one multiply-add = 2 FLOPs).
    activation_bytes_per_sample : float
        Activation bytes one sample writes and reads in a forward pass at 16-bit
        precision (the memory traffic beyond weights).
    input_shape : tuple of int or None
        Shape of one sample (e.g. ``(3, 224, 224)``), informational.
    training_tokens : float or None
        Samples (or tokens) the published training run saw, if known.
    """

    kind: str = "generic"
    training_tokens: float | None = Field(None, gt=0)
    params: float = Field(gt=0)
    flops_per_sample: float = Field(gt=0)
    activation_bytes_per_sample: float = Field(0.0, ge=0)
    input_shape: tuple[int, ...] | None = None

    @property
    def total_params(self) -> float:
        """Total parameter count."""
        return self.params

    @property
    def active_params(self) -> float:
        """Parameters used per sample (all of them for a dense network)."""
        return self.params


_WHOLE_FIELDS = (
    "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab", "seq_len",
    "context_window", "experts", "experts_per_token", "shared_experts", "expert_ffn_hidden",
    "dense_layers",
)  # fmt: skip
_FLAG_FIELDS = ("gated_mlp", "bias", "tied_embeddings", "parallel_block", "encoder_only")


class TransformerWorkload(_Model):
    """A decoder (or encoder) transformer described by its shape.

    Parameter counts are derived from the shape (Narayanan et al. 2021, Eq. 2, generalised
    to grouped-query attention, gated MLPs and mixtures of experts) unless given.

    Attributes
    ----------
    layers : int
        Transformer blocks.
    hidden : int
        Model width h.
    heads : int
        Query heads a.
    kv_heads : int
        Key/value heads (``heads`` for multi-head attention, fewer for GQA, 1 for MQA).
    head_dim : int
        Width of one head (``hidden // heads`` unless given).
    ffn_hidden : int
        Width of the MLP's inner layer (``4 * hidden`` unless given).
    gated_mlp : bool
        SwiGLU-style MLP with three matrices (gate, up, down) instead of two.
    vocab : int
        Vocabulary size V.
    seq_len : int
        Default sequence length s (training context).
    context_window : int or None
        Longest sequence the released model attends over, in tokens: a prompt and its
        generated tokens together (``max_position_embeddings`` of its config). None when
        not known, and then no length is refused. Serving a longer sequence is infeasible.
    experts : int
        Routed experts per MoE layer (1: dense).
    experts_per_token : int
        Routed experts each token visits (top-k).
    shared_experts : int
        Experts every token visits in addition (DeepSeek-MoE style).
    expert_ffn_hidden : int
        Inner width of one expert (``ffn_hidden`` unless given).
    dense_layers : int
        Leading layers that keep a dense MLP in an MoE model.
    norm : {"layernorm", "rmsnorm"}
        Normalisation (LayerNorm has a bias vector, RMSNorm does not).
    bias : bool
        Linear layers carry biases (GPT-style) or not (Llama-style).
    tied_embeddings : bool
        Input embedding and output projection share one matrix.
    parallel_block : bool
        Attention and MLP read the same normalised input and their outputs are summed
        into the residual once (GPT-J, GPT-NeoX, PaLM: "parallel layers", Chowdhery et
        al. 2022, Sec. 2), instead of running one after the other. Parameters and FLOPs
        are unchanged; under tensor parallelism the two row-parallel outputs are summed
        before one all-reduce, so a layer's forward needs one tensor-parallel reduction
        instead of two (GPT-NeoX ``gpt_j_residual``).
    position_embedding : {"learned", "rope", "alibi", "none"}
        Learned positions add ``seq_len × hidden`` parameters.
    encoder_only : bool
        Bidirectional attention (BERT); affects only causal-attention FLOP conventions.
    training_tokens : float or None
        Tokens the published training run saw (D in C = 6ND), if known.
    training_dropout : bool or None
        Whether the model's published training ran attention and hidden dropout
        (``False``: trained with dropout probability 0, as Llama and Nemotron-4 are); None
        when not known. Training solvers take it as their ``dropout`` default
        (:func:`mlsys.core.layout.training_dropout`).
    params, active_params : float or None
        Given totals that override the derived counts (e.g. a published figure for an
        architecture the shape fields cannot express exactly, such as MLA attention).
    """

    kind: ClassVar[str] = "transformer"

    layers: int = Field(gt=0)
    hidden: int = Field(gt=0)
    heads: int = Field(gt=0)
    kv_heads: int | None = Field(None, gt=0)
    head_dim: int | None = Field(None, gt=0)
    ffn_hidden: int | None = Field(None, gt=0)
    gated_mlp: bool = False
    vocab: int = Field(gt=0)
    seq_len: int = Field(2048, gt=0)
    context_window: int | None = Field(None, gt=0)
    experts: int = Field(1, gt=0)
    experts_per_token: int = Field(1, gt=0)
    shared_experts: int = Field(0, ge=0)
    expert_ffn_hidden: int | None = Field(None, gt=0)
    dense_layers: int = Field(0, ge=0)
    norm: Literal["layernorm", "rmsnorm"] = "layernorm"
    bias: bool = True
    tied_embeddings: bool = True
    parallel_block: bool = False
    position_embedding: Literal["learned", "rope", "alibi", "none"] = "learned"
    encoder_only: bool = False
    training_tokens: float | None = Field(None, gt=0)
    training_dropout: bool | None = None
    params: float | None = Field(None, gt=0)
    active_params: float | None = Field(None, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        # one validator for counts and flags (mlsys.core.checks): True is not 1 layer,
        # "4" is not 4 heads, "no" is False; Field(gt=0) then applies the bounds
        for key in _WHOLE_FIELDS:
            if data.get(key) is not None:
                data[key] = count(key, data[key], 0, "a whole number")
        for key in _FLAG_FIELDS:
            if key in data:
                data[key] = flag(key, data[key])
        if data.get("training_dropout") is not None:
            data["training_dropout"] = flag("training_dropout", data["training_dropout"])
        data.setdefault("name", "custom")
        heads, hidden = data.get("heads"), data.get("hidden")
        if data.get("kv_heads") is None and heads is not None:
            data["kv_heads"] = heads
        if data.get("head_dim") is None and heads and hidden and hidden % heads == 0:
            data["head_dim"] = hidden // heads
        if data.get("ffn_hidden") is None and hidden:
            data["ffn_hidden"] = 4 * hidden
        if data.get("expert_ffn_hidden") is None:
            data["expert_ffn_hidden"] = data.get("ffn_hidden")
        return data

    @model_validator(mode="after")
    def _consistent(self) -> TransformerWorkload:
        if self.head_dim is None:
            raise ValueError(
                f"hidden={self.hidden} is not divisible by heads={self.heads}; give head_dim"
            )
        if self.heads % self.kv_heads:  # type: ignore[operator]
            raise ValueError(f"heads={self.heads} must be a multiple of kv_heads={self.kv_heads}")
        if self.experts_per_token > self.experts:
            raise ValueError(
                f"experts_per_token={self.experts_per_token} exceeds experts={self.experts}"
            )
        if self.dense_layers > self.layers:
            raise ValueError(f"dense_layers={self.dense_layers} exceeds layers={self.layers}")
        return self

    @property
    def is_moe(self) -> bool:
        """True when the MLP is a mixture of experts."""
        return self.experts > 1

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts."""
        return self.layers - self.dense_layers if self.is_moe else 0

    @cached_property
    def param_breakdown(self) -> dict[str, float]:
        """Parameters component by component (embeddings, attention, MLP, norms ...).

        Derived from the shape with
        :func:`mlsys.core.formulas.transformer.transformer_param_breakdown`
        (Narayanan et al. 2021, Eq. 2, generalised); keys include ``"total"`` and
        ``"active"``.
        """
        from mlsys.core.formulas.transformer import transformer_param_breakdown

        raw = transformer_param_breakdown(
            self.layers,
            self.hidden,
            self.heads,
            self.vocab,
            kv_heads=self.kv_heads,
            head_dim=self.head_dim,
            ffn_hidden=self.ffn_hidden,
            gated_mlp=self.gated_mlp,
            norm=self.norm,
            bias=self.bias,
            tied_embeddings=self.tied_embeddings,
            max_positions=self.seq_len if self.position_embedding == "learned" else 0,
            experts=self.experts,
            experts_per_token=self.experts_per_token,
            shared_experts=self.shared_experts,
            expert_ffn_hidden=self.expert_ffn_hidden,
            dense_layers=self.dense_layers,
        )
        return {key: float(value) for key, value in raw.items()}

    @cached_property
    def _param_counts(self) -> tuple[float, float]:
        derived = self.param_breakdown
        total = self.params or derived["total"]
        if self.active_params:
            active = self.active_params
        elif self.params and not self.is_moe:
            active = self.params
        else:
            # A given total scales the derived active count by the same factor.
            active = derived["active"] * (total / derived["total"])
        if self.provenance:  # fmt(model.total_params) names the paper the shape is from
            for value, field in ((total, "params"), (active, "active_params")):
                if not (type(value) is int and value <= 256):  # shared small ints: no
                    register_value(value, CatalogOrigin(self, field), permanent=True)
        return (total, active)

    @property
    def total_params(self) -> float:
        """All parameters, every expert included (given ``params`` if set)."""
        return self._param_counts[0]

    @property
    def active_params_per_token(self) -> float:
        """Parameters one token's forward pass touches (top-k experts only)."""
        return self._param_counts[1]

    @property
    def kv_dim(self) -> int:
        """Width of one layer's keys (= values): ``kv_heads × head_dim``."""
        return int(self.kv_heads * self.head_dim)  # type: ignore[operator]

    def kv_cache_per_token(self, precision: str = "bf16") -> pint.Quantity:
        """KV-cache size of one token across all layers, as a Quantity in bytes/token.

        :meth:`kv_bytes_per_token` is the same number as a bare float for solvers.

        Parameters
        ----------
        precision : str
            KV-cache precision.

        Returns
        -------
        pint.Quantity
            Bytes per token: ``2 × layers × kv_heads × head_dim × bytes`` (Pope et al.
            2022, "Efficiently Scaling Transformer Inference", Sec. 2).

        Examples
        --------
        Llama-2 7B (32 layers, 32 KV heads of 128) in bf16: 2 × 32 × 4096 × 2 = 524,288 B.

        >>> from mlsys import Models
        >>> Models.Llama2_7B.kv_cache_per_token("bf16").m_as("B/token")
        524288.0
        """
        from mlsys.core.units import Q_

        value = self.kv_bytes_per_token(precision)
        if self.provenance:  # the shape comes from the model's paper: say so on hover
            key = normalize_precision(precision)
            value = TracedFloat(value, (CatalogOrigin(self, "kv_cache_per_token", key),))
        return Q_(value, "byte/token")

    def kv_bytes_per_token(self, precision: str = "bf16") -> float:
        """KV-cache bytes one token occupies across all layers, as a bare float.

        For a Quantity in bytes/token use :meth:`kv_cache_per_token`.

        ``2 × layers × kv_heads × head_dim × bytes`` (keys and values; Pope et al. 2022,
        "Efficiently Scaling Transformer Inference", Sec. 2).

        Parameters
        ----------
        precision : str
            KV-cache precision.

        Returns
        -------
        float
            Bytes per token.
        """
        from mlsys.core.precision import bytes_per_element

        return 2.0 * self.layers * self.kv_dim * bytes_per_element(precision)


# Documented, linked and pickled as mlsys.core.types.<name>, where users import them from
# (the reference's inventory, objects.json, names them so). Set after the classes are
# created: pydantic has resolved their annotations in this module by then.
for _cls in (Workload, TransformerWorkload):
    _cls.__module__ = "mlsys.core.types"
del _cls
