"""The lab's own devices and models: entries no catalog has, each citing its source.

The glasses SoC is derived from the catalog's Jetson AGX Orin; the three small
transformers are shapes chosen for their tracks (see :mod:`mlsys.book.lab`). Each carries
a ``provenance`` like a catalog entry, so a number read from it names its source on hover.
"""

from __future__ import annotations

from mlsys.core.catalog import Hardware
from mlsys.core.types import Accelerator, Provenance, TransformerWorkload

__all__ = ["GLASSES_SOC", "VIT_S", "GAZE", "NOISE"]

GLASSES_SOC = Accelerator(
    name="AR_GLASSES_SOC",
    display_name="AR-glasses SoC (derived: Jetson AGX Orin at 3 W)",
    vendor="derived",
    kind="edge",
    peak_flops={
        "fp32": f"{Hardware.JETSON_ORIN.peak_flops_s('fp32') * 3.0 / 60.0} FLOP/s",
        "fp16": f"{Hardware.JETSON_ORIN.peak_flops_s('fp16') * 3.0 / 60.0} FLOP/s",
    },
    memory_capacity="4 GB",
    memory_bandwidth="51.2 GB/s",
    tdp="3 W",
    provenance={
        "default": Provenance(
            kind="derived",
            reference=(
                "Jetson AGX Orin catalog entry scaled to a 3 W sustained budget at the "
                "same FLOP per joule (60 W -> 3 W: 1/20 of its peaks)"
            ),
            note=(
                "A head-worn device dissipates a few watts before it is uncomfortable; 3 W "
                "is an estimate. Memory: 4 GB of 64-bit LPDDR5 at 6,400 MT/s "
                "(8 B x 6.4 GT/s = 51.2 GB/s, the JEDEC LPDDR5 rate)."
            ),
        ),
        # The memory is not scaled from the Orin: it has its own (hover) source.
        "memory_capacity": Provenance(
            kind="estimate",
            reference="4 GB of LPDDR5, the lab's choice for a head-worn SoC",
        ),
        "memory_bandwidth": Provenance(
            kind="standard",
            reference="JEDEC LPDDR5 at 6,400 MT/s on a 64-bit bus: 8 B x 6.4 GT/s = 51.2 GB/s",
        ),
    },
)
"""A derived glasses SoC: no catalog entry describes one, so the lab scales the catalog's
Jetson AGX Orin (60 W) to a 3 W battery and thermal budget at equal energy efficiency."""


VIT_S = TransformerWorkload(
    name="ViT-S/16-class perception encoder",
    layers=12,
    hidden=384,
    heads=6,
    ffn_hidden=1536,
    vocab=768,
    seq_len=197,
    encoder_only=True,
    provenance={
        "default": Provenance(
            kind="derived",
            reference=(
                "counted from the lab's shape, a ViT-S/16-class encoder: 12 layers, "
                "width 384, 6 heads, 196 patches + 1 class token, about 22M parameters, "
                "the size of DeiT-S (Touvron et al. 2021, Table 1); the 16x16x3 patch "
                "projection counted as a 768-entry embedding"
            ),
        )
    },
)
GAZE = TransformerWorkload(
    name="~5M-parameter tracking transformer",
    layers=6,
    hidden=256,
    heads=4,
    ffn_hidden=1024,
    vocab=192,
    seq_len=64,
    encoder_only=True,
    provenance={
        "default": Provenance(
            kind="derived",
            reference=(
                "counted from the lab's shape for a tracking transformer (6 layers, "
                "width 256, 4 heads, 64 tokens of 8x8x3 patches): the scale of an eye- or "
                "hand-tracking network"
            ),
        )
    },
)
NOISE = TransformerWorkload(
    name="~29k-parameter noise model",
    layers=2,
    hidden=32,
    heads=2,
    ffn_hidden=128,
    vocab=64,
    seq_len=32,
    encoder_only=True,
    provenance={
        "default": Provenance(
            kind="derived",
            reference=(
                "counted from the lab's shape for a noise model (2 layers, width 32, "
                "2 heads, 32 frames of 64 mel bins), sized so Adam in fp32 fits the "
                "Cortex-M7's 1 MB of SRAM; smaller than RNNoise (Valin 2018, under 100k weights)"
            ),
        )
    },
)
