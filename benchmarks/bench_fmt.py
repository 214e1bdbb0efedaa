"""How long one inline ``fmt`` call takes once the unit caches are warm.

Target: well under 100 µs per call. A chapter holds a few hundred inline numbers, so the
formatting engine must never be what a reader waits for. Each case is timed over many
calls (best of five repeats) after one warm-up call, and printed with its ratio to the
target (below 1 is good).

Run: ``python benchmarks/bench_fmt.py``.
"""

from __future__ import annotations

import timeit

from mlsys import Q_
from mlsys.formatting import fmt, money, pct, rng, sci

TARGET_US = 100.0
CALLS = 2000


def main() -> None:
    bandwidth = Q_(3.35e12, "B/s")
    memory = Q_(80, "GiB")
    duration = Q_(3.2e6, "s")
    carbon = Q_(0.4, "kgCO2e/kWh")
    low, high = Q_(1.9e9, "B"), Q_(2.4e9, "B")
    cases = {
        "fmt(Quantity) auto prefix": lambda: fmt(bandwidth),
        "fmt(Quantity, 'GB/s')": lambda: fmt(bandwidth, "GB/s"),
        "fmt(GiB quantity) -> GB": lambda: fmt(memory),
        "fmt(duration) ladder": lambda: fmt(duration),
        "fmt(carbon intensity)": lambda: fmt(carbon),
        "fmt(plain float)": lambda: fmt(16384.0),
        "pct(0.419)": lambda: pct(0.419),
        "money(4.2e6)": lambda: money(4.2e6),
        "rng(lo, hi)": lambda: rng(low, high),
        "sci(3.14e23)": lambda: sci(3.14e23),
    }
    width = max(map(len, cases))
    print(f"{'case':<{width}}  µs/call  ratio to {TARGET_US:.0f} µs")
    for name, call in cases.items():
        call()  # warm the unit caches
        best = min(timeit.repeat(call, number=CALLS, repeat=5)) / CALLS * 1e6
        print(f"{name:<{width}}  {best:7.1f}  {best / TARGET_US:.3f}")


if __name__ == "__main__":
    main()
