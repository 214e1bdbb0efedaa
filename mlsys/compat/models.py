"""The textbook's model families as views of the catalog (``Models.Vision.ResNet50``).

*Machine Learning Systems* (harvard-edge/cs249r_book) reads a workload as
``Models.Vision.ResNet50.inference_flops``, ``.parameters``, ``.size_in_bytes()``,
``Models.Language.GPT2.layers``/``.hidden_dim`` and ``Models.GPT3.training_ops``.
:class:`BookModel` offers those names over a catalog workload (``models.toml``) or over
a ``[models.NAME]`` table of ``book_models.toml`` for workloads the catalog lacks
(MobileNetV2, YOLOv8n, DS-CNN, DLRM). Counts (parameters, FLOPs) are the book's plain
counts.

Two names mean something else than mlsys's and keep the book's meaning:
``inference_flops`` counts a multiply-add as TWO FLOPs (mlsys's convention; the book's
own package counted ResNet-50 as 4.1 GFLOP = multiply-adds, mlsys says 8.18 GFLOP); and
``parameters`` is the size the model's paper STATES where ``book_models.toml`` records one
(GPT-3: 175e9, Brown et al. 2020), else the catalog's count of the weights.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

from mlsys.compat._data import book_table, field_source, field_value
from mlsys.compat._namespace import Namespace
from mlsys.compat.rules import suffix_attribute
from mlsys.core.units import Q_, to_book_counts

__all__ = ["BookModel", "model_group", "MODEL_GROUPS"]

_FILE = "book_models.toml"
MODEL_GROUPS: tuple[str, ...] = (
    "Vision",
    "Language",
    "Tiny",
    "Recommendation",
    "StateSpace",
    "GenerativeVision",
)
"""Groups hung on :data:`mlsys.Models` (the book's model families)."""
FAMILY_KINDS: dict[str, tuple[str, ...]] = {"Language": ("transformer",), "Vision": ("cnn",)}
"""Catalog workload kinds each family's query selects (a transformer is Language)."""

# names a catalog workload answers by building this view: never delegated back to it
_BOOK_NAMES = frozenset({"parameters", "inference_flops", "size_in_bytes"})

# bytes per parameter when the book calls size_in_bytes() without a precision: fp16
_DEFAULT_BYTES_PER_PARAM = Q_(2, "byte")


def _param_count(entry: Any) -> float:
    total = getattr(entry, "total_params", None)
    return float(entry.params if total is None else total)


def _bytes_per_value(precision: Any) -> float:
    """Bytes per cached value from the book's ``BYTES_INT4``, a number or a precision name."""
    from mlsys.core.errors import ParameterError
    from mlsys.core.precision import bytes_per_element

    if precision is None:
        return _DEFAULT_BYTES_PER_PARAM.m_as("byte")
    if isinstance(precision, str):
        return bytes_per_element(precision)
    per = precision.m_as("byte") if hasattr(precision, "units") else precision
    if isinstance(per, bool) or not isinstance(per, (int, float)) or per <= 0:
        raise ParameterError("precision", precision, "bytes per value above 0 or a precision name")
    return float(per)


class BookModel:
    """A workload under the book's attribute names.

    Parameters
    ----------
    book_name : str
        The book's name (``"ResNet50"``).
    key : str, optional
        Catalog key (``models.toml``); ``None`` for a ``book_models.toml`` workload.

    Attributes
    ----------
    parameters : pint.Quantity
        Parameter count (book counts; ``.m_as(param)`` gives the number).
    active_parameters : pint.Quantity
        Parameters one token's forward pass uses, for a catalog transformer (its
        ``active_params_per_token``): the routed top-k experts of a mixture of experts
        (DeepSeek-V3: 37B of 671B, DeepSeek-AI 2024, Sec. 4.2), ``parameters`` itself
        for a dense model. Book counts.
    inference_flops : pint.Quantity
        FLOPs of one forward pass of one sample (a multiply-add = 2 FLOPs), book counts.
    training_ops : pint.Quantity
        Training compute ``6 N D`` (Kaplan et al. 2020) for a catalog transformer with
        training tokens, book counts.
    layers, hidden_dim : int or None
        Transformer depth and width (catalog ``layers``, ``hidden``).
    model_size, inference_energy : pint.Quantity
        Where ``book_models.toml`` gives them (bytes, joules). A figure without a source
        is absent: reading it raises AttributeError.
    entry : mlsys.core.types.Workload or TransformerWorkload or None
        The catalog entry, for mlsys's solvers.
    sources : dict
        Field -> provenance.
    """

    def __init__(self, book_name: str, key: str | None = None) -> None:
        values: dict[str, Any] = {"entry": None, "layers": None, "hidden_dim": None}
        sources: dict[str, Any] = {}
        if key is not None:
            values.update(self._from_catalog(key, sources))
        else:
            raw = dict(book_table(_FILE)["models"][book_name])
            prov = raw.pop("provenance", {})
            for field, spec in raw.items():
                if field == "display_name":
                    continue
                values[field] = field_value(spec)
                sources[field] = field_source(spec, prov.get(field, prov.get("_all")))
        # a figure without a source is absent (AttributeError), never a guess
        self.__dict__.update(book_name=book_name, key=key, sources=sources, **values)

    @staticmethod
    def _from_catalog(key: str, sources: dict[str, Any]) -> dict[str, Any]:
        from mlsys.core.catalog import Models

        entry = Models.get(key)
        out: dict[str, Any] = {"entry": entry}
        stated = book_table(_FILE).get("stated_params", {}).get(key)
        if stated is not None:
            out["parameters"] = to_book_counts(Q_(stated["value"], "parameter"))
            sources["parameters"] = {k: v for k, v in stated.items() if k != "value"}
        else:
            out["parameters"] = to_book_counts(Q_(_param_count(entry), "parameter"))
            sources["parameters"] = {"catalog": f"Models.{key}"}
        if getattr(entry, "is_moe", False):
            active = entry.active_params_per_token
            out["active_parameters"] = to_book_counts(Q_(float(active), "parameter"))
            sources["active_parameters"] = {"catalog": f"Models.{key}.active_params_per_token"}
        elif hasattr(entry, "layers"):  # a dense transformer uses every parameter
            out["active_parameters"] = out["parameters"]
            sources["active_parameters"] = sources["parameters"]
        flops = getattr(entry, "flops_per_sample", None)
        if flops is not None:
            out["inference_flops"] = to_book_counts(Q_(flops, "flop"))
            sources["inference_flops"] = {"catalog": f"Models.{key}.flops_per_sample"}
        elif hasattr(entry, "layers"):
            # a language model's forward pass per token: 2 FLOPs per (active) parameter
            from mlsys.core.formulas.transformer import forward_flops_per_token

            active = float(getattr(entry, "active_params_per_token", None) or _param_count(entry))
            out["inference_flops"] = to_book_counts(
                Q_(forward_flops_per_token(active, entry.layers, 0, 0), "flop")
            )
            sources["inference_flops"] = {
                "formula": "mlsys.core.formulas.transformer.forward_flops_per_token",
                "note": "one token, 2 FLOPs per active parameter, no attention over a context "
                "(Kaplan et al. 2020, Eq. 2.2), the book's convention",
            }
        if hasattr(entry, "layers"):
            out["layers"] = entry.layers
            out["hidden_dim"] = entry.hidden
        extras = dict(book_table(_FILE).get("catalog_extras", {}).get(key, {}))
        prov = extras.pop("provenance", {})
        for field, spec in extras.items():
            out[field] = field_value(spec)
            sources[field] = field_source(spec, prov.get(field, prov.get("_all")))
        tokens = getattr(entry, "training_tokens", None)
        if tokens is not None:
            # the book's training_tokens is a count Quantity (``.m_as(Bparam)``)
            out["training_tokens"] = to_book_counts(Q_(tokens, "token"))
            sources["training_tokens"] = {"catalog": f"Models.{key}.training_tokens"}
        if tokens is not None and hasattr(entry, "layers"):
            from mlsys.core.formulas.transformer import training_flops

            out["training_ops"] = to_book_counts(
                Q_(training_flops(_param_count(entry), tokens), "flop")
            )
            sources["training_ops"] = {"formula": "mlsys.core.formulas.transformer.training_flops"}
        return out

    def size_in_bytes(self, bytes_per_param: Any = None) -> Any:
        """Weight bytes: parameters times bytes per parameter.

        Parameters
        ----------
        bytes_per_param : pint.Quantity or float, optional
            Bytes per parameter (``BYTES_FP32`` ...); default 2 bytes (fp16/bf16).

        Returns
        -------
        pint.Quantity
            Bytes.
        """
        per = _DEFAULT_BYTES_PER_PARAM if bytes_per_param is None else bytes_per_param
        if not hasattr(per, "units"):
            per = Q_(per, "byte")
        if "parameters" not in self.__dict__ and "model_size" in self.__dict__:
            # the book states DLRM by its fp32 size: scale it to the precision asked for
            return (self.model_size * (per / Q_(4, "byte"))).to("byte")
        return (self.parameters.m_as("") * per).to("byte")

    def get_kv_cache_size(self, seq_len: int, batch_size: int, precision: Any = None) -> Any:
        """Key/value-cache bytes of ``batch_size`` sequences of ``seq_len`` cached tokens.

        ``2 × layers × kv_heads × head_dim × seq_len × batch_size × bytes``: one key and
        one value vector per layer, per KV head, per token, per sequence
        (:func:`mlsys.core.formulas.transformer.kv_cache_bytes`).

        Parameters
        ----------
        seq_len : int
            Cached tokens per sequence.
        batch_size : int
            Sequences.
        precision : pint.Quantity, float or str, optional
            Bytes per cached value as the book passes it (``BYTES_INT4`` = 0.5 byte, or a
            plain number of bytes), or a precision name (``"fp8"``); default 2 bytes
            (``BYTES_FP16``), as the book's default.

        Returns
        -------
        pint.Quantity
            Bytes.

        Raises
        ------
        ParameterError
            A model without a transformer's attention shape, or a size that is not a
            positive whole number.

        References
        ----------
        Pope et al. (2022), "Efficiently Scaling Transformer Inference", MLSys 2023, Sec. 2.

        Examples
        --------
        Llama 3 8B (32 layers, 8 KV heads of 128) at INT4, one token:
        2 × 32 × 8 × 128 × 0.5 = 32,768 bytes, so 72 GB hold 2,197,265 tokens.

        >>> from mlsys import Models
        >>> from mlsys.constants import BYTES_INT4
        >>> Models.Language.Llama3_8B.get_kv_cache_size(1, 1, BYTES_INT4).m_as("byte")
        32768.0
        """
        from mlsys.core.errors import ParameterError
        from mlsys.core.formulas.transformer import kv_cache_bytes

        entry = self.__dict__.get("entry")
        if getattr(entry, "kv_heads", None) is None or getattr(entry, "head_dim", None) is None:
            raise ParameterError(
                "model", self.book_name, "a transformer with layers, kv_heads and head_dim"
            )
        for name, value in (("seq_len", seq_len), ("batch_size", batch_size)):
            if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
                raise ParameterError(name, value, "a whole number of at least 1")
        total = kv_cache_bytes(
            entry.layers,
            entry.kv_heads,
            entry.head_dim,
            seq_len,
            batch_size,
            _bytes_per_value(precision),
        )
        return Q_(float(total), "byte")

    def as_workload(self) -> Any:
        """The catalog entry, or for a book-only model a Workload of its cited figures.

        Returns
        -------
        Workload
            ``params`` and ``flops_per_sample`` from ``book_models.toml`` (the book's
            MobileNetV2, DS-CNN, YOLOv8n ...), for mlsys's solvers.

        Raises
        ------
        ParameterError
            A book-only model without a parameter count or inference FLOPs.
        """
        entry = self.__dict__.get("entry")
        if entry is not None:
            return entry
        from mlsys.core.errors import ParameterError
        from mlsys.core.types import Workload

        params = self.__dict__.get("parameters")
        flops = self.__dict__.get("inference_flops")
        if params is None or flops is None:
            raise ParameterError(
                "model", self.book_name, "a model with parameters and inference_flops"
            )
        return Workload(
            name=self.book_name, params=params.m_as(""), flops_per_sample=flops.m_as("")
        )

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        entry = self.__dict__.get("entry")
        if entry is None:
            return suffix_attribute(self, item, f"{self.__dict__.get('book_name')} (a book model)")
        if item not in _BOOK_NAMES and hasattr(entry, item):
            return getattr(entry, item)
        return suffix_attribute(self, item, f"Models view {self.__dict__.get('book_name')}")

    def __repr__(self) -> str:
        where = f"Models.{self.key}" if self.key else "book_models.toml"
        return f"<book view {self.book_name} of {where}>"


def model_group(family: str) -> Namespace:
    """The book's model family as a namespace of views (``Models.Vision``).

    Parameters
    ----------
    family : str
        ``"Vision"``, ``"Language"``, ``"Tiny"`` or ``"Recommendation"``.

    Returns
    -------
    Namespace
        Book name -> :class:`BookModel`, built on first use: the family's table in
        ``book_models.toml`` over every catalog workload whose ``kind`` belongs to the
        family (:data:`FAMILY_KINDS`), under its key and aliases.
    """
    from mlsys.compat.views import catalog_members, query_group

    members = book_table(_FILE)["families"].get(family, {})
    factories = {
        name: (
            lambda n=name, s=spec: (
                BookModel(n, s.get("catalog")) if "catalog" in s else BookModel(s["model"])
            )
        )
        for name, spec in members.items()
    }
    kinds = FAMILY_KINDS.get(family, ())
    queried = catalog_members(
        "models.toml", BookModel, lambda row: row.get("kind", "transformer") in kinds
    )
    return query_group(f"Models.{family}", factories, queried)
