"""The project's goals (configs/goals.yaml) checked against measured rows: per goal and GPU, the
run that decides it, its geomean and worst own / vendor ratio, and whether the bar is met.

A goal names an own provider, the vendor rows it is held against (the fastest ok row among them
at each point, as everywhere in the report: harness.report.reference) and the points it covers
(`where`: column values; `at_least`: column minimums). Ratios are vendor time over own time at
one point of one run, between rows timed on one card (`device_uuid`: a run resumed on a second
machine leaves the points it split without a reference) under one protocol, never across runs.
Every row must have been timed under the default protocol (CUDA events, a cold L2) unless the
goal's `where` says otherwise.

A run *covers* a goal on a GPU when it holds an own row and an ok reference row at `points`
points of the selection or more (every point it has, where the goal gives no count). The goal's
verdict on that GPU is the latest covering run's (by its last row's timestamp): not the best of
several, so a re-run cannot be picked for its luck. `covering_runs` and `range` say how many runs covered
the goal and the spread of their geomeans. A run whose own kernel has a row that is not ok
(`wrong`, `error`) at any of the goal's points fails the goal whatever its speed: a fast wrong
kernel is a failure. Where no run covers the goal, the run with the most points is shown as `partial`.

A goal's `ceiling` asks own GB/s (geomean over the covered points) for that share of the GPU's
measured HBM read ceiling: the run's own card's where that card ran a ceilings run (its latest),
else the report's (harness.report.peaks), the latest `ceilings` run's figure among the paths (not
raised to a faster row since session 90: H200 4,628 GB/s, where a paged decode row read 4,674).
`ceiling_run` names that run and whether it measured the deciding run's card or another of the
model; on another card it adds the share's range over every card's ceiling (H100s read 3,104-3,195
GB/s, so a share moves by up to 3% with the card). A GPU without a measured ceiling fails such a
goal and says so.
Beside it, `cold_read_of_ceiling`: one cold read of each point's own bytes (a probes_read_once
run among the paths) as a share of the same ceiling, the most a kernel that reads them once
could reach; below the bar, the bar is out of reach at those points. `own_only_since`: a later
run that timed the own kernel at every point without the vendors (their wheels not carried to
the card) has no ratio and decides nothing, but its ceiling share is the own kernel's latest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from harness.measure.stats import geomean
from harness.report import read_once
from harness.report.ceilings import card_hbm_reads, row_ceilings
from harness.report.data import fmt, is_smoke, latest, with_device
from harness.report.gap_reasons import read_once_at
from harness.report.peaks import device_peaks, measured_hbm_read
from harness.report.reference import fastest
from harness.report.tables import Table

# the repository's configs/ (not harness.provenance.REPO_ROOT: that module imports torch,
# and the report must not)
GOALS_FILE = Path(__file__).resolve().parents[2] / "configs" / "goals.yaml"
DEFAULT_WHERE = {"timer": "cuda-events", "l2": "cold"}  # the default protocol's timer and L2
GOAL_KEYS = {
    *("id", "goal", "own", "reference", "where", "at_least"),
    *("points", "geomean", "min", "ceiling"),
}
VERDICT_COLUMNS = [
    "goal",
    "device",
    "run",
    "date",
    "commit",
    "points",
    "geomean",
    "min",
    "below_min",
    "not_ok",
    "of_ceiling",
    "cold_read_of_ceiling",
    "ceiling_run",
    "own_only_since",
    "room",
    "bar",
    "verdict",
    "short_of",
    "covering_runs",
    "range",
]


@dataclass(frozen=True)
class Goal:
    id: str
    goal: str  # the bar in words, as the issue states it
    own: str  # the own provider held to the bar
    reference: tuple[str, ...] | None  # vendor providers; None: every vendor row
    where: dict[str, list[Any]] = field(default_factory=dict)
    at_least: dict[str, float] = field(default_factory=dict)
    points: int | None = None  # points a run must cover; None: what it has
    geomean: float | None = None  # the geomean ratio the bar asks for
    min: float | None = None  # no point's ratio below this
    # own GB/s over the GPU's measured HBM read ceiling, geomean over the points (decode)
    ceiling: float | None = None

    def bar(self) -> str:
        parts = [f">= {self.geomean:.2f}x" if self.geomean is not None else ""]
        if self.min is not None:
            parts.append(f"none < {self.min:.2f}x")
        if self.ceiling is not None:
            parts.append(f">= {self.ceiling:.2f} of the HBM read ceiling")
        if self.points is not None:
            parts.append(f"{self.points} points")
        return ", ".join(p for p in parts if p)


def _bad(where: str, what: str, allowed: str) -> ValueError:
    return ValueError(f"{where}: {what}; allowed: {allowed}")


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, list | tuple) else [v]


def parse_goals(data: Any, source: str = "goals") -> list[Goal]:
    """Goals from the YAML's list (each a mapping of GOAL_KEYS); one ValueError line for a bad
    entry, naming it."""
    if not isinstance(data, list) or not data:
        raise _bad(source, "not a list of goals", "a YAML list of mappings")
    goals, seen = [], set()
    for i, entry in enumerate(data):
        where = f"{source}[{i}]"
        if not isinstance(entry, dict):
            raise _bad(where, f"'{entry}'", "a mapping")
        unknown = set(entry) - GOAL_KEYS
        if unknown:
            raise _bad(where, f"unknown keys {sorted(unknown)}", ", ".join(sorted(GOAL_KEYS)))
        for key in ("id", "goal", "own"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise _bad(f"{where}.{key}", f"'{entry.get(key)}'", "a non-empty string")
        if entry["id"] in seen:
            raise _bad(f"{where}.id", f"'{entry['id']}' twice", "one entry per id")
        seen.add(entry["id"])
        for key in ("geomean", "min", "ceiling"):
            v = entry.get(key)
            if v is not None and not (isinstance(v, int | float) and v > 0):
                raise _bad(f"{where}.{key}", f"'{v}'", "a ratio > 0")
        if all(entry.get(k) is None for k in ("geomean", "min", "ceiling")):
            raise _bad(where, "no bar", "geomean, min, ceiling or several")
        points = entry.get("points")
        if points is not None and not (isinstance(points, int) and points >= 1):
            raise _bad(f"{where}.points", f"'{points}'", "an integer >= 1")
        at_least = entry.get("at_least") or {}
        if not isinstance(at_least, dict) or not all(
            isinstance(v, int | float) for v in at_least.values()
        ):
            raise _bad(f"{where}.at_least", f"'{at_least}'", "a mapping of column: minimum")
        ref = entry.get("reference")
        goals.append(
            Goal(
                id=entry["id"],
                goal=entry["goal"],
                own=entry["own"],
                reference=tuple(_as_list(ref)) if ref is not None else None,
                where={
                    k: _as_list(v)
                    for k, v in {**DEFAULT_WHERE, **(entry.get("where") or {})}.items()
                },
                at_least=dict(at_least),
                points=points,
                geomean=entry.get("geomean"),
                min=entry.get("min"),
                ceiling=entry.get("ceiling"),
            )
        )
    return goals


def load_goals(path: str | Path = GOALS_FILE) -> list[Goal]:
    path = Path(path)
    if not path.is_file():
        raise _bad("goals", f"'{path}' is not a file", "a YAML file of goals")
    return parse_goals(yaml.safe_load(path.read_text()), source=path.name)


def _matches(df: pd.DataFrame, column: str, values: list[Any]) -> pd.Series:
    """Rows whose `column` is one of `values`: booleans as booleans, numbers as numbers (an int
    column read as float still matches), anything else by its text."""
    if column not in df:
        raise _bad("where", f"column '{column}' is not in the rows", "a row column")
    col = df[column]
    if all(isinstance(v, bool) for v in values):
        return col.map(lambda x: isinstance(x, bool | np.bool_) and bool(x) in values).astype(bool)
    if all(isinstance(v, int | float) for v in values):
        return pd.to_numeric(col, errors="coerce").isin([float(v) for v in values])
    return col.astype(str).isin([str(v) for v in values])


def selected(df: pd.DataFrame, goal: Goal) -> pd.DataFrame:
    """The rows a goal speaks about: its own provider's and its reference's, at its points.
    `df` is without smoke rows (verdicts takes them out once for every goal)."""
    keep = pd.Series(True, index=df.index)
    for column, values in goal.where.items():
        keep &= _matches(df, column, values)
    for column, low in goal.at_least.items():
        if column not in df:
            raise _bad("at_least", f"column '{column}' is not in the rows", "a row column")
        keep &= pd.to_numeric(df[column], errors="coerce") >= low
    rows = df[keep]
    vendors = rows["family"] == "vendor"
    if goal.reference is not None:
        vendors &= rows["provider"].isin(goal.reference)
    return rows[vendors | (rows["provider"] == goal.own)]


# A point is its problem under one protocol (harness.report.data.IDENTITY less the provider):
# two rows of one problem timed warm and cold, or with two fills, never make one ratio.
POINT = ("problem", "timer", "l2", "fill", "seed")


def point_ratios(
    rows: pd.DataFrame, goal: Goal, curves: dict[str, pd.Series] | None = None
) -> pd.DataFrame:
    """One line per (device, run, point) where the goal's own provider has a row: its status,
    the reference and vendor time / own time. The reference is the fastest ok vendor row of the
    same run timed on the same GPU (device_uuid) as the own row: a run resumed on another
    machine of the same model leaves the points it split without a reference. `curves`
    (harness.report.read_once.curves_by_device) give each point's one-cold-read GB/s."""
    keys = ["device", "run_id", *POINT]
    rows = latest(with_device(rows), [*keys, "provider"])
    rows = rows[
        [*keys, "device_name", "device_uuid", "provider", "family", "status"]
        + ["latency_ms_median", "gbps", "min_bytes", "git_sha", "timestamp"]
    ]  # to_dict over ~150 columns is the cost
    lines = []
    for key, g in rows.groupby(keys, sort=True, dropna=False):
        own = g[g["provider"] == goal.own]
        if own.empty:
            continue
        r = own.iloc[0]
        same_gpu = g[g["device_uuid"].astype(str) == str(r["device_uuid"])]
        ref = fastest(same_gpu.to_dict("records"))
        ok = r["status"] == "ok" and pd.notna(r["latency_ms_median"])
        lines.append(
            {
                "device": key[0],
                "device_name": r["device_name"],
                "device_uuid": str(r["device_uuid"]),
                "run": key[1],
                "problem": key[2],
                "status": r["status"],
                "gbps": r["gbps"] if ok else math.nan,
                "read_once_gbps": read_once_at(dict(r), curves or {}) or math.nan,
                "reference": ref["provider"] if ref else None,
                "ratio": ref["latency_ms_median"] / r["latency_ms_median"]
                if ref and ok
                else math.nan,
                "when": str(g["timestamp"].max()),
                "git_sha": str(r["git_sha"] or "")[:7],
            }
        )
    return pd.DataFrame(
        lines,
        columns=[
            *("device", "device_name", "device_uuid", "run", "problem", "status", "gbps"),
            *("read_once_gbps", "reference", "ratio", "when", "git_sha"),
        ],
    )


def _share(values: pd.Series, ceilings: pd.Series) -> float:
    """Geomean of values over each row's ceiling (same index); NaN without values or a ceiling."""
    values = values.dropna()
    mine = ceilings[values.index]
    if not len(values) or mine.isna().any():
        return math.nan
    return geomean((values / mine).tolist())


def run_lines(
    ratios: pd.DataFrame,
    goal: Goal,
    hbm_read: dict[str, float] | None = None,
    ceiling_cards: dict[str, tuple[str, str]] | None = None,
    card_reads: dict[str, dict[str, tuple[str, float]]] | None = None,
) -> pd.DataFrame:
    """One line per (device, run): points with a reference, geomean, min, points below the
    bar's min, own rows not ok, the geomean share of the GPU's measured HBM read ceiling
    (`hbm_read`, GB/s by device name; NaN without one) and which ceilings run gave it, on
    which card (`ceiling_cards`: ceiling_card's), whether the run covers the goal and whether
    it meets it. `card_reads` (card_hbm_reads'): a run whose card measured its own ceiling is
    read against that one; a run on another card gets the range of its share over every card's."""
    lines = []
    for (device, run), g in ratios.groupby(["device", "run"], sort=True):
        model = str(g["device_name"].iloc[0])
        cards = (card_reads or {}).get(model, {})
        run_cards = set(g["device_uuid"].dropna())
        mine = sorted(u for u in run_cards if u in cards)
        has_ref = g[g["reference"].notna()]
        ok = has_ref["ratio"].dropna()
        not_ok = int((g["status"] != "ok").sum())  # with a reference or not: a wrong row fails
        points = len(has_ref)
        gm = geomean(ok.tolist()) if len(ok) else math.nan
        low = float(ok.min()) if len(ok) else math.nan
        below = int((ok < goal.min).sum()) if goal.min is not None else 0
        ceiling = (hbm_read or {}).get(model)
        # each row against its own card's ceiling where that card read one (cards of one model
        # differ by up to 3%), else the model's latest
        per_row = row_ceilings(g["device_uuid"], {u: c for u, (_, c) in cards.items()}, ceiling)
        gbps = has_ref["gbps"].dropna()
        of_ceiling = _share(gbps, per_row)
        # the share over every ok own row, a vendor beside it or not: an own-only run (no vendor
        # wheels on the card) measures this half of the bar and no ratio (own_only_since)
        own_gbps = g["gbps"].dropna()
        own_of_ceiling = _share(own_gbps, per_row)
        # one cold read of the same bytes (probes_read_once): what a kernel reading them once
        # could reach, so whether the ceiling bar is reachable at these points at all
        cold_of_ceiling = _share(has_ref.loc[has_ref["gbps"].notna(), "read_once_gbps"], per_row)
        ceiling_run = ""
        if goal.ceiling is not None and ceiling and mine:
            sources = ", ".join(sorted({cards[u][0] for u in mine}))
            if len(mine) == len(run_cards):
                ceiling_run = f"{sources}, the run's card" + ("s" if len(mine) > 1 else "")
            else:
                latest = (ceiling_cards or {}).get(model, ("", ""))[0]
                ceiling_run = (
                    f"{sources}, {len(mine)} of the run's {len(run_cards)} cards; "
                    f"the rest {latest}, another card"
                )
        elif goal.ceiling is not None and ceiling:
            source, card = (ceiling_cards or {}).get(model, ("", ""))
            if not card or card == "None":  # a ceilings row without a UUID
                where = "card unknown"
            else:
                where = "the run's card" if card in set(g["device_uuid"]) else "another card"
            ceiling_run = f"{source}, {where}" if source else ""
            shares = [geomean((gbps / c).tolist()) for _, c in cards.values()] if len(gbps) else []
            if ceiling_run and len(shares) > 1:  # how far the share moves with the card's read
                ceiling_run += f" ({min(shares):.3f}-{max(shares):.3f} over {len(shares)} cards)"
        met = (
            not_ok == 0
            and len(ok) > 0
            and (goal.geomean is None or gm >= goal.geomean)
            and (goal.min is None or low >= goal.min)
            and (goal.ceiling is None or of_ceiling >= goal.ceiling)  # NaN: no ceiling, not met
        )
        lines.append(
            {
                "goal": goal.id,
                "device": device,
                "run": run,
                "points": points,
                "geomean": gm,
                "min": low,
                "below_min": below,
                "not_ok": not_ok,
                "of_ceiling": of_ceiling if goal.ceiling is not None else math.nan,
                "cold_read_of_ceiling": cold_of_ceiling if goal.ceiling is not None else math.nan,
                "own_points": len(own_gbps),
                "own_of_ceiling": own_of_ceiling if goal.ceiling is not None else math.nan,
                "ceiling_run": ceiling_run,
                "covers": goal.points is None or points >= goal.points,
                "met": met,
                "when": g["when"].max(),
                "date": str(g["when"].max())[:10],  # the run's last row: how old the verdict is
                # the own rows' commits: which code the verdict is about (two: a resumed run)
                "commit": "+".join(sorted({c for c in g["git_sha"] if c})),
            }
        )
    return pd.DataFrame(lines)


def own_only_since(lines: pd.DataFrame, shown: dict, goal: Goal) -> str:
    """For a ceiling goal: the latest run after the shown one that timed the own kernel at all
    of the goal's points with no vendor row at any (no ratio, so it decides nothing) and no own
    row wrong, as 'share (run)'; '' where none did. The verdict stays with the last run that had
    the vendors, which may be older than the own kernel's latest change; this says how far the
    kernel has moved the share since."""
    if goal.ceiling is None:
        return ""
    later = lines[
        (lines["when"] > shown["when"])
        & (lines["points"] == 0)  # no point with a vendor row: an own-only run
        & (lines["not_ok"] == 0)
        & (lines["own_points"] >= (goal.points or 1))
        & lines["own_of_ceiling"].notna()
    ]
    if later.empty:
        return ""
    last = later.sort_values("when").iloc[-1]
    return f"{last['own_of_ceiling']:.3f} ({last['run']})"


def short_of(line: dict, goal: Goal) -> str:
    """What a covering run that misses its bar still lacks, in the bar's terms: the factor its
    geomean must gain ('geomean x1.022'), the points under the min, the factor its share of the
    HBM read ceiling must gain; '' where nothing measurable is missing."""
    parts = []
    if goal.geomean is not None and line["geomean"] < goal.geomean:
        parts.append(f"geomean x{goal.geomean / line['geomean']:.3f}")
    if goal.min is not None and line["below_min"]:
        parts.append(f"{line['below_min']} < {goal.min:.2f}x")
    of = line.get("of_ceiling", math.nan)
    if goal.ceiling is not None and of == of and of < goal.ceiling:
        parts.append(f"ceiling share x{goal.ceiling / of:.3f}")
    return "; ".join(parts)


def room(rows: pd.DataFrame, roofs: pd.DataFrame, goal: Goal, device: str, run: str) -> float:
    """The geomean speedup over the goal's reference that a kernel at the roof at every point of
    the run would show (`harness gaps`' roof_speedup: the measured peak, or one cold read of the
    point's bytes where memory-bound): the most any own kernel could reach, so whether the bar is
    within reach at all. `rows`: the goal's selected rows; `roofs`: the ceiling rows and one-pass
    reads, the run's own card's where it measured them (own_card_roofs). NaN without a roof or a
    regime (a latency goal)."""
    from harness.report.gaps import gap_frame, roof_speedup  # gaps imports much; goals little

    mine = with_device(rows)
    mine = mine[(mine["device"] == device) & (mine["run_id"] == run)]
    mine = mine.drop(columns=["samples_ms"], errors="ignore")  # per-row lists: to_dict's cost
    if mine.empty:
        return math.nan
    names = set(mine["device_name"].dropna())
    frame = gap_frame(
        pd.concat([mine, own_card_roofs(roofs[roofs["device_name"].isin(names)], mine)])
    )
    if frame.empty:
        return math.nan
    return roof_speedup(frame[(frame["own"] == goal.own) & (frame["run"] == run)])


def own_card_roofs(roofs: pd.DataFrame, run_rows: pd.DataFrame) -> pd.DataFrame:
    """The roofs a run's room is read against: of each kind (the ceilings, the one-pass cold
    reads) the run's own card's rows where that card measured that kind, else every card's of the
    model (the cold-read roof then the fastest card's read per size). Two cards of one model
    differ: the H100 that ran `gemm_llama-s94h` (moved out in session 99) read 3,118 GB/s in one
    pass where session 93's read 3,209, and with every card's reads that run's room was 1.087x,
    against its own card's 1.075x (`harness gaps` with that card's runs)."""
    if "device_uuid" not in roofs or "device_uuid" not in run_rows:
        return roofs
    cards = set(run_rows["device_uuid"].dropna())
    kinds = [roofs[roofs["op"] == "ceiling"], roofs[roofs["op"] != "ceiling"]]
    mine = [k[k["device_uuid"].isin(cards)] for k in kinds]
    return pd.concat([m if len(m) else k for m, k in zip(mine, kinds, strict=True)])


def _roof_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows `room` reads its roofs from: the ceilings and the one-pass cold reads."""
    return pd.concat([df[df["op"] == "ceiling"], read_once.one_pass_reads(df)])


def ceiling_cards(df: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """{device name: (ceilings run, card)} of the HBM read ceiling the goals use: the latest ok
    hbm_read_gbps ceiling row per GPU model, as harness.report.ceilings.measured_ceilings takes
    it. A share of it is a share of one card's read: another card of the same model read 3,104
    against 3,195 GB/s (H100s, sessions 91 and 93), so the verdict says which card it was."""
    c = df[(df["op"] == "ceiling") & (df["status"] == "ok") & (df["metric"] == "hbm_read_gbps")]
    out: dict[str, tuple[str, str]] = {}
    for r in c.sort_values("timestamp", na_position="first").to_dict("records"):
        out[str(r["device_name"])] = (str(r.get("run_id") or ""), str(r.get("device_uuid") or ""))
    return out


def verdicts(df: pd.DataFrame, goals: list[Goal], every: bool = False) -> pd.DataFrame:
    """Per goal and GPU the deciding run's line (the latest covering run; else the run with the
    most points, `partial`), with how many runs covered it and their geomeans' range. every:
    one line per covering run instead, latest first."""
    out: list[dict[str, Any]] = []
    real = df[~is_smoke(df)]
    hbm_read = measured_hbm_read(device_peaks(real))[0]  # as the report's
    cards = ceiling_cards(real)
    card_reads = card_hbm_reads(real)
    curves = read_once.curves_by_device(real)
    roofs = _roof_rows(real)
    for goal in goals:
        rows = selected(real, goal)
        lines = run_lines(point_ratios(rows, goal, curves), goal, hbm_read, cards, card_reads)
        if lines.empty:
            out.append({"goal": goal.id, "device": "-", "bar": goal.bar(), "verdict": "no rows"})
            continue
        for _, g in lines.groupby("device", sort=True):
            covering = g[g["covers"]].sort_values("when", ascending=False)
            span = (
                f"{covering['geomean'].min():.3f}-{covering['geomean'].max():.3f}"
                if len(covering) > 1
                else ""
            )
            if covering.empty:
                shown = g.sort_values(["points", "when"], ascending=False).head(1)
            else:
                shown = covering if every else covering.head(1)
            for line in shown.to_dict("records"):
                verdict = "met" if line["met"] else "not met"
                if not line["covers"]:
                    verdict = f"partial ({line['points']} of {goal.points} points)"
                elif line["not_ok"]:
                    verdict = f"not met ({line['not_ok']} own rows not ok)"
                elif goal.ceiling is not None and math.isnan(line["of_ceiling"]):
                    verdict = "not met (no measured HBM read ceiling for this GPU)"
                out.append(
                    {
                        **{k: line[k] for k in VERDICT_COLUMNS if k in line},
                        "own_only_since": own_only_since(g, line, goal),
                        "room": room(rows, roofs, goal, line["device"], line["run"]),
                        "bar": goal.bar(),
                        "verdict": verdict,
                        "short_of": short_of(line, goal) if verdict == "not met" else "",
                        "covering_runs": len(covering),
                        "range": span,
                    }
                )
    return pd.DataFrame(out, columns=VERDICT_COLUMNS)


GOALS_CAPTION = (
    "Each goal of configs/goals.yaml (an issue's bar) per GPU: the latest run that covers its "
    "points (not the best; `covering_runs` covered it whole, their geomeans spanning `range`; a `partial` line is the run with the most points where none did), vendor time "
    "over own time within that run, and whether the bar is met; `short_of`: what a run that misses still lacks (the factor its geomean or ceiling share must gain, the points under the min); `ceiling_run`: the ceilings run whose HBM read a ceiling share is of (the run's own card's where it measured one, else the GPU model's latest), whether it measured the deciding run's card and, where not, the share's range over every card's ceiling; `own_only_since`: a later run that timed the own kernel at every point without the vendors, and its ceiling share (no ratio, so no verdict); `room`: the geomean speedup over the reference a kernel at the measured roof at every point of that run would show (`harness gaps`' roof_speedup; the roofs the run's own card measured where it did, else every card's of the model), the most any own kernel could reach. A wrong own row fails the goal. "
    "Goals without a row here are left out. `harness goals <paths>` prints the same."
)


def _three(v: Any) -> str:
    return fmt(v, ".3f")


def as_table(frame: pd.DataFrame) -> Table:
    """Verdicts as the report's table: goals without rows left out, ratios to three places."""
    frame = frame[frame["verdict"] != "no rows"]
    shown = frame.drop(columns=["below_min", "not_ok"]).assign(
        geomean=frame["geomean"].map(_three),
        min=frame["min"].map(_three),
        of_ceiling=frame["of_ceiling"].map(_three),
        cold_read_of_ceiling=frame["cold_read_of_ceiling"].map(_three),
        room=frame["room"].map(_three),
    )
    return Table("goals", "Where the goals stand", GOALS_CAPTION, shown.reset_index(drop=True))


def goals_table(df: pd.DataFrame, goals: list[Goal] | None = None) -> Table:
    """The report's table of verdicts (the goals with rows under the report's paths)."""
    return as_table(verdicts(df, load_goals() if goals is None else goals))
