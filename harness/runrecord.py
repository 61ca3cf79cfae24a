"""run.json: what a run measures (its plan) and every invocation that wrote into it (history).

Naming a run_id again resumes that run. A resume with another sweep, provider set or protocol
used to mix two experiments under one name while run.json was rewritten to describe only the
last (a `providers=[...]` subset even rewrote `points` to a smaller number). Now the first
invocation records the plan; a resume whose plan differs is refused in one line unless
allow_mixed=true, and so is one on another GPU model than the run's (its rows' device_name;
the plan records it too: another card of the model may resume) or on other kernel sources than
the run's rows were measured with (their kernel_source_hash; the plan records it too): a run cut at a lent machine's limit
and resumed after a tuner change (session 60: the Gluon GEMM's capped re-time landed between
the calls of gemm_llama-s60) would time its last points with other kernels or choices than its
first, under one name. Each invocation appends an entry to `history`, and the top-level fields
that describe the run as a whole (run_id, sweep, protocol, plan) keep their first values while
`points` never shrinks.

Shards write run-shard-<i>.json (the `devices=` parent and a single process write run.json); a
resume is compared with every record in the folder, so workers resuming under their parent,
which planned the same sweep, pass.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness import store
from harness.plan import RunPlan
from harness.provenance import git_state, now_iso

# Top-level fields that describe the run as a whole: the first invocation's values stay.
RUN_KEYS = ("run_id", "sweep", "protocol", "plan")
WAYS_OUT = (
    "allowed: the run's values, another run_id, or allow_mixed=true (run.json keeps a history)"
)


class Shown(str):
    """A value shown as it is in a refusal (not quoted)."""

    def __repr__(self) -> str:
        return str(self)


def _records(run_path: Path) -> list[dict]:
    """run.json and run-shard-*.json of the run (those that parse)."""
    out = []
    for path in sorted(run_path.glob("run*.json")):
        try:
            out.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue  # written atomically: only a hand-edited file can be torn
    return out


def differences(old: dict, new: dict) -> list[tuple[str, object, object]]:
    """(key, the run's value, this invocation's value) for each part of the plan that differs.
    A record written before plans existed is compared by its sweep name only."""
    plan = old.get("plan")
    if plan is None:
        name = old.get("sweep")
        return [] if name in (None, new["sweep"]) else [("sweep", name, new["sweep"])]
    diffs: list[tuple[str, object, object]] = []
    if plan["sweep"] != new["sweep"]:
        diffs.append(("sweep", plan["sweep"], new["sweep"]))
    if plan["providers"] != new["providers"]:
        diffs.append(("providers", plan["providers"], new["providers"]))
    elif plan["points_digest"] != new["points_digest"] and not diffs:
        diffs.append(
            (
                "sweep.groups",
                Shown(f"a set of {plan['points']} points"),
                Shown(f"another set of {new['points']}"),
            )
        )
    for key in sorted(set(plan["protocol"]) | set(new["protocol"])):
        was, now = plan["protocol"].get(key), new["protocol"].get(key)
        if was != now:
            diffs.append((f"protocol.{key}", was, now))
    # the kernels as planned, not only as the rows record them: a run killed in its prebuild or
    # tune pass has no row yet, and its resume on another kernels/ would pass unnoticed
    was_k, now_k = plan.get("kernel_source_hash"), new.get("kernel_source_hash")
    if was_k and now_k and was_k != now_k:
        diffs.append(
            ("kernel_source_hash", Shown(f"kernels/ at {was_k}"), Shown(f"kernels/ at {now_k}"))
        )
    # the GPU model: a lent call that names one kind may come on another (session 93's call for
    # an H200 ran on an H100), and its resume would add that model's rows to the run under new
    # point keys (they name the model), timing every point again
    was_d, now_d = plan.get("device"), new.get("device")
    if was_d and now_d and was_d != now_d:
        diffs.append(("device", Shown(was_d), Shown(now_d)))
    return diffs


def _row_devices(run_path: Path) -> set[str]:
    """The device models (device_identity: vendor|name) the run's rows were measured on: what
    a run planned before its plan recorded the model was measured on."""
    if not run_path.is_dir():
        return set()
    table = store.read_table(run_path, columns=["device_vendor", "device_name"])
    cols = table.to_pydict()
    pairs = zip(cols["device_vendor"], cols["device_name"], strict=True)
    return {f"{v}|{n}" for v, n in pairs if v and n}  # AOT inspect rows name no vendor


def _row_kernels(run_path: Path) -> set[str]:
    """The kernel_source_hash values the run's rows carry (none for a fresh run): what the
    kernels were where it counts, in runs planned before the plan recorded the hash too, and in
    rows a resume added under allow_mixed."""
    if not run_path.is_dir():
        return set()
    table = store.read_table(run_path, columns=["kernel_source_hash"])
    return {v for v in table.column("kernel_source_hash").to_pylist() if v}


def check_resume(run_path: Path, plan: dict, allow_mixed: bool) -> list[str]:
    """The keys in which this invocation's plan differs from the run's records and rows (empty
    for a fresh run or a faithful resume); raises ValueError in one line unless allow_mixed."""
    seen: dict[str, tuple] = {}
    for record in _records(run_path):
        for key, was, now in differences(record, plan):
            seen.setdefault(key, (was, now))
    now = plan.get("kernel_source_hash")
    if now and (other := sorted(_row_kernels(run_path) - {now})):
        was = Shown(f"kernels/ at {', '.join(other)}")
        seen.setdefault("kernel_source_hash", (was, Shown(f"kernels/ at {now}")))
    now_d = plan.get("device")
    if now_d and (other_d := sorted(_row_devices(run_path) - {now_d})):
        seen.setdefault("device", (Shown(", ".join(other_d)), Shown(now_d)))
    if seen and not allow_mixed:
        key, (was, now) = next(iter(seen.items()))
        also = f" (also differs: {', '.join(list(seen)[1:])})" if len(seen) > 1 else ""
        raise ValueError(
            f"{key}: run '{run_path.name}' was measured with {was!r}, this invocation has "
            f"{now!r}{also}; {WAYS_OUT}"
        )
    return list(seen)


def begin(
    plan: RunPlan,
    meta: dict,
    overrides: list[str] | None,
    meta_name: str = "run.json",
    append: bool = True,
) -> None:
    """Check this invocation against the run (check_resume), then write config.yaml and the
    record `meta_name`: the run's fields kept, `meta` for the rest, this invocation appended to
    its history with measured_now null until `finish` (append=False: a supervised child whose
    parent keeps the entry)."""
    run_path, record_plan = plan.run_path, plan.record
    differs = check_resume(run_path, record_plan, plan.allow_mixed)
    path = run_path / meta_name
    old = json.loads(path.read_text()) if path.exists() else {}
    record = {**meta, **{k: old[k] for k in RUN_KEYS if k in old}}
    record.setdefault("plan", record_plan)
    record["points"] = max(old.get("points", 0), meta.get("points", 0))
    if differs:
        record["mixed"] = sorted(set(old.get("mixed", [])) | set(differs))
    sha, dirty = git_state()
    entry = {
        "time": now_iso(),
        "overrides": list(overrides or []),
        "sweep": record_plan["sweep"],
        "providers": record_plan["providers"],
        "protocol": record_plan["protocol"],
        "git_sha": sha,
        "git_dirty": dirty,
        "points_planned": record_plan["points"],
        "shard": [plan.shard_index, plan.shard_count],
        "differs": differs,
        "measured_now": None,  # null: the invocation did not finish (killed, interrupted)
    }
    history = old.get("history", [])
    if append or not history:
        history = [*history, entry]
    elif differs:  # the parent's entry: what this child found different is part of it
        history[-1]["differs"] = sorted(set(history[-1].get("differs", [])) | set(differs))
    record["history"] = history
    store.write_run_meta(run_path, plan.config_yaml, record, meta_name)


def finish(
    run_path: Path,
    measured: int,
    statuses: dict,
    meta_name: str = "run.json",
    entry: dict | None = None,
    counts: bool = True,
    **extra,
) -> None:
    """Complete this invocation's history entry (measured now, their statuses, and `entry`'s
    fields: the tune pass's record) and set `extra` top-level fields (the `devices=` parent's
    wall time and workers). counts=False: a supervised child adds `entry` alone; its parent,
    which also wrote the rows of any crash, counts the invocation's points."""
    path = run_path / meta_name
    record = json.loads(path.read_text())
    record.update(extra, updated=now_iso())
    last = record["history"][-1]
    if counts:
        last.update(
            measured_now=measured, statuses={k: int(v) for k, v in statuses.items()}, done=now_iso()
        )
    last.update(entry or {})
    store.write_text(path, json.dumps(record, indent=2, sort_keys=True, default=str))
