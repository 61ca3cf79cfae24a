"""Print a run's rows as a short table (provider, problem, status, median, TFLOP/s, GB/s, rel err):
the last thing a lent-GPU call prints, so its output tail says what was measured.

python3 scripts/run_table.py results/_scratch/h200/<run_id> [more runs...]
"""

from __future__ import annotations

import sys

from harness.store import read_rows

COLUMNS = ["provider", "problem", "status", "latency_ms_median", "tflops", "gbps", "rel_err"]


def main(paths: list[str]) -> int:
    df = read_rows(*paths, columns=COLUMNS + ["reason"])
    if df.empty:
        print("no rows")
        return 1
    df = df.sort_values(["problem", "provider"])
    df["status"] = [
        s if s == "ok" else f"{s}: {str(r)[:40]}"
        for s, r in zip(df["status"], df["reason"], strict=True)
    ]
    print(df[COLUMNS].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
