"""Published transformer shapes that several unit tests build, written once.

The Llama family and Mixtral share one architecture style — SwiGLU MLP, RMSNorm, no
biases, untied embeddings, rotary positions — so a test states only the numbers that
make a model what it is. Not collected by pytest (no ``test_`` prefix).

References
----------
Touvron et al. (2023), "Llama 2: Open Foundation and Fine-Tuned Chat Models", Table 1
(Llama-2-7B: 32 layers, hidden 4096, 32 heads, FFN 11008, vocabulary 32000).
Llama Team (2024), "The Llama 3 Herd of Models", Table 3 (8B: 32 layers, hidden 4096,
32 heads, 8 KV heads, FFN 14336, vocabulary 128256).
Jiang et al. (2024), "Mixtral of Experts", Table 1 (32 layers, hidden 4096, 32 heads,
8 KV heads, FFN 14336, vocabulary 32000, 8 experts, top-2).
"""

from __future__ import annotations

from typing import Any

from mlsys import TransformerWorkload

__all__ = ["LLAMA2_7B", "LLAMA3_8B", "MIXTRAL_8X7B", "llama_style"]

LLAMA2_7B: dict[str, Any] = dict(layers=32, hidden=4096, heads=32, ffn_hidden=11008, vocab=32000)
LLAMA3_8B: dict[str, Any] = dict(
    layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, vocab=128256
)
MIXTRAL_8X7B: dict[str, Any] = dict(
    layers=32,
    hidden=4096,
    heads=32,
    kv_heads=8,
    ffn_hidden=14336,
    vocab=32000,
    experts=8,
    experts_per_token=2,
)


def llama_style(**shape: Any) -> TransformerWorkload:
    """A :class:`TransformerWorkload` in the Llama architecture style.

    Parameters
    ----------
    **shape : Any
        ``name`` and the shape fields (layers, hidden, heads, … in elements; seq_len in
        tokens), e.g. ``name="l3", **LLAMA3_8B``.

    Returns
    -------
    TransformerWorkload
        With ``gated_mlp=True, norm="rmsnorm", bias=False, tied_embeddings=False,
        position_embedding="rope"`` (Touvron et al. 2023, Sec. 2.2).
    """
    return TransformerWorkload(
        gated_mlp=True,
        norm="rmsnorm",
        bias=False,
        tied_embeddings=False,
        position_embedding="rope",
        **shape,
    )
