"""Composed latency: the measured rows of a workload's problems summed into a layer and a step.

    layer_ms = sum over per-layer problems of count x median latency of the chosen row
    step_ms  = layers x layer_ms + the once-per-step problems (the LM head)
    decode:  ms per output token = step_ms (each sequence gains one token per step);
             tokens/s = batch / step_ms
    prefill: tokens/s = batch x prompt length / step_ms (time to first token = step_ms)
Assumptions: kernels run back to back with no overlap and no launch gaps (each median was timed
alone, cold L2); sampling costs nothing; every sequence has the same length; MoE routing is
balanced. The norms, rotary, KV append and activation (the layer ops) and, under tensor
parallelism, the two all-reduces per layer (collective rows of that world size, log-log
interpolated between measured message sizes; rows replayed from a CUDA graph, as a TP step's
graph runs them, are a curve of their own, "nccl (cuda-graph)", and the fastest row wins as for
every problem) are parts of the step like the GEMMs; where they
have no rows (runs older than the layer ops; a host without that many GPUs) the step is
composed without them and says which it left out (`omitted`): a lower bound, named as one in
the report.
The bound is the same sum over the roofline times max(flops / peak, min_bytes / HBM bandwidth)
of the same problems, from the measured ceilings where the device has them, else the datasheet.
A step is composed only when every problem has an ok row; otherwise it lists what is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from harness.report.data import IDENTITY, axes_key, is_speed, latest, row_axes_keys
from harness.report.peaks import Peaks
from harness.report.reference import fastest
from harness.workloads.derive import AXES, CATEGORIES, OPTIONAL_OPS, WorkItem
from harness.workloads.presets import Workload

GRAPH_TIMER = "cuda-graph"

SELECTIONS = {
    "vendor": "fastest vendor-library row per problem",
    "own": "fastest own-kernel row per problem",
    "best": "fastest row per problem, any provider",
}


@dataclass(frozen=True)
class Component:
    """One problem of the step with the row chosen for it (provider None: not measured)."""

    item: WorkItem
    provider: str | None
    median_ms: float | None
    bound_ms: float | None


@dataclass
class Step:
    """One composed step of a workload at one batch size on one device."""

    workload: Workload
    batch: int
    selection: str
    components: list[Component] = field(default_factory=list)
    bound_source: str | None = None
    # decoder_layer rows of the same model, batch and KV length: provider -> median ms of one
    # layer measured whole (own-triton: launched one by one; own-triton-graph: a CUDA graph;
    # torch-eager, torch-compile: PyTorch's layer)
    measured_layer: dict[str, float] = field(default_factory=dict)

    @property
    def missing(self) -> list[WorkItem]:
        return [c.item for c in self.components if c.median_ms is None]

    @property
    def omitted(self) -> list[WorkItem]:
        """Layer ops and all-reduces without a row, left out of the sums (GEMMs and attention
        never are)."""
        return [
            c.item for c in self.components if c.median_ms is None and c.item.op in OPTIONAL_OPS
        ]

    def by_category(self) -> dict[str, float] | None:
        """Step ms per CATEGORIES entry (None when the step is not composed)."""
        if self.step_ms is None:
            return None
        out = dict.fromkeys(CATEGORIES, 0.0)
        for c in self.components:
            if c.median_ms is not None:
                layers = self.workload.config.layers if c.item.per_layer else 1
                out[c.item.category] += c.median_ms * c.item.count * layers
        return out

    @property
    def coverage(self) -> str:
        return f"{len(self.components) - len(self.missing)}/{len(self.components)}"

    def _total(self, attr: str, per_layer_only: bool) -> float | None:
        total = 0.0
        for c in self.components:
            v = getattr(c, attr)
            if per_layer_only and not c.item.per_layer:
                continue
            if c.median_ms is None and c.item.op in OPTIONAL_OPS:
                continue  # an unmeasured optional part: left out of both sums, see `omitted`
            if v is None:
                return None
            reps = c.item.count * (
                1 if per_layer_only or not c.item.per_layer else self.workload.config.layers
            )
            total += reps * v
        return total

    @property
    def layer_ms(self) -> float | None:
        return self._total("median_ms", True)

    @property
    def layers_ms(self) -> float | None:
        """All layers without the once-per-step problems (known before the LM head is)."""
        return None if self.layer_ms is None else self.layer_ms * self.workload.config.layers

    @property
    def layers_tokens_per_s(self) -> float | None:
        """tokens / layers_ms: an upper bound on tokens/s while the LM head is unmeasured."""
        return self._per_s(self.tokens, self.layers_ms)

    @property
    def step_ms(self) -> float | None:
        return self._total("median_ms", False)

    @property
    def bound_layer_ms(self) -> float | None:
        return self._total("bound_ms", True)

    @property
    def bound_step_ms(self) -> float | None:
        return self._total("bound_ms", False)

    @property
    def tokens(self) -> int:
        return self.workload.tokens(self.batch)

    @staticmethod
    def _per_s(tokens: int, ms: float | None) -> float | None:
        return tokens / (ms / 1e3) if ms else None

    @property
    def tokens_per_s(self) -> float | None:
        return self._per_s(self.tokens, self.step_ms)

    @property
    def bound_tokens_per_s(self) -> float | None:
        return self._per_s(self.tokens, self.bound_step_ms)

    @property
    def ms_per_token(self) -> float | None:
        """Decode: the time between a sequence's tokens (= step); prefill: step / tokens."""
        if self.step_ms is None:
            return None
        return self.step_ms if self.workload.phase == "decode" else self.step_ms / self.tokens


class RowIndex:
    """ok rows of one device, latest per point, looked up by problem axes."""

    def __init__(self, rows: pd.DataFrame):
        self._layers: dict[tuple, dict[str, float]] = {}
        if "model" in rows.columns:
            whole = rows[is_speed(rows) & (rows["op"] == "decoder_layer")]
            for r in latest(whole, [*IDENTITY, "device_name"]).to_dict("records"):
                ranks = r.get("world_size")  # absent or NaN on tensor-parallel-1 rows
                tp = 1 if ranks is None or pd.isna(ranks) else int(ranks)
                layer = (r["model"], int(r["batch"]), int(r["kv_len"]), r["dtype"], tp)
                self._layers.setdefault(layer, {})[r["provider"]] = float(r["latency_ms_median"])
        ok = rows[is_speed(rows) & rows["op"].isin(["gemm", "attention", *OPTIONAL_OPS])]
        ok = latest(ok, [*IDENTITY, "device_name"])
        if "timer" not in ok.columns:  # rows of a schema without it: all timed per call
            ok = ok.assign(timer="cuda-events")
        cols = [
            "op",
            "provider",
            "timer",
            "family",
            "status",
            "latency_ms_median",
            *{axis for axes in AXES.values() for axis in axes},
        ]
        self._by_key: dict[tuple, list[dict]] = {}
        # collective curves: (collective, world_size, dtype, provider) -> [(bytes, ms, family)]
        self._curves: dict[tuple, list[tuple[int, float, str]]] = {}
        for r, key in zip(ok[cols].to_dict("records"), row_axes_keys(ok), strict=True):
            if r["op"] == "collective" and r["timer"] == GRAPH_TIMER:
                # Replayed from a CUDA graph, as a TP step's graph runs them: a curve of its own
                # (the eager per-call rows carry a host-launch floor), named so in the step.
                r["provider"] = f"{r['provider']} ({GRAPH_TIMER})"
            if key is not None:  # gemm and attention rows always have one
                self._by_key.setdefault(key, []).append(r)
            if r["op"] == "collective":
                curve = (r["collective"], int(r["world_size"]), r["dtype"], r["provider"])
                point = (int(r["message_bytes"]), float(r["latency_ms_median"]), r["family"])
                self._curves.setdefault(curve, []).append(point)

    def _interpolated(self, item: WorkItem) -> list[dict]:
        """A collective's time at a message size between two measured ones, per provider: the
        straight line between them on log-log axes (no extrapolation)."""
        p, out = item.problem, []
        size = p["message_bytes"]
        for (coll, world, dtype, provider), points in self._curves.items():
            if (coll, world, dtype) != (p["collective"], p["world_size"], p["dtype"]):
                continue
            points = sorted(points)
            below = [q for q in points if q[0] <= size]
            above = [q for q in points if q[0] >= size]
            if not below or not above:
                continue
            (b0, t0, fam), (b1, t1, _) = below[-1], above[0]
            w = 0.0 if b1 == b0 else math.log(size / b0) / math.log(b1 / b0)
            ms = math.exp(math.log(t0) + w * (math.log(t1) - math.log(t0)))
            out.append({"provider": f"{provider} (interpolated)", "family": fam, "status": "ok",
                        "latency_ms_median": ms})  # fmt: skip
        return out

    def candidates(self, item: WorkItem, selection: str) -> list[dict]:
        """Rows measuring `item` (only the selection's family for vendor / own); a collective
        between two measured message sizes is interpolated."""
        rows = self._by_key.get(axes_key(item.op, item.problem), [])
        if not rows and item.op == "collective":
            rows = self._interpolated(item)
        if selection in ("vendor", "own") and item.op != "collective":  # no own collectives
            rows = [r for r in rows if r["family"] == selection]
        return rows

    def measured(self, item: WorkItem) -> bool:
        return bool(self.candidates(item, "best"))

    def measured_layer(
        self, model: str, batch: int, kv_len: int, dtype: str, tp: int = 1
    ) -> dict[str, float]:
        """provider -> median ms of decoder_layer rows for this model, batch, KV length and
        tensor parallelism (per rank, all-reduces included)."""
        return dict(self._layers.get((model, batch, kv_len, dtype, tp), {}))


def compose(
    index: RowIndex, workload: Workload, batch: int, selection: str, peaks: Peaks | None
) -> Step:
    """The step of `workload` at `batch` from the rows in `index`."""
    items = workload.items(batch)
    source = None
    if peaks is not None:  # one source for the whole step: measured only if it covers every dtype
        sources = {peaks.best_source(i.problem["dtype"]) for i in items}
        source = sources.pop() if len(sources) == 1 else "datasheet"
    step = Step(workload, batch, selection, bound_source=source)
    if workload.phase == "decode":
        step.measured_layer = index.measured_layer(
            workload.model, batch, workload.context, workload.dtype, workload.tp
        )
    for item in items:
        bound = None
        if peaks is not None and source is not None:
            s = peaks.bound_s(item.flops(), item.min_bytes(), item.problem["dtype"], source)
            bound = None if s is None else s * 1e3
        cands = index.candidates(item, selection)
        if not cands:
            step.components.append(Component(item, None, None, bound))
            continue
        best = fastest(cands, family=None)  # candidates hold the selection's family only
        # RowIndex keeps ok rows with a median; fastest() drops only a non-finite or <= 0 one
        assert best is not None, f"no candidate with a usable median for {item.op}"
        step.components.append(
            Component(item, str(best["provider"]), float(best["latency_ms_median"]), bound)
        )
    return step


def steps_table(steps: list[Step]) -> pd.DataFrame:
    """One line per step: the numbers a thesis table quotes (blank where not composed)."""
    rows = []
    for s in steps:
        bound_pct = (
            s.tokens_per_s / s.bound_tokens_per_s * 100
            if s.tokens_per_s and s.bound_tokens_per_s
            else None
        )
        rows.append(
            {
                "rows": s.selection,
                "batch": s.batch,
                "tokens": s.tokens,
                "measured": s.coverage,
                "left out": ", ".join(dict.fromkeys(i.name for i in s.omitted)),
                "layer ms": s.layer_ms,
                "layers ms": s.layers_ms,
                "step ms": s.step_ms,
                "ms/token": s.ms_per_token,
                "tokens/s": s.tokens_per_s,
                "bound tokens/s": s.bound_tokens_per_s,
                "% of bound": bound_pct,
                "measured layer ms (graph)": s.measured_layer.get("own-triton-graph"),
                "measured layer ms (eager)": s.measured_layer.get("own-triton"),
                # PyTorch's layer (HF Llama ops, pages gathered for SDPA): a reader's reference,
                # not what the composition is held against
                "PyTorch layer ms (eager)": s.measured_layer.get("torch-eager"),
                "PyTorch layer ms (compiled)": s.measured_layer.get("torch-compile"),
                "composed / measured": (
                    s.layer_ms / s.measured_layer["own-triton-graph"]
                    if s.layer_ms and "own-triton-graph" in s.measured_layer
                    else None
                ),
            }
        )
    return pd.DataFrame(rows)


# What a composed latency assumes: the note under every latency-vs-batch figure of the report.
COMPOSE_NOTE = (
    "Composed latency: layer = sum over its problems of count x median latency of the chosen "
    "ok row (the GEMMs, attention, the two residual-add RMSNorms, rotary, the KV append, "
    "SiLU-and-multiply and, under tensor parallelism, two all-reduces); step = layers x layer "
    "+ the once-per-step problems (final norm, LM head); decode ms/token = step, tokens/s = "
    "batch / step; prefill tokens/s = batch x prompt / step. Assumed: kernels back to back with "
    "no overlap or launch gaps (each median timed alone, cold L2); sampling costs nothing; "
    "equal sequence lengths; balanced MoE routing. The bound is the same sum of max(flops / "
    "peak, min_bytes / HBM bandwidth) (an all-reduce's link bytes too, at HBM bandwidth: a "
    "loose bound for it). A batch is composed when every GEMM and attention problem has an ok "
    "row; a layer op or all-reduce without one is left out, and the step, named a lower bound, "
    "says which. Measured ceilings are the best rows of a ceilings run (a kernel timed in "
    "another run can beat it, by up to 8% on these cards: a step may read slightly faster than "
    "its bound)."
)
