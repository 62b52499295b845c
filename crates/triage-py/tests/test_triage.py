"""The Python package: the same documents as the command line, tidy sweeps, Ray."""

import json
import os
from pathlib import Path

import pandas as pd
import pytest

import triage

REPO = Path(__file__).resolve().parents[3]
GOLDEN = REPO / "crates/triage-cli/tests/golden"


def _without_source(doc):
    doc = json.loads(json.dumps(doc))
    doc["input"].pop("source")
    return doc


def test_run_prints_what_the_command_line_prints():
    # The golden snapshot is `triage run scenarios/cats-fifo.toml --json` (from the repository).
    want = json.loads((GOLDEN / "scenario-cats-fifo.json").read_text())
    got = triage.run(REPO / "scenarios/cats-fifo.toml")
    assert got["input"]["source"] == str(REPO / "scenarios/cats-fifo.toml")
    assert _without_source(got) == _without_source(want)
    assert triage.run(str(REPO / "scenarios/cats-fifo.toml")) == got
    # The built-in copy and the TOML text give the same document but for its source.
    assert _without_source(triage.run("cats-fifo")) == _without_source(want)
    assert _without_source(triage.run((REPO / "scenarios/cats-fifo.toml").read_text())) == _without_source(want)


def test_import_warnings_reach_the_report():
    # A warm recording (bbc.com: its cache hits) warns on the command line; the document
    # says it in each variant's report.
    har = REPO.parent / "shared/data/pages/bbc.com.devtools.har"
    assert har.is_file(), f"test data {har} is missing: these tests need ../shared/data/pages"
    doc = triage.run({
        "name": "warm",
        "stop": "60s",
        "topology": {"kind": "profile", "name": "lighthouse-mobile-slow-4g"},
        "flows": [{"name": "page", "client": "c0", "server": "s0", "page": str(har)}],
    })
    (line,) = doc["variants"][0]["report"]["warnings"]
    assert line.startswith("flows[0].page: ") and "85 of 118 objects were served from the browser's cache" in line
    assert "warnings" not in triage.run("cats-fifo")["variants"][0]["report"]


def test_the_resolved_input_runs_the_same():
    # input.resolved is the scenario as it ran, every field written out; as a dict or a
    # .json file it runs the same simulation and resolves to itself.
    doc = triage.run("cats", set={"topology.bottleneck.rate": "3Mbps"}, seed=4)
    resolved = doc["input"]["resolved"]
    assert resolved["seed"] == 4
    assert resolved["topology"]["bottleneck"]["rate_bps"] == 3_000_000
    assert resolved["transport"]["mss_bytes"] == 1448
    again = triage.run(resolved)
    assert again["variants"] == doc["variants"]
    assert again["input"]["resolved"] == resolved


def test_dicts_overrides_and_seeds():
    import tomllib

    as_dict = tomllib.loads((REPO / "scenarios/cats-fifo.toml").read_text())
    base = triage.run(as_dict)
    assert base["variants"] == triage.run("cats-fifo")["variants"]
    faster = triage.run("cats-fifo", set={"topology.bottleneck.rate": "4Mbps"})
    as_dict["topology"]["bottleneck"]["rate"] = "4Mbps"
    assert faster["variants"] == triage.run(as_dict)["variants"]
    fct = lambda d: d["variants"][0]["report"]["flows"][0]["fct_ms"]  # noqa: E731
    assert fct(faster) < fct(base)
    assert triage.run("cats-fifo", set=["topology.bottleneck.rate=4Mbps"]) == faster
    lossy = {"topology.bottleneck.loss": {"kind": "bernoulli", "loss_prob": 0.05}}
    a, b = triage.run("cats-fifo", set=lossy, seed=1), triage.run("cats-fifo", set=lossy, seed=2)
    assert a["seed"] == 1 and b["seed"] == 2
    assert a != b


def test_errors_carry_the_command_line_message():
    with pytest.raises(triage.TriageError) as e:
        triage.run("cats-fifo", set={"topology.bottleneck.rate": "fast"})
    msg = str(e.value)
    assert "topology.bottleneck.rate: expected a rate like" in msg
    assert "(with --set topology.bottleneck.rate=fast)" not in msg  # no CLI flags in Python
    with pytest.raises(triage.TriageError, match="no such file"):
        triage.run(Path("/nonexistent.toml"))
    with pytest.raises(triage.TriageError, match="no built-in scenario"):
        triage.run("no-such-scenario")
    with pytest.raises(triage.TriageError, match="flows has 1 entry, so there is no"):
        triage.run("cats-fifo", set=["flows[3].name=x"])
    with pytest.raises(triage.TriageError, match="missing `scenario`"):
        triage.sweep({"seeds": [1]})


PLAN = {
    "scenario": str(REPO / "scenarios/cats-fifo.toml"),
    "seeds": [1, 2],
    "metrics": ["message.*.completed_ms", "flow.*.fct_ms"],
    "grid": {
        "topology.bottleneck.rate": ["2Mbps", "3Mbps"],
        "topology.bottleneck.loss": ['{ kind = "none" }', '{ kind = "bernoulli", loss_prob = 0.03 }'],
    },
}


def test_sweep_is_tidy_and_equals_run():
    df = triage.sweep(PLAN)
    assert list(df.columns) == [
        "scenario", "topology.bottleneck.rate", "topology.bottleneck.loss",
        "seed", "variant", "version", "status", "metric", "value", "error",
    ]
    assert df["seed"].dtype == "int64" and df["value"].dtype == "float64"
    assert str(df["metric"].dtype) == "string"
    assert len(df) == 4 * 2 * 6
    assert (df["status"] == "ok").all()
    for (rate, loss, seed), g in df.groupby(["topology.bottleneck.rate", "topology.bottleneck.loss", "seed"]):
        r = triage.run(PLAN["scenario"], seed=int(seed), set=[f"topology.bottleneck.rate={rate}", f"topology.bottleneck.loss={loss}"])
        rep = r["variants"][0]["report"]
        want = {f"message.{m['name']}.completed_ms": m["completed_ms"] for m in rep["messages"]}
        want["flow.page.fct_ms"] = rep["flows"][0]["fct_ms"]
        assert dict(zip(g["metric"], g["value"])) == want
    # The CSV round trip keeps dtypes.
    back = pd.read_csv(pd.io.common.StringIO(df.to_csv(index=False)))
    assert back["value"].dtype == "float64" and back["seed"].dtype == "int64"


def test_built_in_lists():
    names = [n for n, _ in triage.scenarios()]
    assert "cats-fifo" in names and "eecn-dumbbell" in names
    assert "cats" in triage.pages() and "youtube" in triage.pages()
    p = triage.profiles()
    assert p.loc[p["name"] == "wpt-4g", "queue_packets"].item() == 254


def test_ray_executor_gives_the_local_rows():
    """Must run under CI (CI=true): there, a missing Ray is a failure, not a skip."""
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("Ray is not installed (pip install 'ray>=2.9')")
    plan = dict(PLAN, seeds=list(range(1, 26)), metrics=["flow.*.fct_ms", "message.P0.completed_ms"])
    plan["grid"] = dict(PLAN["grid"], **{"transport.scheduler": ["fifo", "cats"]})
    local = triage.sweep(plan)
    assert local["seed"].nunique() == 25 and len(local) == 200 * 2  # 200 runs x 2 metrics
    remote = triage.sweep(plan, executor="ray", jobs=2, batch_seconds=0.05)
    pd.testing.assert_frame_equal(local, remote)
    assert local.to_csv(index=False) == remote.to_csv(index=False)
