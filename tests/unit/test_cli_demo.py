"""``mlsys demo``: the README's main job prints both tables from the solvers."""

from mlsys.cli import main
from mlsys.commands.demo import memory_rows, table


def test_demo_prints_both_tables(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Roofline of Llama3_8B" in out and "Training memory per H100" in out
    assert "| H100" in out and "ZeRO-3" in out


def test_zero_rows_follow_rajbhandari():
    # Llama-2-70B (68.98e9 parameters) with TP 8 leaves 8.62e9 per GPU. Mixed-precision Adam
    # (Rajbhandari et al. 2020): bf16 weights 2 B/param = 17.2 GB; optimizer state
    # K = 12 B/param = 103 GB unsharded, / 64 under ZeRO-1 = 1.62 GB. Gradients are fp32
    # for bf16 training (Megatron-LM; default_grad_dtype): 4 B/param × 8.62e9 = 34.5 GB,
    # / 64 under ZeRO-2 = 0.539 GB.
    rows = {r[0]: r for r in memory_rows("Llama2_70B", 64)}
    assert rows["ZeRO-0"][1] == "17.2 GB" and rows["ZeRO-0"][3] == "103 GB"
    assert rows["ZeRO-0"][2] == "34.5 GB" and rows["ZeRO-1"][2] == "34.5 GB"
    assert rows["ZeRO-2"][2] == "0.539 GB"
    assert rows["ZeRO-1"][3] == "1.62 GB"
    assert rows["ZeRO-0"][-1] == "no" and rows["ZeRO-3"][-1] == "yes"


def test_table_alignment():
    text = table(["a", "bb"], [["1", "2"], ["333", "4"]])
    assert text.splitlines()[0] == "| a   | bb |"
    assert text.splitlines()[1] == "|-----|----|"


def test_demo_into_a_closed_pipe_stops_quietly():
    # `mlsys demo | head -3`: the reader leaves early; no traceback may reach the terminal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "mlsys.cli", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the demo's first line: its first print meets a closed pipe
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
