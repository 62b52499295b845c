"""The CATS page over 5 rates x 3 RTTs x {FIFO, CATS} x 10 seeds (300 runs), first contentful
paint with 95% confidence intervals.

    pip install ./crates/triage-py matplotlib       # once, from the repository
    python examples/cats_sweep.py                    # writes cats_sweep.svg and cats_sweep.csv
    python examples/cats_sweep.py --ray              # the same runs as Ray tasks
"""

import sys
from pathlib import Path

import triage

HERE = Path(__file__).resolve().parent
RATES = ["1Mbps", "2Mbps", "5Mbps", "10Mbps", "20Mbps"]
DELAYS = {"20ms": "10ms", "50ms": "25ms", "100ms": "50ms"}  # RTT -> one-way bottleneck delay

plan = {
    "scenario": str(HERE / "cats-page.toml"),
    "repetitions": 10,
    "metrics": ["page.fcp_ms"],
    "grid": {
        "topology.bottleneck.rate": RATES,
        "topology.bottleneck.delay": list(DELAYS.values()),
        "transport.scheduler": ["fifo", "cats"],
    },
}

df = triage.sweep(plan, executor="ray" if "--ray" in sys.argv else None)
df.to_csv("cats_sweep.csv", index=False)
stats = (
    df.groupby(["topology.bottleneck.delay", "transport.scheduler", "topology.bottleneck.rate"], sort=False)["value"]
    .agg(["mean", "std", "count"])
    .reset_index()
)
stats["ci95"] = 1.96 * stats["std"] / stats["count"] ** 0.5  # 10 seeds: t would be 2.26

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, len(DELAYS), figsize=(12, 4), sharey=True)
for ax, (rtt, delay) in zip(axes, DELAYS.items()):
    for scheduler, marker in [("fifo", "o"), ("cats", "s")]:
        s = stats[(stats["topology.bottleneck.delay"] == delay) & (stats["transport.scheduler"] == scheduler)]
        ax.errorbar(range(len(RATES)), s["mean"], yerr=s["ci95"], marker=marker, capsize=3, label=scheduler.upper())
    ax.set_xticks(range(len(RATES)), RATES)
    ax.set_title(f"RTT {rtt}, 1% loss")
    ax.set_xlabel("bottleneck rate")
axes[0].set_ylabel("FCP (ms), mean and 95% CI")
axes[0].legend()
fig.tight_layout()
fig.savefig("cats_sweep.svg")
print(stats.to_string(index=False))
