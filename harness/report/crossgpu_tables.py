"""Cross-GPU tables and findings: one summary line per (kernel family, provider, regime), every
paired point, the rows left out, decode latency versus batch, and one plain-language finding per
kernel family, each sentence written from the numbers (nothing here holds a result).

    build(rows_a, rows_b)  ->  CrossGpu (tables as harness.report.tables.Table, findings as text)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from harness.report import crossgpu_batch as xb
from harness.report.ceilings import PEAK_OF_DTYPE, above_roof, measured_ceilings
from harness.report.crossgpu import (
    HBM,
    N_BOOT,
    REGIMES,
    WITHIN,
    Gpu,
    Pairing,
    pair_rows,
    protocol_rows,
)
from harness.report.data import fmt
from harness.report.roofs_table import read_fit
from harness.report.tables import Table
from harness.units import fmt_bytes

SHORT_MS = 0.030  # memory-bound kernels shorter than this on A are reported apart: a few us of
# ramp-up and tail (DRAM latency, the last wave) is a large share of them and does not scale
# with bandwidth
OUTLIERS_SHOWN = 3
_REGIME_PREDICTOR = {"memory": "the HBM read ratio", "between": "the roofline"}
_REGIME_NOUN = {
    "memory": "memory-bound point{s}",
    "compute": "compute-bound point{s}",
    "between": "point{s} between the two ridges",
}


@dataclass
class CrossGpu:
    """Everything `harness crossgpu` prints and the report's cross-GPU section shows."""

    pairing: Pairing
    curves: list[tuple[xb.Curve, xb.Curve]]
    header: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    summary: Table | None = None
    points: Table | None = None
    dropped: Table | None = None
    batches: list[Table] = field(default_factory=list)

    @property
    def tables(self) -> list[Table]:
        return [
            t for t in (self.summary, *self.batches, self.dropped, self.points) if t is not None
        ]


def _x(v: float) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}x"


def _share(v: float) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.0f}%"


def _within(g: pd.DataFrame, column: str = "vs_predicted") -> float:
    r = g[column].dropna()
    return float(((r - 1).abs() <= WITHIN).mean()) if len(r) else math.nan


def _short(problem: str) -> str:
    """'64x8192x2048 bf16 nt' from 'gemm 64x8192x2048 bf16 nt', 'b1 h32/8 s1/1024 d128 bf16'
    from 'attn b1 h32/8 s1/1024 d128 causal bf16': an outlier list stays readable."""
    return problem.removeprefix("gemm ").removeprefix("attn ").replace(" causal", "")


def _outliers(g: pd.DataFrame, n: int = OUTLIERS_SHOWN) -> str:
    off = g[(g["vs_predicted"] - 1).abs() > WITHIN]
    off = off.reindex((off["vs_predicted"] - 1).abs().sort_values(ascending=False).index)
    shown = [
        f"{_short(r['problem'])} {_x(r['speedup'])} vs {_x(r['predicted'])}"
        for r in off.head(n).to_dict("records")
    ]
    more = f" (+{len(off) - n} more)" if len(off) > n else ""
    return "; ".join(shown) + more


def _groups(points: pd.DataFrame):
    order = {r: i for i, r in enumerate(REGIMES)}
    keyed = points.assign(_r=points["regime"].map(order).fillna(len(REGIMES)))
    keyed = keyed.sort_values(["family", "provider", "_r"], kind="stable")
    return keyed.groupby(["family", "provider", "regime"], sort=False, dropna=False)


def summary_table(p: Pairing) -> Table:
    """One line per (family, provider, regime): medians, agreement, efficiency, outliers."""
    a, b = p.a.short, p.b.short
    lines = []
    for (family, provider, regime), g in _groups(p.points):
        lines.append(
            {
                "family": family,
                "provider": provider,
                "regime": regime or "unknown",
                "points": len(g),
                f"median {p.label}": _x(g["speedup"].median()),
                "median predicted": _x(g["predicted"].median()),
                "measured / predicted": fmt(g["vs_predicted"].median(), ".3f"),
                f"within {WITHIN:.0%}": _share(_within(g)),
                "median predicted, cold read": _x(g["predicted_read"].median()),
                f"within {WITHIN:.0%} of it": _share(_within(g, "vs_predicted_read")),
                "cold-read points": int(g["predicted_read"].notna().sum()),
                f"% roof {a}": _share(g["roof_a"].median()),
                f"% roof {b}": _share(g["roof_b"].median()),
                "outliers (measured vs predicted)": _outliers(g),
            }
        )
    caption = (
        f"Speedup = median latency on the {a} / on the {b}; predicted = roof_{b}(I) / "
        f"roof_{a}(I), roof = min(compute ceiling of the dtype, I x HBM read ceiling), "
        "both GPUs' measured ceilings. Regime: memory below both ridges (predicted = HBM "
        "read ratio), compute above both (tensor-ceiling ratio), between the ridges. "
        f"Within {WITHIN:.0%}: share of points with |measured / predicted - 1| <= "
        f"{WITHIN:g}; predicted, cold read: each GPU's time bound max(FLOPs / compute "
        "ceiling, one cold read of the point's bytes from its probes_read_once curve), A's "
        "over B's, over the 'cold-read points' (those whose bytes both GPUs' read-once runs "
        "reach down to): a short read pays a fixed cost on both GPUs that the HBM ratio "
        "leaves out; "
        "% roof: median fraction of each GPU's roofline reached (measured / predicted = "
        "% roof B / % roof A)."
    )
    return Table(
        "crossgpu_summary",
        f"{p.label}: speedup against the roofline, per kernel family",
        caption,
        pd.DataFrame(lines),
    )


def points_table(p: Pairing) -> Table:
    a, b = p.a.short, p.b.short
    lines = []
    for r in p.points.to_dict("records"):
        ci = f"[{r['ci_lo']:.3f}, {r['ci_hi']:.3f}]" if not math.isnan(r["ci_lo"]) else ""
        lines.append(
            {
                "family": r["family"],
                "provider": r["provider"],
                "problem": r["problem"],
                "I (FLOP/B)": fmt(r["intensity"], ".4g"),
                "regime": r["regime"] or "",
                f"{a} us": fmt(1e3 * r["a_ms"], ".4g"),
                f"{b} us": fmt(1e3 * r["b_ms"], ".4g"),
                "speedup": fmt(r["speedup"], ".3f"),
                "95% CI": ci,
                "predicted": fmt(r["predicted"], ".3f"),
                "measured / predicted": fmt(r["vs_predicted"], ".3f"),
                "predicted, cold read": fmt(r["predicted_read"], ".3f"),
                "measured / it": fmt(r["vs_predicted_read"], ".3f"),
                f"% roof {a}": _share(r["roof_a"]),
                f"% roof {b}": _share(r["roof_b"]),
            }
        )
    caption = (
        f"Every paired point: median latency on each GPU, speedup {p.label} with a "
        "bootstrap 95% CI of the raw samples, the roofline's prediction for its "
        "arithmetic intensity I and the cold read's (each GPU's max(FLOPs / peak, one cold "
        "read of the point's bytes); blank below the read-once probes' smallest size), and "
        "the fraction of each GPU's roofline reached."
    )
    return Table("crossgpu_points", f"{p.label}: every paired point", caption, pd.DataFrame(lines))


def dropped_table(p: Pairing) -> Table:
    caption = (
        f"Rows of A ({p.a.name}) and B ({p.b.name}) not in the comparison, by reason. "
        "Points pair on (op, provider, problem) only where every protocol column "
        "matches (" + ", ".join(p.protocol) + ")."
    )
    return Table("crossgpu_dropped", f"{p.label}: rows left out", caption, p.dropped)


def batch_table(ca: xb.Curve, cb: xb.Curve) -> Table:
    frame = xb.batch_frame(ca, cb)
    out = frame.copy()
    for col in out.columns:
        if "ms/token" in col:
            out[col] = [fmt(v, ".4g") for v in out[col]]
        elif "tokens/s" in col:
            out[col] = [fmt(v, ".0f") for v in out[col]]
        elif col.endswith("speedup") or col.startswith("predicted"):
            out[col] = [fmt(v, ".3f") for v in out[col]]
        elif col.endswith("share"):
            out[col] = [_share(v) for v in out[col]]
    w = ca.workload
    caption = (
        f"{w.describe()}: the step composed from the fastest ok row per problem on each "
        "GPU (decode: ms/token = step), predicted = the roofline time of the same step on "
        f"the {ca.gpu.short} / on the {cb.gpu.short}. GEMMs: memory or compute by the "
        "roofline (sum of flops / peak against sum of min_bytes / HBM read over the step's "
        f"GEMMs). GEMMs turn compute-bound on the {ca.gpu.short} at {xb.knee_text(ca)}; "
        f"on the {cb.gpu.short} at {xb.knee_text(cb)}. Roofline: the batch where the "
        "GEMMs' compute time overtakes their memory time (both affine in the batch, "
        "interpolated exactly); measured: where the measured GEMM time's flat asymptote "
        "(its value at the smallest batch) meets its proportional one (through its value "
        "at the largest batch)." + _left_out_text(ca)
    )
    return Table(f"crossgpu_{w.name}", f"{w.config.name} decode on both GPUs", caption, out)


def _left_out_text(c: xb.Curve) -> str:
    """' Left out of both GPUs' steps (no row on one of them): ...' or ''. The curves carry the
    same parts on both GPUs (crossgpu_batch.curves), so one side names them."""
    names = dict.fromkeys(i.name for s in c.steps for i in s.omitted)
    if not names:
        return ""
    return (
        " Left out of both GPUs' steps, as not measured on one or both (the step is then a "
        f"lower bound on both): {', '.join(names)}."
    )


def _predictor(regime: str, dtypes: set[str]) -> str:
    if regime == "compute":
        kinds = {PEAK_OF_DTYPE.get(d, "").split("_")[0] for d in dtypes}
        kind = "tensor" if kinds == {"tensor"} else "compute"
        return f"the {', '.join(sorted(dtypes))} {kind}-ceiling ratio"
    return _REGIME_PREDICTOR.get(regime, "the roofline")


def _regime_sentence(regime: str, g: pd.DataFrame, a: Gpu, b: Gpu) -> str:
    s, pred = g["speedup"].median(), g["predicted"].median()
    one = len(g) == 1
    what = _REGIME_NOUN.get(regime, "point{s} of unknown regime (no ceiling for the dtype)")
    what = what.format(s="" if one else "s")
    they, reach = ("it", "reaches") if one else ("they", "reach")
    text = (
        f"{len(g)} {what} {'runs' if one else 'run'} {_x(s)} the speed on the "
        f"{b.short} against {_x(pred)} predicted by {_predictor(regime, set(g['dtype']))} "
        f"({_share(_within(g))} within {WITHIN:.0%})"
    )
    read = g["predicted_read"].dropna() if regime == "memory" else pd.Series(dtype=float)
    # the read explains the shortfall: the points keep their share of a cold read on both GPUs
    # (judged only where it predicts at least half the group's points)
    read_ratio = g["vs_predicted_read"].median() if 2 * len(read) >= len(g) else math.nan
    explained = not math.isnan(read_ratio) and abs(read_ratio - 1) <= WITHIN
    ratio = g["vs_predicted"].median()
    if not math.isnan(ratio) and abs(ratio - 1) > WITHIN:
        ra, rb = g["roof_a"].median(), g["roof_b"].median()
        but = "but" if _share(rb) != _share(ra) and rb < ra else "and"
        text += (
            f"; {they} {reach} {_share(ra)} of the {a.short}'s roofline {but} {_share(rb)} "
            f"of the {b.short}'s"
        )
        if regime == "memory" and rb < ra and not explained:
            text += f", so HBM bandwidth is not what limits them on the {b.short}"
    if len(read):
        text += (
            f"; one cold read of each point's bytes predicts {_x(read.median())} "
            f"({_share(_within(g, 'vs_predicted_read'))} within {WITHIN:.0%}"
            + (f", {len(read)} of the {len(g)} points" if len(read) < len(g) else "")
            + ")"
        )
        if explained and not math.isnan(ratio) and abs(ratio - 1) > WITHIN:
            text += (
                ": a single read pass's fixed cost, paid on both GPUs, is what the HBM ratio "
                "leaves out"
            )
    if regime == "memory":
        short, long_ = g[g["a_ms"] < SHORT_MS], g[g["a_ms"] >= SHORT_MS]
        if len(short) >= 3 and len(long_) >= 3:
            ss, sl = short["speedup"].median(), long_["speedup"].median()
            if abs(ss / sl - 1) > 0.05:
                text += (
                    f"; those under {1e3 * SHORT_MS:.0f} us on the {a.short} run {_x(ss)}, "
                    f"longer ones {_x(sl)}"
                )
    return text


def family_findings(p: Pairing) -> list[str]:
    """One sentence per (family, provider), clauses per regime, from the numbers."""
    out = []
    for (family, provider), g in p.points.groupby(["family", "provider"], sort=True):
        parts = [_regime_sentence(r, gr, p.a, p.b) for (_, _, r), gr in _groups(g)]
        out.append(f"{provider} {family}: " + "; ".join(parts) + ".")
    return out


def batch_findings(curves: list[tuple[xb.Curve, xb.Curve]]) -> list[str]:
    out = []
    for ca, cb in curves:
        w, a, b = ca.workload, ca.gpu.short, cb.gpu.short
        both = [x for x in w.batches if ca.step(x).step_ms and cb.step(x).step_ms]
        text = f"{w.config.name} decode (TP{w.tp}, KV {w.context}): "
        if both:
            lo, hi = both[0], both[-1]
            sp = {x: _ratio(ca.step(x).step_ms, cb.step(x).step_ms) for x in (lo, hi)}
            pr = {x: _ratio(ca.step(x).bound_step_ms, cb.step(x).bound_step_ms) for x in (lo, hi)}
            text += (
                f"the {b} composes a step {_x(sp[lo])} faster at batch {lo} and "
                f"{_x(sp[hi])} at batch {hi} (roofline {_x(pr[lo])} and {_x(pr[hi])}); "
            )
        else:
            text += "no batch composes on both GPUs; "
        text += (
            f"its GEMMs turn compute-bound at {xb.knee_text(cb)} on the {b}, against "
            f"{xb.knee_text(ca)} on the {a}."
        )
        out.append(text)
    return out


def settle_findings(p: Pairing) -> list[str]:
    """A caution where power-capped points were timed with the limiter settled on one GPU only
    (rows from before the protocol's power settle against rows after it)."""
    if not p.settled_one_side:
        return []
    return [
        f"{p.settled_one_side} of {len(p.points)} paired points ran power-capped with the "
        "limiter settled before timing on one GPU's side only (rows older than schema 4 were "
        "timed without the settle): their ratios include each side's limiter state, which "
        "moved heavy GEMM rows by 4-9% on an H100."
    ]


def _ratio(x, y):
    return x / y if x and y else math.nan


def header_lines(p: Pairing) -> list[str]:
    """The ceilings, ridges and predicted ratios the comparison stands on."""
    lines = [
        f"B = {p.b.name} against A = {p.a.name}: {len(p.points)} points paired under one "
        f"protocol ({', '.join(f'{k}={v}' for k, v in p.protocol.items())}); git A "
        f"{', '.join(p.git_a) or '?'}, B {', '.join(p.git_b) or '?'}; "
        f"{int(p.dropped['rows on A'].sum())} rows of A and "
        f"{int(p.dropped['rows on B'].sum())} of B left out (table of reasons below)."
    ]
    for dtype in sorted(set(p.points["dtype"].dropna())):
        ga, gb = p.a, p.b
        ca, cb = ga.compute(dtype), gb.compute(dtype)
        bwa, bwb = ga.bandwidth(), gb.bandwidth()  # never None: gpu_of demands HBM read
        ra, rb = ga.ridge(dtype), gb.ridge(dtype)
        if not ca or not cb or not bwa or not bwb or ra is None or rb is None:
            continue
        lines.append(
            f"{dtype}: {ga.short} {bwa:,.0f} GB/s HBM read, {ca:,.0f} TFLOP/s, ridge "
            f"{ra:.0f} FLOP/B; {gb.short} {bwb:,.0f} GB/s, {cb:,.0f} "
            f"TFLOP/s, ridge {rb:.0f} FLOP/B; predicted {p.label}: "
            f"{_x(bwb / bwa)} memory-bound, {_x(cb / ca)} compute-bound."
        )
    lines.append(_cold_read_line(p))
    return lines


def _cold_read_line(p: Pairing) -> str:
    """The read-once curves the cold-read prediction takes, per GPU: the probed sizes and the
    fit of one pass (fixed + bytes / rate), or that a GPU has none."""
    parts = []
    for g in (p.a, p.b):
        c = g.read_curve
        if c is None or c.empty:
            parts.append(f"{g.short} none (no probes_read_once run among its rows)")
            continue
        fit = read_fit(c)
        span = f"{fmt_bytes(int(c.index.min()))}-{fmt_bytes(int(c.index.max()))}"
        parts.append(
            f"{g.short} {len(c)} sizes, {span}"
            + (f" (one pass {fit.fixed_us:.2f} us + bytes / {fit.gbps:,.0f} GB/s)" if fit else "")
        )
    covered = int(p.points["predicted_read"].notna().sum())
    return (
        f"Cold read (the second prediction): {'; '.join(parts)}; it predicts {covered} of the "
        f"{len(p.points)} points (none below a GPU's smallest probed size)."
    )


def above_roof_lines(rows: pd.DataFrame, p: Pairing) -> list[str]:
    """Rows of either GPU faster than its ceilings run at a metric the prediction uses: how
    many, and the fastest (a short GEMM on a card holding a higher clock, or at a shape the
    ceilings run did not probe, can beat it; the prediction stays on the ceilings runs, and the
    reader sees by how much)."""
    metrics = {HBM, *(PEAK_OF_DTYPE.get(d, "") for d in set(p.points["dtype"].dropna()))}
    table = measured_ceilings(rows)
    above = above_roof(rows, table)
    short = {p.a.name: p.a.short, p.b.name: p.b.short}
    out = []
    for r in above[above["metric"].isin(metrics)].to_dict("records"):
        unit = "GB/s" if r["metric"].endswith("_gbps") else "TFLOP/s"
        out.append(
            f"{short.get(r['device_name'], r['device_name'])} {r['metric']}: {r['rows_above']} "
            f"row{'s' if r['rows_above'] != 1 else ''} above the ceilings run's "
            f"{r['roof']:,.0f} {unit}, the fastest "
            f"{r['fastest']:,.0f} ({r['of_roof']:.3f}x, {r['row']})."
        )
    return out


def build(
    rows_a: pd.DataFrame,
    rows_b: pd.DataFrame,
    n_boot: int = N_BOOT,
    notes: Sequence[str] = (),
) -> CrossGpu:
    """Pair the two GPUs' rows, compose their decode steps, and make every table and finding
    (`notes` lead the header)."""
    p = pair_rows(rows_a, rows_b, n_boot)
    curves = xb.curves(
        protocol_rows(rows_a, p.protocol), protocol_rows(rows_b, p.protocol), p.a, p.b
    )
    above = above_roof_lines(pd.concat([rows_a, rows_b], ignore_index=True), p)
    out = CrossGpu(p, curves, [*notes, *header_lines(p), *above])
    out.findings = family_findings(p) + batch_findings(curves) + settle_findings(p)
    out.summary, out.points, out.dropped = summary_table(p), points_table(p), dropped_table(p)
    out.batches = [batch_table(ca, cb) for ca, cb in curves]
    return out


def markdown(x: CrossGpu, points: bool = True) -> str:
    """The whole comparison as markdown: header, findings, then the tables."""
    out = [
        f"# Cross-GPU: {x.pairing.b.name} against {x.pairing.a.name}",
        "",
        *x.header,
        "",
        "## Findings",
        "",
        *(f"- {f}" for f in x.findings),
        "",
    ]
    for t in x.tables:
        if t is x.points and not points:
            out += [f"({len(t.frame)} paired points: `points=true` prints them)", ""]
            continue
        out += [f"## {t.title}", "", t.caption, "", t.markdown(), ""]
    return "\n".join(out)


def latex(x: CrossGpu) -> str:
    """Findings as an itemize list, then each table (booktabs) with its caption as a comment."""
    esc = str.maketrans(
        {c: f"\\{c}" for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    )
    items = "\n".join(f"  \\item {f.translate(esc)}" for f in x.findings)
    parts = [
        f"% Cross-GPU: {x.pairing.b.name} against {x.pairing.a.name}",
        *(f"% {h}" for h in x.header),
        f"\\begin{{itemize}}\n{items}\n\\end{{itemize}}",
    ]
    return "\n".join(parts) + "\n\n" + "\n".join(t.latex() for t in x.tables)
