"""Training-throughput cases on Google TPUs: DistributedModel against published runs.

Every case today in :mod:`mlsys.validation.training` ran on NVIDIA GPUs; these check
that the same physics (GEMM time, tensor-parallel and sharded-state collectives,
recomputation) prices a TPU run from the catalog's TPU chips, hosts and ICI fabrics.
Layouts and measured figures are read from ``mlsys/validation/data/tpu.toml``; every
prediction uses library defaults.
"""

from __future__ import annotations

import math
from typing import Any

from mlsys.core.catalog import Fabrics, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet, TransformerWorkload
from mlsys.validation._case import Case, layout_fit_case, load_data, prediction_case, records

__all__ = [
    "maxtext_cases",
    "maxtext_flops_per_token",
    "maxtext_model",
    "maxtext_shape",
    "maxtext_solve",
    "palm_cases",
    "palm_model",
    "palm_solve",
    "tpu_cases",
    "tpu_layout_fit_cases",
]

# MaxText's remat_policy names and the recomputation mlsys prices for each (tpu.toml
# [maxtext] assumed): "minimal" is jax.checkpoint_policies.checkpoint_dots_with_no_batch_dims
# (mlsys's "dots": the weight matmuls' outputs kept, the rest rerun), "full" keeps only
# each layer's input
_REMAT = {"minimal": "dots", "full": "full"}


def _note_if_off(predicted: float, published: float, section: dict) -> str:
    return section.get("note_if_off", "") if abs(predicted / published - 1) > 0.10 else ""


def palm_model() -> TransformerWorkload:
    """PaLM 540B's shape (Chowdhery et al. 2022, Table 1), from ``tpu.toml`` ``[palm]``.

    Returns
    -------
    TransformerWorkload
        118 layers, d_model 18432, 48 query heads of 256 with one key/value head,
        SwiGLU MLP of 73728, 256k tied vocabulary: 540.36e9 parameters; parallel
        attention and MLP blocks (Sec. 2, "Parallel Layers").
    """
    p = load_data("tpu")["palm"]
    return TransformerWorkload(
        name="PaLM 540B", layers=p["layers"], hidden=p["hidden"], heads=p["heads"],
        kv_heads=p["kv_heads"], head_dim=p["head_dim"], ffn_hidden=p["ffn_hidden"],
        gated_mlp=True, vocab=p["vocab"], seq_len=p["seq_len"], bias=False,
        tied_embeddings=True, position_embedding="rope", parallel_block=True,
    )  # fmt: skip


def palm_solve() -> tuple[Any, Fleet]:
    """DistributedModel's result for PaLM 540B's layout on 6144 TPU v4, and its fleet.

    Both pods are one fleet of 4-chip TPU v4 hosts on the ICI torus; the 12-way model
    axis is tensor parallelism with sharded layer-boundary activations, the rest fully
    sharded data parallelism (``tpu.toml`` ``[palm]`` ``layout_source`` and ``assumed``).

    Returns
    -------
    tuple
        The DistributedResult and the fleet it ran on.
    """
    p = load_data("tpu")["palm"]
    node = Nodes.TPU_V4_HOST
    fleet = Fleet(node=node, count=p["chips"] // node.accelerators_per_node,
                  fabric=Fabrics.TPU_ICI_V4)  # fmt: skip
    res = DistributedModel().solve(
        palm_model(), fleet, batch_size=p["global_batch"], tp_size=p["tp"], zero_stage=3,
        recompute="full", sequence_parallel=True, microbatch_count=1, flash_attention=False,
        recompute_rerun="residuals",  # JAX: only what the backward consumes is rerun
        dropout=p["dropout"],
    )  # fmt: skip
    return res, fleet


def palm_cases() -> list[Case]:
    """PaLM 540B's training throughput on 6144 TPU v4 (Chowdhery et al. 2022, Sec. 4.1)."""
    p = load_data("tpu")["palm"]
    res, _ = palm_solve()
    got = res.si("tokens_per_second")
    return [
        prediction_case(
            p, group="Training: TPU runs", name=_palm_name(p),
            quantity="training throughput", unit="token/s", published=p["tokens_per_s"],
            predicted=got, note=p.get("open_issue") or _note_if_off(got, p["tokens_per_s"], p),
            open_issue=p.get("open_issue", ""),
        )
    ]  # fmt: skip


def maxtext_shape(scale: int, base: dict) -> dict[str, int]:
    """Layer shape MaxText builds for a ``global_parameter_scale``.

    MaxText grows a model by doubling, in turn, the heads and MLP width, the embedding
    width and the depth: with ``log2(scale) = 3q + r`` the heads and MLP width scale by
    ``2^(q + [r > 0])``, the embedding by ``2^(q + [r > 1])`` and the layers by ``2^q``.

    Parameters
    ----------
    scale : int
        ``global_parameter_scale``, a power of two (count).
    base : dict
        ``base_emb_dim``, ``base_num_heads``, ``base_mlp_dim``,
        ``base_num_decoder_layers`` (elements, heads, elements, layers).

    Returns
    -------
    dict
        ``hidden`` (elements), ``heads`` (count), ``ffn_hidden`` (elements) and
        ``layers`` (count).

    Raises
    ------
    ValueError
        When ``scale`` is not a power of two (MaxText refuses it too).

    References
    ----------
    AI-Hypercomputer/maxtext, ``MaxText/pyconfig.py`` ``get_individual_scales`` and the
    ``base_*`` keys of ``MaxText/configs/base.yml``, commit 76bd53b0f (December 2023).

    Examples
    --------
    >>> base = dict(base_emb_dim=2560, base_num_heads=8, base_mlp_dim=8192,
    ...             base_num_decoder_layers=16)
    >>> maxtext_shape(32, base)
    {'hidden': 10240, 'heads': 32, 'ffn_hidden': 32768, 'layers': 32}
    """
    k = round(math.log2(scale))
    if scale < 1 or 2**k != scale:
        raise ValueError(f"global_parameter_scale must be a power of two, got {scale!r}")
    q, r = divmod(k, 3)
    width = 2 ** (q + (r > 0))
    return {
        "hidden": base["base_emb_dim"] * 2 ** (q + (r > 1)),
        "heads": base["base_num_heads"] * width,
        "ffn_hidden": base["base_mlp_dim"] * width,
        "layers": base["base_num_decoder_layers"] * 2**q,
    }


_BASE_KEYS = ("base_emb_dim", "base_num_heads", "base_mlp_dim", "base_num_decoder_layers")


def maxtext_model(scale: int, base: dict | None = None) -> TransformerWorkload:
    """The MaxText benchmark model of ``global_parameter_scale = scale``.

    Parameters
    ----------
    scale : int
        ``global_parameter_scale`` (32 to 1024 in the v5p table, 16 to 128 in the v5e
        table, 1 in the v4 scripts, which set the ``base_*`` sizes themselves).
    base : dict, optional
        ``base_*`` sizes that override ``base.yml``'s (``tpu.toml`` ``[maxtext]``), as a
        launch script passes them (elements, heads, elements, layers).

    Returns
    -------
    TransformerWorkload
        Multi-head attention with 256-wide heads, a ReLU MLP (not gated), tied
        embeddings over 32,768 tokens, sequence 2048 (``tpu.toml`` ``[maxtext]``);
        a parallel attention/MLP block, as MaxText's default ``DecoderLayer`` sums the
        two branches of one normalised input (``MaxText/layers/models.py``).
    """
    m = load_data("tpu")["maxtext"]
    sizes = {**{k: m[k] for k in _BASE_KEYS}, **(base or {})}
    return TransformerWorkload(
        name=f"MaxText {scale}B", head_dim=m["head_dim"], vocab=m["vocab"],
        seq_len=m["seq_len"], gated_mlp=False, tied_embeddings=True, bias=False,
        position_embedding="rope", parallel_block=True, **maxtext_shape(scale, sizes),
    )  # fmt: skip


def _row_model(row: dict) -> TransformerWorkload:
    return maxtext_model(row["scale"], {k: row[k] for k in _BASE_KEYS if k in row})


def maxtext_solve(row: dict, section: str = "maxtext") -> tuple[Any, Fleet]:
    """DistributedModel's result for one row of a MaxText table, and its fleet.

    Parameters
    ----------
    row : dict
        A row of ``records("tpu", section)``.
    section : str
        ``"maxtext"`` (TPU v5p), ``"maxtext_v5e"`` (TPU v5e) or ``"maxtext_v4"`` (TPU
        v4); the section names the catalog host and ICI fabric.

    Returns
    -------
    tuple
        The DistributedResult and the fleet (one slice of TPU hosts on its ICI torus).
    """
    m = load_data("tpu")[section]
    node = Nodes[m["node"]]
    fleet = Fleet(node=node, count=row["chips"] // node.accelerators_per_node,
                  fabric=Fabrics[m["fabric"]])  # fmt: skip
    res = DistributedModel().solve(
        _row_model(row), fleet, batch_size=row["per_device_batch"] * row["chips"],
        tp_size=row["tp"], zero_stage=3, recompute=_REMAT[row["remat"]],
        sequence_parallel=row["tp"] > 1, microbatch_count=1, flash_attention=True,
        recompute_rerun="residuals",  # JAX: only what the backward consumes is rerun
        dropout=m["dropout"],
    )  # fmt: skip
    return res, fleet


def maxtext_flops_per_token(
    params: float, layers: int, heads: int, head_dim: int, seq_len: int
) -> float:
    """Training FLOPs per token as MaxText counts them for its TFLOP/sec/chip and MFU.

    ``6·P`` for the weights (forward and backward, every parameter, no recomputation)
    plus causal attention, half of PaLM's ``12·L·H·Q·T``.

    Parameters
    ----------
    params : float
        All parameters ``P`` (count).
    layers : int
        Decoder layers ``L`` (count).
    heads : int
        Attention heads ``H`` (count).
    head_dim : int
        Width of one head ``Q`` (elements).
    seq_len : int
        Sequence length ``T`` (tokens).

    Returns
    -------
    float
        FLOPs per trained token (FLOP/token).

    References
    ----------
    Chowdhery et al. (2022), "PaLM", arXiv:2204.02311, Appendix B (``6N + 12LHQT``);
    AI-Hypercomputer/maxtext ``MaxText/train.py`` ``calculate_training_tflops`` at
    commit 76bd53b0f (the attention term halved "due to causality").

    Examples
    --------
    MaxText's 32B model (32 layers of 32 heads of 256, 32.5e9 parameters):
    ``6 × 32.5e9 + 6 × 32 × 32 × 256 × 2048 = 1.9822e11``.

    >>> round(maxtext_flops_per_token(32.5e9, 32, 32, 256, 2048) / 1e11, 4)
    1.9822
    """
    return 6.0 * params + 6.0 * layers * heads * head_dim * seq_len


def maxtext_cases(section: str = "maxtext") -> list[Case]:
    """One MaxText table, one slice per row: model TFLOP/s per chip on MaxText's count.

    Parameters
    ----------
    section : str
        ``"maxtext"`` (TPU v5p), ``"maxtext_v5e"`` (TPU v5e) or ``"maxtext_v4"`` (TPU v4).

    Returns
    -------
    list of Case
    """
    m = load_data("tpu")[section]
    out = []
    for row in records("tpu", section):
        res, _ = maxtext_solve(row, section)
        model = _row_model(row)
        per_token = maxtext_flops_per_token(model.total_params, model.layers, model.heads,
                                            model.head_dim, model.seq_len)  # fmt: skip
        got = res.si("tokens_per_second") / row["chips"] * per_token / 1e12
        key = f"{row['scale']}/{row['chips']}"
        issue = m.get("open_issues", {}).get(key, "")
        off = abs(got / row["tflops_per_chip"] - 1) > 0.10
        note = (m.get("notes", {}).get(key) or m["note_if_off"]) if off else ""
        out.append(
            prediction_case(
                m, group="Training: TPU runs", name=_maxtext_name(row, m),
                quantity="per-chip model FLOP rate (MaxText's count)", unit="TFLOP/s",
                published=row["tflops_per_chip"], predicted=got, note=issue or note,
                open_issue=issue,
            )
        )  # fmt: skip
    return out


def _palm_name(section: dict) -> str:
    return f"PaLM 540B on {section['chips']} TPU v4"


def _maxtext_name(row: dict, section: dict) -> str:
    label = row.get("label", f"{row['scale']}B")
    return f"MaxText {label} on {row['chips']} {section['device']} ({row['slice']})"


_MAXTEXT_SECTIONS = ("maxtext", "maxtext_v5e", "maxtext_v4")


def tpu_layout_fit_cases() -> list[Case]:
    """The TPU layouts that ran must fit the chip's HBM: PaLM 540B's and every MaxText
    row's memory needed over the memory the chip has, judged one-sided (at most 1), as
    :func:`mlsys.validation.training.layout_fit_cases` judges the GPU runs.

    Returns
    -------
    list of Case
    """
    data = load_data("tpu")
    res, _ = palm_solve()
    out = [layout_fit_case(data["palm"], _palm_name(data["palm"]), res)]
    for sec in _MAXTEXT_SECTIONS:
        for row in records("tpu", sec):
            res, _ = maxtext_solve(row, sec)
            out.append(layout_fit_case(data[sec], _maxtext_name(row, data[sec]), res))
    return out


def tpu_cases() -> list[Case]:
    """PaLM 540B on TPU v4 and MaxText's single-slice TPU v5p, v5e and v4 rows."""
    return [*palm_cases(), *(case for sec in _MAXTEXT_SECTIONS for case in maxtext_cases(sec))]
