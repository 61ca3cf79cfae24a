"""Which Gluon GEMM tiles win where cuBLAS leads the mid band? A probe.

The own Triton tuner times the MAX_CANDIDATES best modelled tiles of each Gluon schedule
(kernels/triton/gemm_gluon.py). This script pins each of the best `--top` of every schedule in
turn, under each stage cap of `--stages`, beside cuBLAS (with `--fp8`: cuBLASLt's `_scaled_mm`
with and without fast accumulation, per-tensor scales, bf16 out) and the production pick
(prepare_matmul: the tuned `tl` kernel or the tuned Gluon one), so that one call shows whether
a shape's best tile is in the space at all and whether the model ranks it among the timed few.

Every kernel is checked against an fp32 reference first (a wrong one is reported, not timed),
then all are timed interleaved with the tuners' timer (kernels/bench_cold.py: a read flush of
2x L2 and a stream hold before every launch), ROUNDS rounds, median of the rounds. Short bursts,
not the sweep's protocol: for choosing what to build, not for citing as a sweep result. With
`--capped` each reading is the capped re-time's instead (bench_capped: 150 ms of warm-up, then
100 ms timed, at the 700 W cap for a heavy GEMM), the ranking the tuners' re-time sees there
(session 60, H100: at 2048x57344x8192 the bursts' Gluon winner ran 0.940x cuBLAS in the sweep).

    python3 scripts/gluon_tile_probe.py 512x10240x8192 256x6144x4096 [--top 6] [--stages 6,8]
    python3 scripts/gluon_tile_probe.py 512x10240x8192 --fp8   # against cuBLASLt's _scaled_mm
    python3 scripts/gluon_tile_probe.py 2048x57344x8192 --capped   # rank them at the power cap
    python3 scripts/gluon_tile_probe.py 512x4608x3584 --extra-parts 128+16,64+16 --capped

`--extra-parts` pins tiles of N parts the tuner does not offer (their names end in '+'), every
legal one of each: widths such as 144 (128 + 16) and 80 (64 + 16) split N 4608 into 32 and 58
tiles, the one-wave counts cuBLAS's 144- and 80-wide kernels run at Qwen2.5-7B's fused QKV
weight (session 78), where the offered widths leave a wave short or over. A probe first, so that
the tuner's candidates (and its stored decisions, keyed by gemm_gluon.py) change only for a tile
that wins here.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import statistics
from collections.abc import Callable, Iterator
from typing import Any

import torch
from harness_kernels.bench_cold import bench_capped, bench_cold
from harness_kernels.triton import gemm_gluon
from harness_kernels.triton.gemm import prepare_matmul

from harness.problems.gemm import quantize_fp8

ROUNDS = 3
MAX_REL_ERR = 3e-2


def _err(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.float() - ref).norm() / ref.norm()).item()


def _pick_name(cfg: dict[str, Any]) -> str:
    """The production pick as provider_config would name it."""
    tile = f"{cfg['block_m']}x{cfg['block_n']}"
    if "schedule" in cfg:  # a Gluon launch's config (prepare_matmul renames its kernel)
        return f"pick gluon {tile}s{cfg['num_stages']} {cfg['schedule']}"
    return f"pick tl {tile}x{cfg['block_k']}s{cfg['num_stages']} k{cfg.get('split_k')}"


def pinned_configs(
    m: int, n: int, k: int, elem: int, sms: int, top: int, caps: list[int], c_elem: int = 2
) -> list[tuple[str, dict[str, Any], int]]:
    """[(name, Gluon config, its stage cap)]: the `top` best modelled tiles of each schedule
    (with their deep twins) under each cap in turn, each tile and depth once; a '*' on the names
    the tuner times at this shape (gemm_gluon's defaults). `elem`, `c_elem`: bytes of an input
    and of an output element (fp8: 1 and 2)."""
    configs = gemm_gluon.gluon_gemm_configs
    timed = {gemm_gluon.config_name(c) for c in configs(m, n, k, elem, c_elem, sms)}
    out: list[tuple[str, dict[str, Any], int]] = []
    seen: set[str] = set()
    for cap in caps:
        for cfg in configs(m, n, k, elem, c_elem, sms, cap, top):
            name = gemm_gluon.config_name(cfg)  # names the stages: a deeper cap that fits no
            if name in seen:  # more of them repeats a tile
                continue
            seen.add(name)
            out.append((name + ("*" if name in timed else ""), cfg, cap))
    return out


@contextlib.contextmanager
def offered_parts(parts: tuple[tuple[int, ...], ...]) -> Iterator[None]:
    """gemm_gluon as if it offered only these N parts (BN0, BN1[, BN2]), while the block runs: its
    candidate lists, and prepare_gluon_matmul's check that a pinned tile is one, read them."""
    kept = gemm_gluon.N_PARTS
    gemm_gluon.N_PARTS = parts
    try:
        yield
    finally:
        gemm_gluon.N_PARTS = kept


def extra_configs(
    m: int,
    n: int,
    k: int,
    elem: int,
    sms: int,
    parts: tuple[tuple[int, ...], ...],
    caps: list[int],
    c_elem: int = 2,
) -> list[tuple[str, dict[str, Any], int]]:
    """[(name + '+', Gluon config, its stage cap)]: every legal tile of these N parts (each
    schedule, slice and accumulator limit as gemm_gluon's own), under each cap, each tile and
    depth once. None of them is a tile the tuner offers."""
    out: list[tuple[str, dict[str, Any], int]] = []
    seen = {  # what the tuner offers (its wave tiles among them) is listed as its own
        gemm_gluon.config_name(cfg)
        for cap in caps
        for cfg in gemm_gluon.gluon_gemm_configs(m, n, k, elem, c_elem, sms, cap)
    }
    with offered_parts(parts):
        for cap in caps:
            for cfg in gemm_gluon.gluon_gemm_configs(m, n, k, elem, c_elem, sms, cap, None):
                if (name := gemm_gluon.config_name(cfg)) not in seen:
                    seen.add(name)
                    out.append((name + "+", cfg, cap))
    return out


def parse_parts(text: str) -> tuple[tuple[int, ...], ...]:
    """'128+16,64+32+16' -> ((128, 16), (64, 32, 16)); two or three parts, each a power of two
    (wgmma's N and the TMA box; Triton's shapes) of at least 8, each smaller than the one before,
    the first at least 16, as gemm_gluon's N_PARTS and WAVE_PARTS are."""
    parts = []
    for item in filter(None, text.split(",")):
        try:
            p = tuple(int(x) for x in item.split("+"))
        except ValueError:
            p = ()
        ok = 1 <= len(p) <= 3 and p[0] >= 16 and all(x >= 8 and not x & (x - 1) for x in p)
        if not ok or any(b >= a for a, b in zip(p, p[1:], strict=False)):
            raise SystemExit(
                f"--extra-parts: {item!r}; allowed: BN0[+BN1[+BN2]], powers of two >= 8, "
                "each smaller than the one before"
            )
        parts.append(p if len(p) > 1 else (p[0], 0))
    return tuple(parts)


VENDORS = ("cublas", "scaled_mm", "scaled_mm-fastaccum")


def kernels_for(
    a: torch.Tensor,
    b: torch.Tensor,
    top: int,
    caps: list[int],
    scales: tuple | None = None,
    parts: tuple[tuple[int, ...], ...] = (),
) -> dict[str, Callable[[], Any]]:
    """{name: launch}: the vendor rows (cuBLAS; fp8, with `scales`: cuBLASLt's `_scaled_mm`
    with and without fast accumulation), the production pick, then each pinned Gluon
    candidate (pinned_configs) in model order, then the tiles of `parts` (extra_configs)."""
    m, k = a.shape
    n = b.shape[1]
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    sa, sb = scales or (None, None)
    out: dict[str, Callable[[], Any]] = {}
    if scales is None:
        out["cublas"] = lambda: torch.matmul(a, b)
    else:
        for name, fast in (("scaled_mm", False), ("scaled_mm-fastaccum", True)):
            out[name] = functools.partial(
                torch._scaled_mm, a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                use_fast_accum=fast,
            )  # fmt: skip
    pick = prepare_matmul(a, b, a_scale=sa, b_scale=sb)
    out[_pick_name(pick.config)] = pick
    for name, cfg, cap in pinned_configs(m, n, k, a.element_size(), sms, top, caps):
        out[name] = gemm_gluon.prepare_gluon_matmul(
            a, b, a_scale=sa, b_scale=sb, tune=False, config=cfg, max_stages=cap,
            per_schedule=top,
        )  # fmt: skip
    for name, cfg, cap in extra_configs(m, n, k, a.element_size(), sms, parts, caps):
        with offered_parts(parts):
            out[name] = gemm_gluon.prepare_gluon_matmul(
                a, b, a_scale=sa, b_scale=sb, tune=False, config=cfg, max_stages=cap,
                per_schedule=None,
            )  # fmt: skip
    return out


def probe(
    m: int,
    n: int,
    k: int,
    top: int,
    caps: list[int],
    fp8: bool = False,
    timer: Callable[[Callable[[], Any], torch.device], float] = bench_cold,
    parts: tuple[tuple[int, ...], ...] = (),
) -> list[tuple[str, float | str]]:
    """[(kernel, median us or why it was not timed)] for one shape, in kernels_for's order;
    `timer` takes each reading (bench_cold, or bench_capped for the ranking at the cap)."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen)
    scales = None
    if fp8:
        (a, sa), (w, sb) = quantize_fp8(a.float()), quantize_fp8(w.float())
        scales = (sa, sb)
        ref = (a.float() * sa) @ (w.float() * sb).t()
    else:
        ref = a.float() @ w.float().t()
    kernels = kernels_for(a, w.t(), top, caps, scales, parts)
    wrong: dict[str, str] = {}
    for name, fn in kernels.items():
        err = _err(fn(), ref)
        if not err < MAX_REL_ERR:
            wrong[name] = f"WRONG (rel err {err:.3g})"
    times: dict[str, list[float]] = {name: [] for name in kernels if name not in wrong}
    for _ in range(ROUNDS):
        for name in times:
            times[name].append(timer(kernels[name], a.device) * 1e3)
    return [(name, wrong.get(name) or statistics.median(times[name])) for name in kernels]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="+", help="MxNxK, B column-major (nt)")
    parser.add_argument("--fp8", action="store_true", help="fp8 e4m3 (per-tensor scales)")
    parser.add_argument("--top", type=int, default=6, help="tiles per schedule, model order")
    parser.add_argument("--stages", default="6", help="Gluon stage caps (comma-separated)")
    parser.add_argument("--capped", action="store_true", help="time at the power cap")
    parser.add_argument(
        "--extra-parts", default="", help="N parts the tuner does not offer, e.g. 128+16,64+16"
    )
    args = parser.parse_args(argv)
    parts = parse_parts(args.extra_parts)
    caps = [int(s) for s in args.stages.split(",")]
    props = torch.cuda.get_device_properties(0)
    timer = bench_capped if args.capped else bench_cold
    how = "capped readings (bench_capped)" if args.capped else "bursts (bench_cold)"
    print(
        f"{props.name}, {props.multi_processor_count} SMs; us, median of {ROUNDS} rounds of "
        f"{how}; ratios against the fastest vendor row; * = among the tiles the tuner times"
        + ("; + = not offered by the tuner (--extra-parts)" if parts else "")
    )
    for shape in args.shapes:
        m, n, k = (int(x) for x in shape.split("x"))
        rows = probe(m, n, k, args.top, caps, args.fp8, timer, parts)
        base = fastest_vendor(rows)
        print(f"{shape}{' fp8 e4m3' if args.fp8 else ''}:")
        for name, us in rows:
            cell = us if isinstance(us, str) else f"{us:8.2f} us  {base / us:.3f}x vendor"
            print(f"  {name:34s} {cell}", flush=True)


def fastest_vendor(rows: list[tuple[str, float | str]]) -> float:
    """The reference of a shape, as `harness gaps` takes it: its fastest vendor row (fp8: the
    faster `_scaled_mm`, with or without fast accumulation)."""
    times = [us for name, us in rows if name in VENDORS and not isinstance(us, str)]
    if not times:
        raise SystemExit(f"no vendor row timed: {rows}")
    return min(times)


if __name__ == "__main__":
    main()
