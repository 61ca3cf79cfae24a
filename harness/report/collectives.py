"""Bus bandwidth versus message size for collectives (op "collective"), one figure per host
and world size, one line per collective, provider and timer: the nccl-tests view of the
interconnect, and (dashed) the same calls replayed from a CUDA graph, as a tensor-parallel
step's graph runs them (`sweep=collectives_graph`), where small messages lose the per-call host
launch and the ranks' skew."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.report.compose import GRAPH_TIMER
from harness.report.data import IDENTITY, device_of, is_speed, latest
from harness.report.figures import FigureFile, new_figure, save, slug

_MARKERS = {"all_reduce": "o", "all_gather": "s", "reduce_scatter": "^", "all_to_all": "D"}


def collective_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """ok collective rows, latest per point."""
    if "collective" not in rows.columns:
        return rows.iloc[0:0]
    coll = rows[is_speed(rows) & (rows["op"] == "collective")]
    return coll if coll.empty else latest(coll, [*IDENTITY, "device_name"])


def collective_figures(rows: pd.DataFrame, out_dir: Path) -> list[FigureFile]:
    """Per (device, world size): busbw in GB/s against message bytes on log-log axes."""
    coll = collective_rows(rows)
    files: list[FigureFile] = []
    if coll.empty:
        return files
    for (name, kind, world), g in coll.groupby(
        ["device_name", "device_type", "world_size"], sort=True
    ):
        device = device_of({"device_name": name, "device_type": kind})
        fig = new_figure(7.0, 4.2, right=0.72)
        ax = fig.subplots()
        g = g.assign(replayed=g["timer"] == GRAPH_TIMER)  # never one line across two timers
        for (collective, provider, replayed), line in g.groupby(
            ["collective", "provider", "replayed"], sort=True
        ):
            line = line.sort_values("message_bytes")
            how = ", graph replay" if replayed else ""
            ax.plot(
                line["message_bytes"],
                line["busbw_gbps"],
                marker=_MARKERS.get(collective, "."),
                markersize=4,
                ls="--" if replayed else "-",
                label=f"{collective} ({provider}{how})",
            )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes per rank, nccl-tests convention)")
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.set_title(f"{device}: collectives, {int(world)} ranks")
        ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8, frameon=False)
        ax.grid(True, which="major", alpha=0.3)
        caption = (
            f"{device}, {int(world)} ranks: bus bandwidth (algorithm bandwidth x the "
            "nccl-tests factor: 2(n-1)/n for all_reduce, (n-1)/n otherwise) against message "
            "size; each point the median of per-call times, the slowest rank's per call."
        )
        if g["replayed"].any():
            caption += (
                " Dashed: the calls captured back to back in one CUDA graph per rank and "
                "replayed, a sample being the slowest rank's replay over its calls."
            )
        files.append(save(fig, out_dir, f"collectives-{slug(device)}-{int(world)}ranks", caption))
    return files
