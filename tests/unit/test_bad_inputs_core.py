"""Bad inputs to the core formulas and solvers: each raises a ParameterError naming the
parameter, the value and what is allowed. The table below is the documentation."""

from __future__ import annotations

import math

import pytest

from mlsys import Hardware, Models, ParameterError, TransformerWorkload
from mlsys.core.formulas import (
    activation_bytes_per_layer,
    optimizer_state_bytes_per_param,
    training_flops_per_token,
    transformer_param_count,
    zero_communication_elements,
    zero_model_state_bytes,
)
from mlsys.core.solvers.efficiency import default_efficiency
from mlsys.core.solvers.memory import MemoryModel
from mlsys.core.solvers.roofline import SingleNodeModel

H100 = Hardware.H100
GPT3 = Models.GPT3_175B
SMALL = TransformerWorkload(name="small", layers=4, hidden=256, heads=8, vocab=1000, seq_len=128)


def _single(**kw):
    return lambda: SingleNodeModel().solve(SMALL, H100, **kw)


def _memory(**kw):
    return lambda: MemoryModel().solve(SMALL, H100, **kw)


# (case id, call, parameter named in the message, text of what is allowed)
BAD = [
    ("single batch 0", _single(batch_size=0), "batch_size=0", "positive integer"),
    ("single batch negative", _single(batch_size=-4), "batch_size=-4", "positive integer"),
    ("single batch NaN", _single(batch_size=math.nan), "batch_size=nan", "positive integer"),
    ("single batch fractional", _single(batch_size=2.5), "batch_size=2.5", "positive integer"),
    ("single batch bool", _single(batch_size=True), "batch_size=True", "positive integer"),
    ("single seq 0", _single(seq_len=0), "seq_len=0", "positive integer"),
    (
        "single kv negative",
        _single(phase="decode", kv_cache_len=-1),
        "kv_cache_len=-1",
        "non-negative integer",
    ),
    ("single unknown precision", _single(precision="fp7"), "precision='fp7'", "one of fp64"),
    (
        "single precision w/o peak",
        lambda: SingleNodeModel().solve(SMALL, Hardware.A100_80GB, precision="fp8"),
        "precision='fp8'",
        "has a peak for",
    ),
    ("single unknown phase", _single(phase="serve"), "phase='serve'", "'prefill'"),
    ("single efficiency > 1", _single(efficiency=1.5), "efficiency=1.5", "(0, 1]"),
    ("single efficiency NaN", _single(efficiency=math.nan), "efficiency=nan", "(0, 1]"),
    (
        "single efficiency bad key",
        _single(efficiency={"flops": 0.5}),
        "efficiency=",
        "'compute' and/or 'memory'",
    ),
    (
        "single hardware not a device",
        lambda: SingleNodeModel().solve(SMALL, "H100"),
        "hardware='H100'",
        "an Accelerator",
    ),
    ("memory batch 0", _memory(batch_size=0), "batch_size=0", "positive integer"),
    ("memory tp not dividing heads", _memory(tp_size=3), "tp_size=3", "a divisor of heads=8"),
    ("memory tp 0", _memory(tp_size=0), "tp_size=0", "positive integer"),
    ("memory dp negative", _memory(dp_size=-2), "dp_size=-2", "positive integer"),
    ("memory pp > layers", _memory(pp_size=8), "pp_size=8", "at most layers=4"),
    ("memory ep on dense model", _memory(ep_size=2), "ep_size=2", "dense"),
    ("memory zero stage 4", _memory(zero_stage=4), "zero_stage=4", "0, 1, 2 or 3"),
    ("memory zero stage NaN", _memory(zero_stage=math.nan), "zero_stage=nan", "0, 1, 2 or 3"),
    (
        "memory unknown recompute",
        _memory(recompute="partial"),
        "recompute='partial'",
        "'none', 'selective', 'full', 'dots'",
    ),
    ("memory unknown mode", _memory(mode="serving"), "mode='serving'", "'training'"),
    ("memory unknown precision", _memory(precision="bf17"), "precision='bf17'", "one of"),
    (
        "memory unknown kv precision",
        _memory(mode="inference", kv_precision="q3"),
        "kv_precision='q3'",
        "one of",
    ),
    ("memory unknown optimizer", _memory(optimizer="lion"), "optimizer='lion'", "adam"),
    (
        "memory microbatches 0",
        _memory(microbatch_count=0),
        "microbatch_count=0",
        "positive integer",
    ),
    ("memory v_stages 0", _memory(v_stages=0), "v_stages=0", "positive integer"),
    (
        "memory sequence_parallel not a flag word",
        _memory(sequence_parallel="maybe"),
        "sequence_parallel='maybe'",
        "True or False",
    ),
    (
        "memory negative overhead",
        _memory(framework_overhead=-1.0),
        "framework_overhead=-1.0",
        "non-negative",
    ),
    (
        "memory overhead wrong unit",
        _memory(framework_overhead="3 GB/s"),
        "framework_overhead=",
        "dimension of byte",
    ),
    (
        "formula zero stage 5",
        lambda: zero_model_state_bytes(1e9, 8, 5),
        "zero_stage=5",
        "0, 1, 2 or 3",
    ),
    (
        "formula zero comm stage 1.5",
        lambda: zero_communication_elements(1e9, 1.5),
        "zero_stage=1.5",
        "0, 1, 2 or 3",
    ),
    (
        "formula recompute",
        lambda: activation_bytes_per_layer(1, 1, 1, 1, recompute="some"),
        "recompute='some'",
        "none, selective, full, dots",
    ),
    (
        "formula training recompute",
        lambda: training_flops_per_token(1, 1, 1, 1, 1, recompute="x"),
        "recompute='x'",
        "none, selective, full, dots",
    ),
    (
        "formula norm",
        lambda: transformer_param_count(1, 8, 2, 10, norm="groupnorm"),
        "norm='groupnorm'",
        "layernorm",
    ),
    (
        "formula optimizer",
        lambda: optimizer_state_bytes_per_param("rmsprop"),
        "optimizer='rmsprop'",
        "adam",
    ),
    (
        "efficiency kind",
        lambda: default_efficiency(H100, "bf16", "network"),
        "kind='network'",
        "'compute' or 'memory'",
    ),
]


@pytest.mark.parametrize(
    ("call", "named", "allowed"), [c[1:] for c in BAD], ids=[c[0] for c in BAD]
)
def test_bad_input_raises_parameter_error(call, named, allowed):
    with pytest.raises(ParameterError) as info:
        call()
    message = str(info.value)
    assert named in message
    assert allowed in message
    assert "expected" in message


def test_gpt3_tp_must_divide_96_heads():
    with pytest.raises(ParameterError, match="a divisor of heads=96"):
        MemoryModel().solve(GPT3, H100, tp_size=7)


# ---------------------------------------------------------------------------------------
# Bad inputs of every kind. An error names the parameter, the value and what
# is allowed, on one line under 300 characters; the CLI answers with "mlsys X: error: ..."
# and exit status 2, never a traceback.
# ---------------------------------------------------------------------------------------

from mlsys import Q_, Datacenters, Fabrics, Fleet, MlsysError, Nodes  # noqa: E402
from mlsys.cli import main as cli_main  # noqa: E402
from mlsys.core.solvers.sustainability import SustainabilityModel  # noqa: E402
from mlsys.core.types import Accelerator, ConfigurationError  # noqa: E402
from mlsys.formatting import count, fmt_int, pct  # noqa: E402

_FLEET = Fleet(node=Nodes.DGX_H100, count=2, fabric=Fabrics.IB_NDR)

# (case id, call, error type, texts the message must contain)
BAD_14 = [
    ("count of bytes", lambda: count(Q_(5, "GB")), MlsysError, ["value='5 GB'", "a count"]),
    ("pct of bytes", lambda: pct(Q_(5, "GB")), MlsysError, ["fraction='5 GB'", "a fraction"]),
    ("fmt_int of a fraction", lambda: fmt_int(2.5), MlsysError, ["value=2.5", "whole number"]),
    (
        "grid given a Datacenter",
        lambda: SustainabilityModel().solve(
            fleet=_FLEET, duration=1, grid=Datacenters.HYPERSCALE_AVG
        ),
        ParameterError,
        ["grid=", "a GridProfile", "datacenter="],
    ),
    (
        "datacenter given a grid",
        lambda: SustainabilityModel().solve(
            fleet=_FLEET, duration=1, datacenter=Datacenters.HYPERSCALE_AVG.grid
        ),
        ParameterError,
        ["datacenter=", "a Datacenter"],
    ),
    (
        "fleet re-equipped",
        lambda: SustainabilityModel().solve(
            fleet=_FLEET, duration=1, accelerator=Hardware.A100_80GB
        ),
        ParameterError,
        ["accelerator=", "the fleet's own accelerator", "H100"],
    ),
    (
        "fleet of two without a fabric",
        lambda: Fleet(node=Nodes.DGX_H100, count=2),
        ConfigurationError,
        ["fleet of 2 nodes needs fabric="],
    ),
    (
        "fleet without a node",
        lambda: Fleet(count=2, fabric=Fabrics.IB_NDR),
        ConfigurationError,
        ["node: required"],
    ),
    (
        "accelerator with a bandwidth for a capacity",
        lambda: Accelerator(
            name="x",
            peak_flops={"bf16": 1e12},
            memory_capacity="80 GB/s",
            memory_bandwidth=1e12,
            tdp=100,
        ),
        ConfigurationError,
        ["memory_capacity='80 GB/s'", "dimension of byte"],
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "texts"), [c[1:] for c in BAD_14], ids=[c[0] for c in BAD_14]
)
def test_issue_14_bad_input(call, error, texts):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and len(message) < 300, message
    for text in texts:
        assert text in message, message


def test_one_node_fleet_needs_no_fabric():
    fleet = Fleet(node=Nodes.DGX_H100, count=1)
    # No traffic leaves the node: its scale-up fabric stands in for the network.
    assert fleet.fabric is Nodes.DGX_H100.intra_fabric


# (case id, argv, texts the one-line error must contain)
CLI_BAD = [
    ("roofline no hardware", ["solve", "roofline", "--model", "Llama3_8B"], ["--hardware"]),
    ("roofline no model", ["solve", "roofline", "--hardware", "H100"], ["--model"]),
    ("memory no hardware", ["solve", "memory", "--model", "Llama3_8B"], ["--hardware"]),
    ("serving no hardware", ["solve", "serving", "--model", "Llama3_8B"], ["--hardware"]),
    ("distributed no fleet", ["solve", "distributed", "--model", "Llama3_8B"], ["--node"]),
    ("reliability no fleet", ["solve", "reliability"], ["--node"]),
    (
        "distributed nodes 0",
        ["solve", "distributed", "--model", "Llama3_8B", "--node", "DGX_H100", "--nodes", "0"],
        ["--nodes", "0", "1 or more"],
    ),
    (
        "two nodes no fabric",
        ["solve", "economics", "--node", "DGX_H100", "--nodes", "2"],
        ["--fabric"],
    ),
    ("nodes without node", ["solve", "economics", "--nodes", "4"], ["--node"]),
    (
        "search seq-len -1",
        [
            "search",
            "--model",
            "Llama3_8B",
            "--node",
            "DGX_H100",
            "--nodes",
            "1",
            "--batch-size",
            "8",
            "--seq-len",
            "-1",
        ],
        ["--seq-len", "-1", "1 or more"],
    ),
    ("demo dp-size 0", ["demo", "--dp-size", "0"], ["--dp-size", "0"]),
    (
        "bad --set value",
        [
            "solve",
            "roofline",
            "--model",
            "Llama3_8B",
            "--hardware",
            "H100",
            "--set",
            "batch_size=abc",
        ],
        ["batch_size='abc'", "positive integer"],
    ),
    ("unknown model", ["solve", "roofline", "--model", "Nope", "--hardware", "H100"], ["Nope"]),
]


@pytest.mark.parametrize(("argv", "texts"), [c[1:] for c in CLI_BAD], ids=[c[0] for c in CLI_BAD])
def test_cli_mistakes_exit_2_with_one_line(argv, texts, capsys):
    try:
        status = cli_main(argv)
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    out = capsys.readouterr()
    assert status == 2
    assert out.out == ""  # nothing printed before failing (mlsys demo printed a table)
    last = out.err.strip().splitlines()[-1]
    assert last.startswith(f"mlsys {argv[0]}: error: ") and len(last) < 300, out.err
    assert "Traceback" not in out.err
    for text in texts:
        assert text in last, last
