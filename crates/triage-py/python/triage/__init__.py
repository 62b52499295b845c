"""triage from Python: run scenarios and sweeps of the triage packet-level simulator.

    import triage
    report = triage.run("cats")                        # a built-in scenario, a file, TOML text or a dict
    report = triage.run("scenarios/cats-fifo.toml", set={"topology.bottleneck.rate": "5Mbps"}, seed=3)
    df = triage.sweep("plan.toml")                    # a pandas DataFrame, one row per run x metric
    df = triage.sweep(plan, executor="ray")           # the same rows, computed as Ray tasks

`run` returns what `triage run --json` prints; `sweep` returns the rows `triage sweep` writes
to runs.csv. Errors raise `TriageError` with the command line's message.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from . import _native

__all__ = ["TriageError", "run", "sweep", "scenarios", "pages", "profiles", "__version__"]

__version__ = _native.version()

# Columns of a sweep's rows after `scenario` and the plan's parameters, and their dtypes.
_TAIL = ["seed", "variant", "version", "status", "metric", "value", "error"]


class TriageError(ValueError):
    """A scenario, plan or run the simulator refused; the message is the command line's."""


def _call(f, *args, **kwargs):
    try:
        return f(*args, **kwargs)
    except ValueError as e:  # the binding raises ValueError with the CLI's message
        raise TriageError(str(e)) from None


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and v != v:
            raise TriageError("NaN has no place in a scenario")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(v, os.PathLike):
        return json.dumps(os.fspath(v))
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if v is None:
        raise TriageError("None has no TOML form; leave the field out for its default")
    raise TriageError(f"{type(v).__name__} has no TOML form")


def _toml(d: Mapping[str, Any]) -> str:
    """A dict as a TOML document, in the dict's order (tables and lists of tables after the
    plain keys, as TOML requires)."""
    plain = [(k, v) for k, v in d.items() if not _is_table(v) and not _is_tables(v)]
    lines = [f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in plain]
    for k, v in d.items():
        if _is_table(v):
            lines.append(f"[{json.dumps(str(k))}]")
            lines.extend(f"{json.dumps(str(kk))} = {_toml_value(vv)}" for kk, vv in v.items())
        elif _is_tables(v):
            for t in v:
                lines.append(f"[[{json.dumps(str(k))}]]")
                lines.extend(f"{json.dumps(str(kk))} = {_toml_value(vv)}" for kk, vv in t.items())
    return "\n".join(lines) + "\n"


def _is_table(v: Any) -> bool:
    return isinstance(v, Mapping)


def _is_tables(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(x, Mapping) for x in v)


def _looks_like_toml(text: str) -> bool:
    return "\n" in text or "=" in text


def _scenario_source(scenario: Union[str, os.PathLike, Mapping[str, Any]]):
    """(TOML text, name for messages, folder for relative paths)."""
    if isinstance(scenario, Mapping):
        return _toml(scenario), "scenario (dict)", None
    if isinstance(scenario, os.PathLike) or (isinstance(scenario, str) and not _looks_like_toml(scenario)):
        path = Path(scenario)
        if path.is_file():
            text = path.read_text()
            if path.suffix.lower() == ".json":
                text = _call(_native.json_to_toml, text)
            return text, str(path), str(path.parent)
        if isinstance(scenario, os.PathLike):
            raise TriageError(f"{path}: no such file")
        text, name, folder = _call(_native.load_base, str(scenario), ".")
        return text, name, folder
    return scenario, "scenario (text)", None


def _sets(set: Union[None, Mapping[str, Any], Iterable[str]]) -> list:
    if set is None:
        return []
    if isinstance(set, Mapping):
        out = []
        for k, v in set.items():
            if isinstance(v, bool):
                v = "true" if v else "false"
            elif isinstance(v, (Mapping, list, tuple)):
                v = _toml_value(v)
            out.append(f"{k}={v}")
        return out
    return list(set)


def run(
    scenario: Union[str, os.PathLike, Mapping[str, Any]],
    *,
    seed: Optional[int] = None,
    set: Union[None, Mapping[str, Any], Iterable[str]] = None,
) -> dict:
    """Runs a scenario and returns what `triage run --json` prints.

    `scenario` is a built-in name (`"cats"`), a file (TOML, or JSON with the same fields), TOML
    text, or a dict with the scenario's fields. `set` overrides fields by path as `--set`
    does (`{"topology.bottleneck.rate": "5Mbps"}` or `["transport.cc=cubic"]`); `seed`
    replaces the scenario's seed.
    """
    text, name, folder = _scenario_source(scenario)
    doc, _complete = _call(_native.run_text, text, name, folder, _sets(set), seed)
    return json.loads(doc)


def _plan_source(plan: Union[str, os.PathLike, Mapping[str, Any]]):
    """(TOML text, file name for messages, folder the plan's scenarios are relative to)."""
    if isinstance(plan, Mapping):
        return _toml(plan), "plan (dict)", "."
    if isinstance(plan, os.PathLike) or (isinstance(plan, str) and not _looks_like_toml(plan)):
        path = Path(plan)
        if not path.is_file():
            raise TriageError(f"{path}: no such file")
        return path.read_text(), str(path), str(path.parent)
    return plan, "plan (text)", "."


def _frame(lines: Sequence[str], parameters: Sequence[str]):
    import pandas as pd

    columns = ["scenario", *parameters, *_TAIL]
    rows = [json.loads(line) for line in lines if line]
    df = pd.DataFrame(rows, columns=columns)
    df["seed"] = df["seed"].astype("int64")
    df["value"] = pd.to_numeric(df["value"], errors="coerce").astype("float64")
    for c in columns:
        if c not in ("seed", "value"):
            df[c] = df[c].astype("string")
    return df


def sweep(
    plan: Union[str, os.PathLike, Mapping[str, Any]],
    executor: Optional[str] = None,
    *,
    address: Optional[str] = None,
    jobs: Optional[int] = None,
    batch_seconds: float = 1.0,
):
    """Runs a sweep plan (see `triage sweep --help`) and returns its tidy rows as a DataFrame.

    Columns: `scenario`, one per overridden field path (the value as the plan writes it),
    `seed`, `variant`, `version`, `status`, `metric`, `value`, `error`; rows in plan order.

    `executor=None` runs on this machine's cores (threads inside the simulator).
    `executor="ray"` runs batches of runs as Ray tasks, each batch about `batch_seconds` of
    work (timed on the first run), on a local Ray instance or the cluster at `address`
    (`"auto"` or `"ray://host:10001"`); the rows are identical to the local executor's.
    On a cluster, scenario and page files must exist at the same paths on every node.
    """
    text, file, folder = _plan_source(plan)
    parameters, points, seeds = _call(_native.plan_points, text, file)
    jobs = jobs or os.cpu_count() or 1
    if executor is None or executor == "local":
        out = _call(_native.sweep_rows, text, file, folder, None, jobs)
        return _frame(out.splitlines(), parameters)
    if executor != "ray":
        raise TriageError(f"executor {executor!r}: expected None (this machine) or \"ray\"")
    try:
        import ray
    except ImportError:
        raise TriageError("executor \"ray\": Ray is not installed (pip install 'ray>=2.9')") from None

    work = [(p[0], s) for p in points for s in seeds]
    if not work:
        return _frame([], parameters)
    # Size batches to about `batch_seconds` of work: a task per millisecond-long run would be
    # all overhead.
    t0 = time.perf_counter()
    first = _call(_native.sweep_rows, text, file, folder, [work[0]], 1)
    per_run = max(time.perf_counter() - t0, 1e-4)
    size = max(1, int(batch_seconds / per_run))
    batches = [work[i : i + size] for i in range(1, len(work), size)]

    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address)
        else:
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
        started = True
    try:
        task = ray.remote(_ray_batch)
        refs = [task.remote(text, file, folder, b) for b in batches]
        parts = ray.get(refs)
    finally:
        if started:
            ray.shutdown()
    lines = first.splitlines()
    for p in parts:
        lines.extend(p.splitlines())
    return _frame(lines, parameters)


def _ray_batch(text: str, file: str, folder: str, batch) -> str:
    from triage import _native as native

    return native.sweep_rows(text, file, folder, [tuple(x) for x in batch], 1)


def scenarios() -> list:
    """(name, description) of every built-in scenario."""
    return list(_native.scenarios())


def pages() -> list:
    """Names of the built-in pages (`page = "builtin:NAME"` in a scenario)."""
    return list(_native.pages())


def profiles():
    """The network profiles of `[topology] kind = "profile"` as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(
        _native.profiles(),
        columns=["name", "downlink_bps", "uplink_bps", "rtt_ms", "queue_packets", "source"],
    )
