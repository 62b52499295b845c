#!/usr/bin/env python3
"""Runs Lighthouse's Lantern and `triage page simulate` on the same recordings, under the
same throttling (mobileSlow4G by default: 150 ms RTT, 1638.4 kbps, 4x CPU for Lantern), and
prints their FCP, LCP, Speed Index and TTI side by side with our error against Lantern.

    python3 scripts/lantern_compare.py ../shared/reference/lantern/fixtures/*      # folders with
                                                   # devtoolslog.json and trace.json
    python3 scripts/lantern_compare.py --json DIR...

Lantern is installed from npm on first use into $LANTERN_DIR (default /tmp/lantern) with
../shared/reference/lantern/setup.sh (a copy: ../shared is read-only). The triage binary is
target/release/triage (built with `cargo build --release -p triage-cli` when missing).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference" / "lantern"
METRICS = [("fcp", "fcp_ms", "FCP"), ("lcp", "lcp_ms", "LCP"), ("si", "si_ms", "SI"), ("tti", "tti_ms", "TTI")]


def lantern_env(base: Path):
    node_bin = base / "node" / "node_modules" / ".bin"
    lh = base / "node_modules" / "lighthouse"
    if not lh.is_dir():
        copy = base.parent / (base.name + "-ref")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(REFERENCE, copy)
        print(f"installing Lantern into {base} (npm, about a minute)", file=sys.stderr)
        subprocess.run(["bash", str(copy / "setup.sh"), str(base)], check=True, stdout=sys.stderr)
    env = dict(os.environ, PATH=f"{node_bin}:{os.environ['PATH']}", LIGHTHOUSE_DIR=str(lh))
    return env


def triage_bin() -> Path:
    b = REPO / "target" / "release" / "triage"
    if not b.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "triage-cli"], cwd=REPO, check=True)
    return b


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path, help="folders with devtoolslog.json and trace.json")
    ap.add_argument("--profile", default="lighthouse-mobile-slow-4g", help="triage's network profile")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--recorded-gaps", action="store_true", help="triage waits each object's recorded gap")
    ap.add_argument("--cpu-slowdown", type=float, help="scale the recorded gaps (Lantern's CPU: 4)")
    a = ap.parse_args()
    env = lantern_env(Path(os.environ.get("LANTERN_DIR", "/tmp/lantern")))
    run_lantern = REFERENCE / "run-lantern.mjs"
    rows = []
    for d in a.dirs:
        log = d / "devtoolslog.json"
        if not log.is_file() or not (d / "trace.json").is_file():
            print(f"error: {d}: expected devtoolslog.json and trace.json", file=sys.stderr)
            return 1
        ln = subprocess.run(["node", str(run_lantern), str(d)], env=env, capture_output=True, text=True)
        if ln.returncode != 0:
            print(f"error: {d}: Lantern failed: {ln.stderr.strip()[-500:]}", file=sys.stderr)
            return 1
        lantern = json.loads(ln.stdout.strip().splitlines()[-1])
        ours = subprocess.run(
            [str(triage_bin()), "page", "simulate", str(log), "--profile", a.profile, "--json"]
            + (["--recorded-gaps"] if a.recorded_gaps else [])
            + (["--cpu-slowdown", str(a.cpu_slowdown)] if a.cpu_slowdown is not None else []),
            capture_output=True, text=True,
        )
        if ours.returncode not in (0, 3):
            print(f"error: {d}: triage page simulate failed: {ours.stderr.strip()}", file=sys.stderr)
            return 1
        t = json.loads(ours.stdout)
        row = {"recording": d.name}
        for key, ours_key, _ in METRICS:
            ref, got = lantern["lantern"][key], t[ours_key]
            row[key] = {"lantern_ms": ref, "triage_ms": got,
                        "error_pct": None if not ref or got is None else round(100 * (got - ref) / ref, 1)}
        row["observed_fcp_ms"] = lantern["observed"]["fcp"]
        rows.append(row)
    medians = {}
    for key, _, _ in METRICS:
        errs = [abs(r[key]["error_pct"]) for r in rows if r[key]["error_pct"] is not None]
        medians[key] = statistics.median(errs) if errs else None
    if a.json:
        print(json.dumps({"profile": a.profile, "rows": rows, "median_abs_error_pct": medians}, indent=2))
        return 0
    head = "| recording | " + " | ".join(f"{n} Lantern / triage (error)" for _, _, n in METRICS) + " |"
    print(head)
    print("| --- " * (len(METRICS) + 1) + "|")
    for r in rows:
        cells = []
        for key, _, _ in METRICS:
            c = r[key]
            e = "" if c["error_pct"] is None else f" ({c['error_pct']:+.0f}%)"
            cells.append(f"{c['lantern_ms']} / {c['triage_ms'] if c['triage_ms'] is None else round(c['triage_ms'])}{e}")
        print(f"| {r['recording']} | " + " | ".join(cells) + " |")
    print("| median abs. error | " + " | ".join("" if medians[k] is None else f"{medians[k]:.0f}%" for k, _, _ in METRICS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
