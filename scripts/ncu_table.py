"""An Nsight Compute CSV as one table: a row per profiled launch, a column per metric.

`ncu --csv --page details --metrics ...` writes one line per (launch, metric), after whatever the
profiled script printed (the launch order that scripts/gemm_ncu_compare.py and
provider_ncu_compare.py print, and ncu's own ==PROF== lines). Sessions 83 and 84 pivoted these
by hand into the tables of results/h200/_logs/session8*/ncu-*-table.txt; this script does it
the same way every time:

    python3 scripts/ncu_table.py results/h200/_logs/session84/ncu-cl256.csv.xz \
        --kernels 'nvjet|splitK|cutlass|_gemm|_splitk'

Columns are the metrics the call scripts ask for, under short names (METRICS); another metric
keeps its ncu name. Times are ncu's (ns here), bytes are bytes. `.xz` files are read as such.
"""

from __future__ import annotations

import argparse
import io
import lzma
import re
from pathlib import Path

import pandas as pd

# ncu metric -> column name; the order of the table's columns
METRICS = {
    "gpu__time_duration.sum": "time",
    "dram__bytes_read.sum": "DRAM read",
    "dram__bytes_write.sum": "DRAM write",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM %",
    "lts__t_bytes.sum": "L2 bytes",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "SM %",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy %",
    "launch__grid_size": "grid",
    "launch__block_size": "block",
    "launch__registers_per_thread": "regs",
    "launch__occupancy_limit_registers": "limit (regs)",
    "launch__occupancy_limit_shared_mem": "limit (smem)",
}


def read_csv_text(path: Path) -> str:
    raw = lzma.open(path).read() if path.suffix == ".xz" else path.read_bytes()
    return raw.decode(errors="replace")


def metric_lines(text: str) -> str:
    """The CSV part of an ncu log: from its header line ("ID",...) on."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith('"ID"')]
    if not starts:
        raise ValueError('no ncu CSV header (a line starting with "ID") in the file')
    return "\n".join(lines[starts[0] :])


def table(
    text: str, kernels: str | None = None, width: int = 40, every: bool = False
) -> pd.DataFrame:
    """One row per launch ID (in launch order) with its kernel name cut to `width`, one column
    per METRICS metric present (`every`: the sections' other metrics too, after them);
    `kernels`, a regular expression, keeps the launches whose name has it."""
    frame = pd.read_csv(io.StringIO(metric_lines(text)), thousands=",")
    if kernels:
        frame = frame[frame["Kernel Name"].str.contains(kernels, regex=True)]
    wide = frame.pivot_table(
        index=["ID", "Kernel Name"], columns="Metric Name", values="Metric Value", aggfunc="first"
    )
    known = [m for m in METRICS if m in wide.columns]
    others = sorted(c for c in wide.columns if c not in METRICS) if every else []
    wide = wide[known + others]
    wide.columns = [METRICS.get(c, c) for c in wide.columns]
    wide = wide.reset_index().sort_values("ID")
    wide["Kernel Name"] = wide["Kernel Name"].str.slice(0, width)
    return wide


def units(text: str) -> dict[str, str]:
    """{column: unit} as ncu gave them (times in ns or us, bytes in byte...)."""
    frame = pd.read_csv(io.StringIO(metric_lines(text)), thousands=",")
    first = frame.groupby("Metric Name")["Metric Unit"].first().dropna()
    return {METRICS.get(name, name): str(unit) for name, unit in first.items()}


def _number(value: float) -> str:
    """Counts and bytes as integers with thousands separators; percentages with two decimals."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="ncu --csv --page details output (.csv or .csv.xz)")
    parser.add_argument("--kernels", help="a regular expression: only launches whose name has it")
    parser.add_argument("--width", type=int, default=40, help="characters of the kernel name")
    parser.add_argument("--all", action="store_true", help="the sections' other metrics too")
    args = parser.parse_args(argv)
    for name in args.csv:
        text = read_csv_text(Path(name))
        found = table(text, args.kernels, args.width, args.all)
        unit = units(text)
        print(f"{name}: units " + ", ".join(f"{c} {unit[c]}" for c in found.columns if c in unit))
        numbers = [c for c in found.columns if c not in ("ID", "Kernel Name")]
        print(found.to_string(index=False, formatters={c: _number for c in numbers}))
        if re.search(r"in this order", text):  # the launch order the profiled script printed
            order = text[text.index("in this order") :].split('"ID"')[0]
            print("launch order:", order.strip())


if __name__ == "__main__":
    main()
