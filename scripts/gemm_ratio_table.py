"""Print a GEMM run as one line per shape: cuBLAS's median and each own provider's ratio to it
(cuBLAS time / own time: above 1 is faster), with the tile each own provider chose, then the
geomean per provider and M. The last thing a lent-GPU GEMM call prints.

python3 scripts/gemm_ratio_table.py results/_scratch/h200/<run_id> [more runs...]
"""

from __future__ import annotations

import json
import sys

import numpy as np

from harness.store import read_rows


def _tile(cfg: str) -> str:
    c = json.loads(cfg or "{}")
    tile = f"{c.get('block_m', '?')}x{c.get('block_n', '?')}"
    if c.get("split_k", 1) > 1:
        tile += f"/sk{c['split_k']}"
    if c.get("stream_k"):
        tile += "/streamK"
    if c.get("kernel") == "gluon-ws":  # own-triton ran its Gluon GEMM: which schedule
        tile += "/gl-pp" if c.get("schedule") == "ping-pong" else "/gl-coop"
    return tile


def main(paths: list[str]) -> int:
    cols = ["provider", "m", "n", "k", "status", "latency_ms_median", "provider_config"]
    df = read_rows(*paths, columns=cols)
    ok = df[df.status == "ok"]
    base = ok[ok.provider == "cublas"].set_index(["m", "n", "k"]).latency_ms_median
    own = sorted(p for p in ok.provider.unique() if p != "cublas")
    ratios: dict[str, list[tuple[int, float]]] = {p: [] for p in own}
    worst: dict[str, list[tuple[float, str]]] = {p: [] for p in own}
    print("m n k | cublas_us | " + " | ".join(own))
    for (m, n, k), t in base.sort_index().items():
        cells = []
        for p in own:
            r = ok[(ok.provider == p) & (ok.m == m) & (ok.n == n) & (ok.k == k)]
            if r.empty:
                cells.append("-")
                continue
            ratio = t / r.latency_ms_median.iloc[0]
            ratios[p].append((m, ratio))
            worst[p].append((ratio, f"{m}x{n}x{k}"))
            cells.append(f"{ratio:.3f} {_tile(r.provider_config.iloc[0])}")
        print(f"{m} {n} {k} | {t * 1e3:.1f} | " + " | ".join(cells))
    for p in own:
        by_m: dict[int, list[float]] = {}
        for m, r in ratios[p]:
            by_m.setdefault(m, []).append(r)
        per_m = " ".join(f"M{m}:{np.exp(np.mean(np.log(v))):.3f}" for m, v in sorted(by_m.items()))
        all_r = [r for _, r in ratios[p]]
        if all_r:
            geo = np.exp(np.mean(np.log(all_r)))
            print(f"{p}: geomean {geo:.3f} min {min(all_r):.3f} ({len(all_r)} pts) {per_m}")
            bands = {"M1-64": (1, 64), "M128-1024": (128, 1024), "M>=2048": (2048, 1 << 40)}
            band_geo = {
                name: np.exp(np.mean(np.log([r for m, r in ratios[p] if lo <= m <= hi])))
                for name, (lo, hi) in bands.items()
                if any(lo <= m <= hi for m, _ in ratios[p])
            }
            print("  bands: " + " ".join(f"{k} {v:.3f}" for k, v in band_geo.items()))
            print("  worst: " + " ".join(f"{s} {r:.3f}" for r, s in sorted(worst[p])[:10]))
    bad = df[df.status != "ok"]
    for _, row in bad.iterrows():
        print(f"NOT OK {row.provider} {row.m}x{row.n}x{row.k}: {row.status}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
