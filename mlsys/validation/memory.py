"""Memory cases: ZeRO model states (Rajbhandari et al. 2020), activations per layer
(Korthikanti et al. 2022), and the held-out runs' layouts, which ran and so must fit."""

from __future__ import annotations

from mlsys.core.formulas import (
    activation_bytes_per_layer,
    optimizer_state_bytes_per_param,
    zero_model_state_bytes,
)
from mlsys.validation._case import Case, layout_fit_case, load_data, records

__all__ = ["activation_cases", "ran_layout_fit_cases", "zero_cases"]


def zero_cases() -> list[Case]:
    """Every cell of ZeRO's Figure 1 / Table 1: model-state GB per device.

    mlsys's Adam state size (``optimizer_state_bytes_per_param("adam")``, 12 bytes) and
    its 2-byte weights and gradients are library defaults, not inputs of the case.
    """
    z = load_data("memory")["zero"]
    k = optimizer_state_bytes_per_param("adam")
    out = []
    for cell in z["cell"]:
        for part, gb in cell["values"].items():
            got = zero_model_state_bytes(cell["psi"], cell["dp"], z["stages"][part], k) / 1e9
            out.append(
                Case(
                    group="Memory: ZeRO model states",
                    name=f"Ψ={cell['psi'] / 1e9:g}B N_d={cell['dp']} {z['labels'][part]}",
                    quantity="model-state memory per device",
                    unit="GB",
                    published=float(gb),
                    predicted=float(got),
                    tolerance=z["tolerance"],
                    basis="prediction",
                    method="accounting",
                    citation=z["citation"],
                    url=z["url"],
                )
            )
    return out


def activation_cases() -> list[Case]:
    """Table 2 of Korthikanti et al. for the GPT-3 175B layer, one case per variant."""
    k = load_data("memory")["korthikanti"]
    s, b, h, a = k["seq_len"], k["batch_size"], k["hidden"], k["heads"]
    out = []
    for v in k["variant"]:
        t = v.get("tp", k["tp_size"])
        c0, ct, catt = v["coefficients"]
        published = s * b * h * (c0 + ct / t + catt * a * s / (h * t)) / 1e9
        got = activation_bytes_per_layer(s, b, h, a, t, v["sequence_parallel"], v["recompute"])
        out.append(
            Case(
                group="Memory: activations per layer",
                name=f"GPT-3 175B layer, {v['name']} (t={t})",
                quantity="activation memory per layer",
                unit="GB",
                published=float(published),
                predicted=float(got) / 1e9,
                tolerance=k["tolerance"],
                basis="prediction",
                method="accounting",
                citation=k["citation"],
                url=k["url"],
            )
        )
    return out


def ran_layout_fit_cases() -> list[Case]:
    """The held-out training runs' layouts (:mod:`mlsys.validation.heldout`: NeMo's
    performance summaries on H100 and B200, the Nemotron-4 15B and 340B technical reports'
    batch ramp-ups) must fit: memory needed per GPU over the memory the device exposes,
    judged one-sided (at most 1), as :func:`mlsys.validation.training.layout_fit_cases`
    judges the suite's own runs. Each layout is solved as its step-time case solves it.

    Among them NeMo 24.07's FP8 benchmark of Nemotron-4 340B on 128 H100 (TP 8, PP 8,
    VP 12), which needs 76.0 GB of the 85.5 GB an H100 exposes (it came out "does not
    fit", 88.6 GB, while FP8 training defaulted to fp32 gradient buffers, where NeMo's FP8
    configurations reduce gradients in bf16, and dropout's masks were stored for a model
    trained without dropout).

    Returns
    -------
    list of Case
    """
    from mlsys.validation.heldout import HELDOUT_SECTIONS, heldout_cases, heldout_solve

    data = load_data("heldout")
    runs = [(section, row) for section in HELDOUT_SECTIONS for row in records("heldout", section)]
    out = []
    for case, (section, row) in zip(heldout_cases(), runs, strict=True):
        res, _ = heldout_solve(section, row)
        out.append(layout_fit_case(data[section], case.name, res))
    return out
