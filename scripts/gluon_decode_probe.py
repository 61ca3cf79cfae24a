"""Would the warp-specialized Gluon GEMM stream decode weights as fast as cuBLAS? A probe.

At M <= 64 own Triton times only its `tl` kernel (gemm.py GLUON_MIN_M): one 4-warp program per
tile issues its own TMA loads. On the H100 under ncu (results/h100/_logs/session45/ncu), with
96 CTAs each at 32x6144x4096, cuBLAS's warp-specialized nvjet kernel read HBM at 67.5% of peak
and the `tl` kernel at 56-60%, even with 9 stages in flight. The Gluon GEMM has cuBLAS's
structure (a producer warp issuing TMA, consumer warpgroups issuing wgmma); this script times
it there, with its usual stage cap (gemm_gluon.MAX_STAGES) and with deeper ones (`max_stages`), beside the
tuned `tl` kernel and cuBLAS.

Each kernel is tuned by its own tuner (a fresh tune cache: set HARNESS_CACHE_DIR), checked
against an fp32 reference, then all are re-timed interleaved with the tuners' timer
(kernels/bench_cold.py: a read flush of 2x L2 and a stream hold before every launch), ROUNDS
rounds, median of the rounds. Short bursts, not the sweep's protocol: for choosing what to
build, not for citing as a sweep result.

    python3 scripts/gluon_decode_probe.py 32x6144x4096 16x6144x4096 ... [--stages 6,12]
"""

from __future__ import annotations

import argparse
import statistics

import torch
from harness_kernels.bench_cold import bench_cold
from harness_kernels.triton import gemm_gluon
from harness_kernels.triton.gemm import prepare_matmul

ROUNDS = 3


def _err(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.float() - ref).norm() / ref.norm()).item()


def probe(m: int, n: int, k: int, stage_caps: list[int]) -> dict[str, tuple[float, str]]:
    """{kernel: (median us over the rounds, its config)} for one shape."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    b = w.t()
    ref = a.float() @ w.float().t()
    kernels = {"cublas": (lambda: torch.matmul(a, b), "torch.matmul")}
    tl = prepare_matmul(a, b)
    cfg = tl.config
    tile = f"{cfg['block_m']}x{cfg['block_n']}x{cfg['block_k']} s{cfg['num_stages']}"
    kernels["tl"] = (tl, f"{tile} k{cfg.get('split_k')} p{cfg.get('programs_per_sm')}")
    for cap in stage_caps:
        g = gemm_gluon.prepare_gluon_matmul(a, b, max_stages=cap)
        gc = g.config
        kernels[f"gluon<=s{cap}"] = (
            g,
            f"{gc['block_m']}x{gc['block_n']} s{gc['num_stages']} {gc['schedule']}",
        )
    for name, (fn, _) in kernels.items():
        err = _err(fn(), ref)
        assert err < 3e-2, f"{name} wrong at {m}x{n}x{k}: rel err {err:.3g}"
    times: dict[str, list[float]] = {name: [] for name in kernels}
    for _ in range(ROUNDS):
        for name, (fn, _) in kernels.items():
            times[name].append(bench_cold(fn, a.device) * 1e3)
    return {name: (statistics.median(times[name]), kernels[name][1]) for name in kernels}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="+", help="MxNxK, bf16, B column-major (nt)")
    parser.add_argument("--stages", default="6,12", help="Gluon stage caps to tune under")
    args = parser.parse_args(argv)
    caps = [int(s) for s in args.stages.split(",")]
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}, {props.multi_processor_count} SMs; us, median of {ROUNDS} rounds")
    for shape in args.shapes:
        m, n, k = (int(x) for x in shape.split("x"))
        res = probe(m, n, k, caps)
        base = res["cublas"][0]
        cells = [f"{name} {us:.2f} ({base / us:.3f}x; {how})" for name, (us, how) in res.items()]
        print(f"{shape}: " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
