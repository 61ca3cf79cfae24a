"""Where a measured decoder layer differs from its composed sum (issue 23.3), on one GPU:

  alone_us   each step of the own-triton-graph layer timed by itself, cold L2 (read flush and
             stream hold before every launch: kernels/bench_cold.py), as composed rows are
  graph_us   the same step's kernels inside a replay of the layer's CUDA graph (torch.profiler
             kernel durations; one read flush before each replay, as the harness times it)
  gap_us     per replay: first kernel start to last kernel end, minus the kernels' durations

So sum(alone) - replay = sum(alone - graph) (warm L2 and overlap between kernels) + gaps. The
layer's own kernels and configs are used for both, which the composed rows (tuned per shape
alone) need not share.

    python3 scripts/decoder_layer_breakdown.py OUT.csv [batch ...]     (an NVIDIA GPU)
"""

from __future__ import annotations

import statistics
import sys

import pandas as pd
import torch
from harness_kernels.bench_cold import bench_cold
from torch.profiler import ProfilerActivity, profile

from harness.device import get_device
from harness.measure.timer import L2Flusher
from harness.problems.decoder_layer import DecoderLayerProblem
from harness.providers import load_all

REPLAYS = 30


def assign_kernels(replay: list[str], steps: list[list[str]]) -> list[int]:
    """The step index of each kernel of a replay, given each step's kernel names when launched
    alone, in order. A kernel no step launched alone (a graph-only node, e.g. a memset) goes to
    the step before it (the first step if it leads)."""
    owner, j = [], 0
    for s, launched in enumerate(steps):
        for kernel in launched:
            while j < len(replay) and replay[j] != kernel:
                owner.append(max(s - 1, 0))
                j += 1
            if j < len(replay):
                owner.append(s)
                j += 1
    return owner + [len(steps) - 1] * (len(replay) - len(owner))


def breakdown(batch: int) -> list[dict]:
    device = get_device("cuda")
    gpu = device.torch_device
    problem = DecoderLayerProblem("llama3_8b", batch, 4096)
    inputs = problem.make_inputs(0, "randn", gpu)
    prepared = load_all().get("decoder_layer", "own-triton-graph").prepare(problem, inputs, device)
    layer = prepared.run
    alone = {name: bench_cold(step, gpu) * 1e3 for name, step in layer.steps}
    replay_us = bench_cold(layer.graph.replay, gpu) * 1e3
    flush = L2Flusher(gpu, device.flush_bytes)  # the harness's read flush
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPLAYS):
            flush()
            layer.graph.replay()
        torch.cuda.synchronize()
    kernels = sorted(
        (e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
        key=lambda e: e.time_range.start,
    )
    # The flush is torch's reduce kernel (at::native); every other kernel is a replay's.
    replays: list[list] = [[]]
    for e in kernels:
        if e.name.startswith("void at::native"):
            if replays[-1]:
                replays.append([])
            continue
        replays[-1].append(e)
    # The profiler can miss kernels at the edges of its window: keep the replays that show the
    # usual number of kernels.
    sizes = [len(r) for r in replays if r]
    per_replay = max(set(sizes), key=sizes.count)
    replays = [r for r in replays if len(r) == per_replay]
    if len(replays) < REPLAYS // 2:
        raise RuntimeError(f"replays launched {sorted(sizes)} kernels")
    # Map kernels to steps: launch each step alone under the profiler and note its kernels'
    # names, then walk a replay's kernels in order; a kernel the step did not launch alone
    # (a graph-only node) is counted with the step it follows.
    step_names = []
    for name, step in layer.steps:
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            step()
            torch.cuda.synchronize()
        launched = [e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        step_names.append((name, launched))
    names = [e.name for e in replays[0]]
    owner = assign_kernels(names, [launched for _, launched in step_names])
    rows = []
    for s, (name, _) in enumerate(step_names):
        mine = [k for k, o in enumerate(owner) if o == s]
        graph = [sum(r[k].time_range.elapsed_us() for k in mine) for r in replays]
        rows.append(dict(batch=batch, step=name, kernels=",".join(names[k][:40] for k in mine),
                         alone_us=alone[name], graph_us=statistics.median(graph)))  # fmt: skip
    spans = [r[-1].time_range.end - r[0].time_range.start for r in replays]
    busy = [sum(e.time_range.elapsed_us() for e in r) for r in replays]
    rows.append(dict(batch=batch, step="(gaps)", kernels="", alone_us=0.0,
                     graph_us=statistics.median(s - b for s, b in zip(spans, busy, strict=True))))  # fmt: skip
    rows.append(dict(batch=batch, step="(replay, events)", kernels="", alone_us=replay_us,
                     graph_us=statistics.median(spans)))  # fmt: skip
    return rows


def main(argv: list[str]) -> None:
    out = argv[0]
    batches = [int(b) for b in argv[1:]] or [1, 16, 64, 256]
    df = pd.DataFrame([row for b in batches for row in breakdown(b)])
    df["gpu"] = torch.cuda.get_device_name()
    df.to_csv(out, index=False)
    summary = df[~df.step.str.startswith("(")].groupby("batch")[["alone_us", "graph_us"]].sum()
    summary = summary.join(df[df.step == "(gaps)"].set_index("batch").graph_us.rename("gaps_us"))
    summary = summary.join(
        df[df.step == "(replay, events)"].set_index("batch").alone_us.rename("replay_us")
    )
    print(df.round(2).to_string(index=False))
    print(summary.round(2).to_string())


if __name__ == "__main__":
    main(sys.argv[1:])
