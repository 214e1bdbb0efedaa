"""Leave-one-source-out: the suite's error on sources no constant was chosen on.

A constant chosen by looking at the suite (a fraction of peak picked so a published table
sits inside the model, a latency picked inside a published range) makes the suite's own
error an in-sample figure: the runs that chose it agree with it by construction. This
module measures what a user meets instead. For every such constant (:data:`REFITS`) it
re-chooses the value without one source's cases (a source is one publication: one
citation of the data files) by the same rule the shipped value follows — the candidate
of the constant's published range that minimises the mean |relative error| of the
training and serving cases — and predicts that source's cases with it. A constant derived
from a measurement outside the suite (:data:`OUTSIDE`) needs no refit: leaving a source
out does not move it, so its out-of-sample error equals its in-sample error. Each
mechanism is also scored **without** it (the constant at the value that switches it off),
so the calibration page can say whether it earns its place.

>>> from mlsys.validation.loso import leave_one_source_out
>>> report = leave_one_source_out()                     # doctest: +SKIP
>>> report.summary()["training"]["out_of_sample_mean"]  # doctest: +SKIP
0.058

Nothing is cached on disk: every figure is recomputed from the data files (about a
minute of suite runs for the whole table, a few seconds for one constant).

References
----------
Stone (1974), "Cross-validatory choice and assessment of statistical predictions",
J. R. Stat. Soc. B 36(2) — leave-one-out assessment of a chosen predictor; here the unit
left out is a source (all the runs of one publication), since runs of one source share
a software stack and a measurement method and are not independent.
"""

from __future__ import annotations

import re
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from mlsys.core.catalog.bands import TRAINING_SCALES, training_kind
from mlsys.validation._case import Case
from mlsys.validation.sensitivity import CONSTANTS, Constant, clear_solver_caches, perturbed

__all__ = [
    "KINDS",
    "OUTSIDE",
    "REFITS",
    "LosoReport",
    "Refit",
    "case_kind",
    "case_source",
    "bands_toml",
    "decisions_table",
    "leave_one_source_out",
    "scored_cases",
]

KINDS = (
    "training dense",
    *(f"training dense, {name}" for _, name in TRAINING_SCALES),
    "training MoE",
    "serving prefill",
    "serving decode",
    "serving throughput",
)
"""Kinds of comparable cases, for the per-kind error (and the solvers' error band): dense
training pooled and by scale (:data:`mlsys.core.catalog.bands.TRAINING_SCALES`), MoE
training, and serving by what it times. A dense training case counts in its scale's kind
and in the pool."""

_ACCELERATORS = re.compile(r" on ([\d,]+) ")

_MOE_NAMES = ("Mixtral", "Qwen3", "DeepSeek", "gpt-oss", "A3B", "A22B")


def _constant(attribute: str, key: str | None = None) -> Constant:
    for c in CONSTANTS:
        if c.attribute == attribute and c.key == key:
            return c
    raise KeyError((attribute, key))


@dataclass(frozen=True)
class Refit:
    """One calibration constant and how leave-one-source-out treats it.

    Attributes
    ----------
    constant : Constant
        The constant (see :data:`mlsys.validation.sensitivity.CONSTANTS`).
    fitted_on : str
        Where its value was fitted or chosen, in words.
    candidates : tuple of float
        Values the refit may choose, as multiples of the shipped value (the constant's
        published range); empty for a constant derived outside the suite (no refit).
    without : float or None
        The multiple that switches the mechanism off (0 for a time, the multiple that
        gives 1 for a slowdown factor); ``None`` where no value means "absent".
    rechooses : bool
        For a constant derived outside the suite: switching it off moves what the refit
        constants are re-chosen to (a saving taken off a refit constant), so it is scored
        by the whole leave-one-source-out with it and without it, not by the shipped
        values alone.
    """

    constant: Constant
    fitted_on: str
    candidates: tuple[float, ...] = ()
    without: float | None = None
    rechooses: bool = False

    @property
    def refitted(self) -> bool:
        """Whether the suite chose the value (so leaving a source out can move it)."""
        return bool(self.candidates)


def _grid(shipped: float, values: Iterable[float]) -> tuple[float, ...]:
    return tuple(sorted({round(v / shipped, 6) for v in values} | {1.0}))


REFITS: tuple[Refit, ...] = (
    Refit(
        _constant("COMPUTE_EFFICIENCY", "gpu"),
        "chosen so Korthikanti et al. (2022) Table 5 sits inside the model, below the A100's "
        "measured matmul ceiling (0.859); refit over 0.65-0.85",
        _grid(0.75, (0.65, 0.675, 0.70, 0.725, 0.75, 0.775, 0.80, 0.825, 0.85)),
        without=0.859 / 0.75,
    ),
    Refit(
        _constant("_NARROW_FACTOR"),
        "an estimate (0.65 where 16-bit GEMMs reach 0.75); refit over 0.75-1.0",
        _grid(0.65 / 0.75, (0.75, 0.80, 0.65 / 0.75, 0.925, 1.0)),
        without=0.75 / 0.65,
    ),
    Refit(
        _constant("KERNEL_OVERHEAD_S"),
        "chosen inside Gray (2019)'s 0.9-6.7 µs per kernel; refit over that range",
        _grid(4e-6, (0.9e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6.7e-6)),
        without=0.0,
    ),
    Refit(
        _constant("FLASH_ATTENTION_FORWARD_FRACTION"),
        "chosen inside FlashAttention-2's 0.50-0.73 of A100 peak (Dao 2023, Fig. 4-5)",
        _grid(0.70, (0.55, 0.62, 0.70, 0.73)),
    ),
    Refit(
        _constant("FLASH_ATTENTION_BACKWARD_FRACTION"),
        "chosen inside FlashAttention-2's 0.55-0.63 of A100 peak (Dao 2023, Fig. 6)",
        _grid(0.60, (0.55, 0.60, 0.63)),
    ),
)
"""Constants whose value the suite chose: refit without each source in turn."""

OUTSIDE: tuple[Refit, ...] = (
    Refit(
        _constant("CUDA_GRAPH_LAUNCH_SAVING_S"),
        "Gray (2019): a kernel streamed against one replayed from a CUDA graph (not a suite "
        "row); charged to the engines whose decode replays graphs (gpt-fast, vLLM, SGLang)",
        without=0.0,
        rechooses=True,
    ),
    Refit(
        _constant("ENGINE_HOST_TIME_PER_STEP_S", "vllm_v0"),
        "vLLM PR 10933's batch-1 latency run (not a suite row)",
        without=0.0,
    ),
    Refit(
        _constant("MEGATRON_HOST_TIME_PER_OP_S"),
        "Megatron-Bridge's CUDA-graph guide: 139 ms a step saved (not a suite row)",
        without=0.0,
    ),
    Refit(
        _constant("CAUSAL_ROW_OVERHEAD_TILES"),
        "cuDNN's causal / unmasked benchmark ratios (NVIDIA/cudnn-frontend; not the suite)",
        without=0.0,
    ),
    Refit(
        _constant("OVERLAPPED_COMPUTE_SLOWDOWN"),
        "Lee et al. (2025): 18.9% average compute slowdown under overlapped collectives",
        without=0.0,
    ),
    Refit(
        _constant("FLASH_ATTENTION_2_SPEEDUP_OVER_1"),
        "Dao (2023): 'around 2x' over FlashAttention-1-generation kernels",
        without=0.5,
    ),
    Refit(
        _constant("FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME"),
        "Dao et al. (2022), App. E.6: dropout's measured cost inside the fused kernel",
        without=0.0,
    ),
    Refit(
        _constant("MEMORY_EFFICIENCY", "gpu"),
        "Jia et al. (2018) and BabelStream Triad on A100, H100, H200 (0.83-0.89)",
    ),
    Refit(
        _constant("REFERENCE_MATMUL_CEILING"),
        "Bekman's measured maximum achievable matmul FLOPS (A100 SXM 267.9 of 312)",
    ),
    Refit(
        _constant("HOPPER_FUSED_ATTENTION_FRACTIONS"),
        "FlashAttention-3 paper's cuDNN sweep on H100 (Shah et al. 2024, Fig. 5-6)",
    ),
)
"""Constants derived from measurements outside the suite: out-of-sample = in-sample."""


def case_source(case: Case) -> str:
    """The publication a case comes from: its citation (one source, one citation)."""
    return case.citation


def case_kind(case: Case) -> str:
    """Which of :data:`KINDS` a training or serving case is.

    Training runs split by whether the model is a mixture of experts (a catalog MoE
    family in the case's name) and, dense, by scale (the accelerator count its name
    states, "... on 64 H100 ...": :func:`mlsys.core.catalog.bands.training_kind`);
    serving cases by what they time: a prefill (time to first token), a decode step (time
    per output token, or a static batch's end-to-end latency, which decode dominates) or
    a throughput.
    """
    if case.group.startswith(("Training", "Held-out training")):
        found = _ACCELERATORS.search(case.name)
        gpus = float(found.group(1).replace(",", "")) if found else None
        return training_kind(any(n in case.name for n in _MOE_NAMES), gpus)
    if case.quantity == "time to first token":
        return "serving prefill"
    if "latency" in case.quantity or "per output token" in case.quantity:
        return "serving decode"
    return "serving throughput"


def scored_cases(cases: Sequence[Case]) -> list[Case]:
    """The cases the headline scores: two-sided performance-model cases of the training
    and serving groups, without runs their publisher reports as misconfigured."""
    return [
        c
        for c in cases
        if c.bound is None
        and c.method == "performance model"
        and not c.publisher_reports_misconfigured
        and c.group.startswith(("Training", "Serving"))
    ]


def _case_id(case: Case) -> str:
    return f"{case.group}|{case.name}|{case.quantity}"


def _suite() -> list[Case]:
    from mlsys.validation import run_group

    return [*run_group("training"), *run_group("serving")]


def _errors(suite: Callable[[], list[Case]]) -> dict[str, float]:
    return {_case_id(c): c.rel_error for c in scored_cases(suite())}


def _mean_abs(values: Iterable[float]) -> float:
    values = [abs(v) for v in values]
    return statistics.fmean(values) if values else float("nan")


@dataclass
class LosoReport:
    """Per-case in-sample and leave-one-source-out errors, and each constant's verdict.

    Attributes
    ----------
    cases : dict
        Case id -> (source, kind, area) with area ``"training"`` or ``"serving"``.
    in_sample : dict
        Case id -> relative error with the shipped constants.
    out_of_sample : dict
        Case id -> relative error with every refit constant re-chosen without the case's
        own source.
    constants : list of dict
        One per constant of :data:`REFITS` and :data:`OUTSIDE`: ``name``, ``value``,
        ``fitted_on``, ``refitted``, ``rechooses``, the means (training and serving
        pooled) ``in_sample``, ``out_of_sample`` and ``without`` (``nan`` where no value
        switches it off; both leave-one-source-out for a constant that ``rechooses``), the
        multiples chosen per source (``choices``), ``cases_moved`` (the cases switching it
        off moves) with their means ``moved_out_of_sample`` and ``moved_without``, and
        ``decision`` (``"passes"`` where the mechanism lowers the out-of-sample error or
        cannot be switched off, ``"fails"`` where switching it off does as well or
        better: a candidate for removal). A refit constant's ``out_of_sample`` is that constant
        alone refit without each source (the others as shipped); the report's
        ``out_of_sample`` errors refit all of them at once.
    heldout : dict
        Case id -> (kind, relative error) of the held-out runs
        (:mod:`mlsys.validation.heldout`): out of sample by construction, pooled with the
        leave-one-source-out errors in :meth:`by_kind`.
    """

    cases: dict[str, tuple[str, str, str]]
    in_sample: dict[str, float]
    out_of_sample: dict[str, float]
    constants: list[dict[str, Any]] = field(default_factory=list)
    heldout: dict[str, tuple[str, float]] = field(default_factory=dict)

    def _stats(self, errors: dict[str, float], ids: list[str]) -> tuple[float, float]:
        vals = [abs(errors[i]) for i in ids]
        return (statistics.fmean(vals), max(vals)) if vals else (float("nan"),) * 2

    def summary(self) -> dict[str, dict[str, float]]:
        """In-sample and out-of-sample mean and maximum |error| for training and serving.

        Returns
        -------
        dict
            ``{"training": {...}, "serving": {...}}``, each with ``n``,
            ``in_sample_mean``, ``in_sample_max``, ``out_of_sample_mean`` and
            ``out_of_sample_max`` (fractions).
        """
        out = {}
        for area in ("training", "serving"):
            ids = [i for i, (_, _, a) in self.cases.items() if a == area]
            im, ix = self._stats(self.in_sample, ids)
            om, ox = self._stats(self.out_of_sample, ids)
            out[area] = {
                "n": float(len(ids)),
                "in_sample_mean": im,
                "in_sample_max": ix,
                "out_of_sample_mean": om,
                "out_of_sample_max": ox,
            }
        return out

    def by_kind(self) -> dict[str, dict[str, float]]:
        """Out-of-sample |error| by kind of case (:data:`KINDS`): the suite's
        leave-one-source-out errors and the held-out runs' errors together.

        Returns
        -------
        dict
            Kind -> ``n``, ``mean``, ``p90`` (the 90th percentile, nearest rank) and
            ``max`` of the out-of-sample |relative error|.
        """
        pool = [(k, self.out_of_sample[i]) for i, (_, k, _) in self.cases.items()]
        pool += list(self.heldout.values())
        out = {}
        for kind in KINDS:
            # the pooled dense kind takes every scale's cases
            vals = sorted(abs(e) for k, e in pool if k == kind or k.startswith(kind + ", "))
            if not vals:
                continue
            rank = max(0, -(-9 * len(vals) // 10) - 1)  # nearest-rank 90th percentile
            out[kind] = {"n": float(len(vals)), "mean": statistics.fmean(vals),
                         "p90": vals[rank], "max": vals[-1]}  # fmt: skip
        return out


def _choose(grid: dict[float, dict[str, float]], ids: list[str], shipped: float = 1.0) -> float:
    """The multiple whose mean |error| over ``ids`` is least (ties: nearest the shipped)."""
    return min(
        grid, key=lambda f: (round(_mean_abs(grid[f][i] for i in ids), 12), abs(f - shipped))
    )


def leave_one_source_out(
    refits: Sequence[Refit] = REFITS,
    outside: Sequence[Refit] = OUTSIDE,
    suite: Callable[[], list[Case]] | None = None,
) -> LosoReport:
    """Refit every suite-chosen constant without each source and predict that source.

    Parameters
    ----------
    refits : sequence of Refit
        Constants the suite chose (default :data:`REFITS`).
    outside : sequence of Refit
        Constants derived outside the suite, scored only with and without (default
        :data:`OUTSIDE`).
    suite : callable, optional
        Returns the cases (default: the training and serving groups of
        :func:`mlsys.validation.run_group`).

    Returns
    -------
    LosoReport
    """
    default_suite = suite is None
    suite = _suite if suite is None else suite
    clear_solver_caches()
    base_cases = scored_cases(suite())
    meta = {_case_id(c): (case_source(c), case_kind(c),
                          "training" if c.group.startswith("Training") else "serving")
            for c in base_cases}  # fmt: skip
    base = {_case_id(c): c.rel_error for c in base_cases}
    ids = list(base)
    sources = sorted({s for s, _, _ in meta.values()})
    grids: dict[int, dict[float, dict[str, float]]] = {}
    choices: dict[str, dict[int, float]] = {s: {} for s in sources}
    for n, r in enumerate(refits):
        grid = {1.0: base}
        for f in r.candidates:
            if f != 1.0:
                with perturbed(r.constant, f):
                    grid[f] = _errors(suite)
        grids[n] = grid
        for s in sources:
            choices[s][n] = _choose(grid, [i for i in ids if meta[i][0] != s])
    out_of_sample = _predict_left_out(refits, choices, meta, base, suite)
    report = LosoReport(cases=meta, in_sample=base, out_of_sample=out_of_sample,
                        heldout=_heldout() if default_suite else {})  # fmt: skip
    for n, r in enumerate(refits):
        # this constant alone refit without each source, the others as shipped
        alone = {i: grids[n][choices[meta[i][0]][n]][i] for i in ids}
        report.constants.append(_verdict(r, base, alone, ids, suite,
                                         {s: choices[s][n] for s in sources}))  # fmt: skip
    for r in outside:
        if r.rechooses and r.without is not None:
            # the refit constants re-chosen with this one off: out of sample both ways
            with perturbed(r.constant, r.without):
                off = leave_one_source_out(refits, (), suite).out_of_sample
            report.constants.append(
                _verdict(r, base, out_of_sample, ids, suite, {}, without_errors=off)
            )
        else:
            report.constants.append(_verdict(r, base, base, ids, suite, {}))
    return report


def _heldout() -> dict[str, tuple[str, float]]:
    from mlsys.validation.heldout import heldout_cases

    return {_case_id(c): (case_kind(c), c.rel_error) for c in heldout_cases()}


def _predict_left_out(
    refits: Sequence[Refit],
    choices: dict[str, dict[int, float]],
    meta: dict[str, tuple[str, str, str]],
    base: dict[str, float],
    suite: Callable[[], list[Case]],
) -> dict[str, float]:
    """Each source's cases with all refit constants at their leave-it-out values at once
    (one suite run per distinct set of values)."""
    out: dict[str, float] = {}
    by_setting: dict[tuple[float, ...], list[str]] = {}
    for s, picked in choices.items():
        by_setting.setdefault(tuple(picked[n] for n in range(len(refits))), []).append(s)
    for setting, srcs in by_setting.items():
        if all(f == 1.0 for f in setting):
            errs = base
        else:
            with ExitStack() as stack:
                for r, f in zip(refits, setting, strict=True):
                    if f != 1.0:
                        stack.enter_context(perturbed(r.constant, f))
                errs = _errors(suite)
        for i, (s, _, _) in meta.items():
            if s in srcs:
                out[i] = errs[i]
    return out


def _verdict(
    r: Refit,
    base: dict[str, float],
    oos: dict[str, float],
    ids: list[str],
    suite: Callable[[], list[Case]],
    choices: dict[str, float],
    without_errors: dict[str, float] | None = None,
) -> dict[str, Any]:
    without = float("nan")
    touched = ids
    if r.without is not None:
        if without_errors is None:
            with perturbed(r.constant, r.without):
                off = _errors(suite)
        else:
            off = without_errors
        without = _mean_abs(off[i] for i in ids)
        # the cases the mechanism moves: against the shipped errors, or (scored by the
        # whole leave-one-source-out) against the out-of-sample errors with it
        ref = base if without_errors is None else oos
        touched = [i for i in ids if abs(off[i] - ref[i]) > 1e-9]
    loso = _mean_abs(oos[i] for i in ids)
    kept = r.without is None or loso < without
    return {
        "cases_moved": len(touched),
        "moved_out_of_sample": _mean_abs(oos[i] for i in touched),
        "moved_without": (
            _mean_abs(off[i] for i in touched) if r.without is not None else float("nan")
        ),
        "name": r.constant.name,
        "value": r.constant.describe(),
        "fitted_on": r.fitted_on,
        "refitted": r.refitted,
        "rechooses": r.rechooses,
        "in_sample": _mean_abs(base[i] for i in ids),
        "out_of_sample": loso,
        "without": without,
        "choices": choices,
        "decision": "passes" if kept else "fails",
    }


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{x:.1%}"


def decisions_table(report: LosoReport) -> str:
    """Each constant's verdict as a Markdown table (mean |error| of the training and
    serving cases pooled; "moved": the cases switching the mechanism off moves).

    Parameters
    ----------
    report : LosoReport
        :func:`leave_one_source_out`'s result.

    Returns
    -------
    str
    """
    lines = [
        "| constant | value | where it was fitted or chosen | refit per source | "
        "in-sample | out-of-sample | without it | cases moved: with / without | test |",
        "|---|---|---|---|---:|---:|---:|---:|---|",
    ]
    for c in report.constants:
        picked = sorted(set(c["choices"].values()))
        refit = (
            ("× " + ", ".join(f"{f:.3g}" for f in picked))
            if c["refitted"]
            else (
                "no (outside; scored with and without it by the refits)"
                if c.get("rechooses")
                else "no (outside)"
            )
        )
        moved = (f"{c['cases_moved']}: {_pct(c['moved_out_of_sample'])} / "
                 f"{_pct(c['moved_without'])}")  # fmt: skip
        lines.append(
            f"| {c['name']} | {c['value']} | {c['fitted_on']} | {refit} | "
            f"{_pct(c['in_sample'])} | {_pct(c['out_of_sample'])} | {_pct(c['without'])} | "
            f"{moved} | {c['decision']} |"
        )
    return "\n".join(lines)


def bands_toml(report: LosoReport) -> str:
    """The per-kind bands as the body of ``mlsys/core/catalog/data/error_bands.toml``.

    Parameters
    ----------
    report : LosoReport
        :func:`leave_one_source_out`'s result.

    Returns
    -------
    str
        One table per kind: ``band`` (90th percentile), ``mean`` and ``cases``.
    """
    tables = "\n".join(
        f'["{kind}"]\nband = {v["p90"]:.3f}\nmean = {v["mean"]:.3f}\ncases = {int(v["n"])}\n'
        for kind, v in report.by_kind().items()
    )
    return _BANDS_HEADER + tables


_BANDS_HEADER = """\
# Expected error of a prediction, by kind of case and scale: out-of-sample residuals, the
# leave-one-source-out errors of the accuracy suite's comparable cases (mlsys.validation.loso:
# every constant the suite chose refit without the case's own source) with the held-out runs'
# errors (mlsys.validation.heldout: sources nothing was chosen on). Dense training by scale
# (accelerators of the run: one node, 9-256, over 256) and pooled ("training dense", for a
# prediction whose scale is unknown). band: the 90th percentile of |predicted / published - 1|
# (nearest rank), so nine in ten comparable runs from sources mlsys was not tuned on fell
# inside it; mean: their mean |error|; cases: how many. Regenerate with
#     python -m mlsys.validation.loso --bands > mlsys/core/catalog/data/error_bands.toml
# tests/validation/test_loso.py checks these figures against a fresh run of the suite.

"""


if __name__ == "__main__":  # python -m mlsys.validation.loso [--bands]
    _report = leave_one_source_out()
    if "--bands" in sys.argv:
        print(bands_toml(_report), end="")
    else:
        print(_report.summary())
        print(decisions_table(_report))
