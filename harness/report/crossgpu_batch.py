"""Decode latency versus batch on two GPUs, and the batch where each turns compute-bound.

A step is composed from each GPU's rows (harness.report.compose, "best" rows: the fastest ok
row per problem, rows of the pairing's protocol only). "Turns compute-bound" is about the step's
GEMMs, the weight-streaming part (decode attention reads a KV cache that grows with the batch: it
stays memory-bound at any batch). Two batches, each where two lines cross:
    roofline  the batch where the GEMMs' time at the dtype's compute ceiling (sum of flops /
              peak, proportional to the batch) overtakes their time at the HBM read ceiling (sum
              of min_bytes / bandwidth: the weights, plus activations growing with the batch);
              both are affine in the batch, so interpolating between the two batches that
              bracket the crossing is exact
    measured  the batch where the measured GEMM time's two asymptotes cross: flat at its value
              at the smallest batch (weight streaming), and proportional to the batch through
              its value at the largest (compute): largest batch x t(smallest) / t(largest);
              given only when the roofline calls the largest batch compute-bound
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from harness.report.compose import RowIndex, Step, compose
from harness.report.crossgpu import Gpu
from harness.workloads.presets import Workload, get_workload

WORKLOADS = ("llama3_8b_decode", "llama3_70b_decode")
SELECTION = "best"


@dataclass
class Curve:
    """One workload on one GPU: the composed step at every batch."""

    workload: Workload
    gpu: Gpu
    steps: list[Step]
    gemm_ms: dict[int, float | None] = field(default_factory=dict)  # measured GEMM time per step
    gemm_compute_ms: dict[int, float | None] = field(default_factory=dict)  # at the peak
    gemm_memory_ms: dict[int, float | None] = field(default_factory=dict)  # at HBM read

    def step(self, batch: int) -> Step:
        return next(s for s in self.steps if s.batch == batch)

    def gemm_regime(self, batch: int) -> str | None:
        c, m = self.gemm_compute_ms.get(batch), self.gemm_memory_ms.get(batch)
        return None if c is None or m is None else ("compute" if c >= m else "memory")

    @property
    def roofline_crossover(self) -> float | None:
        """Batch where the GEMMs' compute time overtakes their memory time (None: not within
        the workload's batches, or ceilings unknown)."""
        prev = None
        for b in self.workload.batches:
            c, m = self.gemm_compute_ms.get(b), self.gemm_memory_ms.get(b)
            if c is None or m is None:
                prev = None
                continue
            if c >= m:
                if prev is None:
                    return float(b) if b == self.workload.batches[0] else None
                b0, d0 = prev
                return b0 + (b - b0) * -d0 / ((c - m) - d0)
            prev = (b, c - m)
        return None

    @property
    def measured_crossover(self) -> float | None:
        """largest batch x t(smallest) / t(largest) of the measured GEMM time, when the largest
        batch is compute-bound by the roofline (else None)."""
        first, last = self.workload.batches[0], self.workload.batches[-1]
        t0, t1 = self.gemm_ms.get(first), self.gemm_ms.get(last)
        if not t0 or not t1 or self.gemm_regime(last) != "compute":
            return None
        return last * t0 / t1

    @property
    def composed(self) -> list[int]:
        return [s.batch for s in self.steps if s.step_ms is not None]


def _reps(step: Step, item) -> int:
    return item.count * (step.workload.config.layers if item.per_layer else 1)


def curve(rows: pd.DataFrame, workload: Workload, gpu: Gpu) -> Curve:
    """The composed steps of `workload` from `rows` (one GPU's, one protocol) at every batch."""
    index = RowIndex(rows)
    steps = [compose(index, workload, b, SELECTION, gpu.peaks) for b in workload.batches]
    out = Curve(workload, gpu, steps)
    bw = gpu.bandwidth()
    for s in steps:
        gemms = [c for c in s.components if c.item.op == "gemm"]
        measured = [c.median_ms for c in gemms if c.median_ms is not None]
        out.gemm_ms[s.batch] = (
            None
            if len(measured) < len(gemms) or not gemms
            else sum(_reps(s, c.item) * ms for c, ms in zip(gemms, measured, strict=True))
        )
        peaks = [p for c in gemms if (p := gpu.compute(c.item.problem["dtype"]))]
        if bw and gemms and len(peaks) == len(gemms):
            reps = [_reps(s, c.item) for c in gemms]
            flops_s = [
                n * c.item.flops() / (p * 1e12) for n, c, p in zip(reps, gemms, peaks, strict=True)
            ]
            bytes_s = [
                n * c.item.min_bytes() / (bw * 1e9) for n, c in zip(reps, gemms, strict=True)
            ]
            out.gemm_compute_ms[s.batch] = 1e3 * sum(flops_s)
            out.gemm_memory_ms[s.batch] = 1e3 * sum(bytes_s)
    return out


def curves(rows_a: pd.DataFrame, rows_b: pd.DataFrame, a: Gpu, b: Gpu) -> list[tuple[Curve, Curve]]:
    """(curve on A, curve on B) per decode workload with a composed step on either GPU, each
    step composed of the same parts on both: a layer op or all-reduce measured on one GPU only
    is left out of both (else the GPU with more rows looks slower: H200's Llama-3-70B step had
    the norms, rotary, KV append and SiLU, 1.7 ms at batch 1, where the H100's had none)."""
    out = []
    for name in WORKLOADS:
        w = get_workload(name)
        ca, cb = curve(rows_a, w, a), curve(rows_b, w, b)
        if ca.composed or cb.composed:
            out.append(_same_parts(ca, cb))
    return out


def _same_parts(ca: Curve, cb: Curve) -> tuple[Curve, Curve]:
    """Both curves composed again without the optional parts either GPU lacks at a batch."""
    drop: dict[int, set[str]] = {}
    for batch in ca.workload.batches:
        names = {i.name for i in ca.step(batch).omitted} | {i.name for i in cb.step(batch).omitted}
        if names:
            drop[batch] = names
    if not drop:
        return ca, cb
    return _without(ca, drop), _without(cb, drop)


def _without(c: Curve, drop: dict[int, set[str]]) -> Curve:
    """`c` with the named parts of each batch's step unmeasured (left out of both sums)."""
    steps = []
    for s in c.steps:
        names = drop.get(s.batch, set())
        parts = [
            replace(x, provider=None, median_ms=None) if x.item.name in names else x
            for x in s.components
        ]
        steps.append(replace(s, components=parts))
    return replace(c, steps=steps)


def _ratio(x: float | None, y: float | None) -> float | None:
    return x / y if x and y else None


def batch_frame(ca: Curve, cb: Curve) -> pd.DataFrame:
    """One line per batch: ms per token on each GPU, the speedup and the roofline's."""
    a, b = ca.gpu.short, cb.gpu.short
    lines = []
    for batch in ca.workload.batches:
        sa, sb = ca.step(batch), cb.step(batch)
        lines.append(
            {
                "batch": batch,
                f"{a} ms/token": sa.ms_per_token,
                f"{b} ms/token": sb.ms_per_token,
                f"{b}/{a} speedup": _ratio(sa.step_ms, sb.step_ms),
                "predicted (roofline)": _ratio(sa.bound_step_ms, sb.bound_step_ms),
                f"{a} tokens/s": sa.tokens_per_s,
                f"{b} tokens/s": sb.tokens_per_s,
                f"{a} GEMM share": _ratio(ca.gemm_ms.get(batch), sa.step_ms),
                f"{a} GEMMs": ca.gemm_regime(batch) or "",
                f"{b} GEMMs": cb.gemm_regime(batch) or "",
            }
        )
    return pd.DataFrame(lines)


def knee_text(c: Curve) -> str:
    """'batch ~254 by the roofline, ~269 measured' (or why a number is missing)."""
    last = c.workload.batches[-1]
    roof, meas = c.roofline_crossover, c.measured_crossover
    if roof is not None:
        r = f"batch ~{roof:.0f} by the roofline"
    elif c.gemm_regime(last) == "memory":
        r = f"beyond batch {last} by the roofline"
    else:
        r = "no roofline (ceilings or rows missing)"
    if meas is not None:
        m = f"~{meas:.0f} measured"
    elif c.gemm_ms.get(c.workload.batches[0]) and c.gemm_ms.get(last):
        m = f"not measured as compute-bound up to batch {last}"
    else:
        m = "not measured (GEMM rows missing at the smallest or largest batch)"
    return f"{r}, {m}"
