"""Pick the own CUTLASS GEMM for a shape: a small candidate list per M regime, each candidate
built (in parallel), checked against torch.matmul, then timed with a cold L2 on the real tensors
(bench_cold.py: a read flush and a stream hold before every launch, as the harness times).

The decision is cached per problem key in this process, so the second prepare of a point (the
timing inputs, rotation sets) reuses it without timing, and on disk (tune_cache.py: keyed by GPU,
driver, CUTLASS and nvcc versions, kernel sources and shape), so the next process does too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from .. import capped_retime, tune_cache, tune_seed
from ..bench_cold import bench_cold
from ..exc_text import first_line
from . import build, decode_twin
from .build import KernelError
from .gemm import CONFIGS, DTYPES, WAVE_FILL_WIDTHS, GemmConfig, RunOptions, prepare_gemm

_TOLERANCE = 3e-2  # relative Frobenius error vs torch.matmul in the same precision

Candidate = tuple[GemmConfig, RunOptions]


HOPPER_SMS = 132  # H100 SXM and H200: the wave-fill ranking's default


def wave_fill(m: int, n: int, tile: tuple[int, int], sms: int = HOPPER_SMS) -> float:
    """Share of SM slots busy over the waves a persistent grid of tile[0] x tile[1] tiles takes:
    tiles / (waves * sms). 1.0 when the tile count is a multiple of the SM count."""
    tiles = -(-m // tile[0]) * -(-n // tile[1])
    return tiles / (-(-tiles // sms) * sms)


def wave_fill_configs(m: int, n: int, sms: int = HOPPER_SMS, cluster: str = "") -> list[GemmConfig]:
    """The wave-filling 128-row configs, best fill first (ties: the wider tile, fewer tiles);
    cluster "-c2x1" names their multicast twins."""
    configs = [CONFIGS[f"sm90-coop-128x{w}{cluster}"] for w in WAVE_FILL_WIDTHS]
    return sorted(configs, key=lambda c: (-wave_fill(m, n, c.tile[:2], sms), -c.tile[1]))


def cluster_splits(m: int, n: int, sms: int = HOPPER_SMS) -> list[int]:
    """The split-K counts for 128x144 tiles in 2x1 clusters (sm90-streamk-128x144-c2x1): where
    the tile rows pair up (an even count, so no cluster half idles) and the tiles fill at most
    half the SMs, the largest split that keeps the units within one wave, and half of it (cuBLAS
    splits 32 tiles 4 ways at 256x2304x16384); none elsewhere."""
    rows, cols = -(-m // 128), -(-n // 144)
    tiles = rows * cols
    if rows % 2 or 2 * tiles > sms:
        return []
    most = min(sms // tiles, 8)
    return sorted({most, max(most // 2, 2)}, reverse=True)


def heuristic_raster(m: int, n: int, config: GemmConfig, swizzle: int = 1) -> str:
    """The raster CUTLASS's persistent scheduler picks under its heuristic (CUTLASS 4.2,
    PersistentTileSchedulerSm90Params: initialize, get_log_swizzle_size and
    get_rasterization_order): tile counts rounded up to whole clusters, then to whole swizzle
    groups of clusters, and along M when the grid then has more tile columns than rows, else
    along N."""
    cm, cn = config.cluster
    rows = math.ceil(math.ceil(m / config.tile[0]) / cm) * cm
    cols = math.ceil(math.ceil(n / config.tile[1]) / cn) * cn
    short = min(rows, cols)
    if swizzle >= 8 and short >= 6:
        group = 8
    elif swizzle >= 4 and short >= 3:
        group = 4
    elif swizzle >= 2 and short >= 2:
        group = 2
    else:
        group = 1
    rows = math.ceil(rows / (group * cm)) * group * cm
    cols = math.ceil(cols / (group * cn)) * group * cn
    return "along-m" if cols > rows else "along-n"


def flipped_raster(m: int, n: int, config: GemmConfig, swizzle: int = 1) -> str:
    """The raster the heuristic passes over at this swizzle (the other one of the two)."""
    return "along-n" if heuristic_raster(m, n, config, swizzle) == "along-m" else "along-m"


def sm90_candidates(
    m: int, n: int, k: int, dtype: str, sms: int = HOPPER_SMS, b_col: bool = True
) -> list[Candidate]:
    """Candidate (config, options) for an SM90 GEMM with M rows, most promising first; only
    configs with a library for `dtype` in the layout (GemmConfig.unbuildable: no tf32 where the
    tile cannot be built, no N split with B row-major)."""
    cands = _sm90_candidates(m, n, k, dtype, sms)
    return [(c, o) for c, o in cands if c.unbuildable(dtype, b_col) is None]


def _sm90_candidates(m: int, n: int, k: int, dtype: str, sms: int) -> list[Candidate]:
    """Candidate (config, options) for an SM90 GEMM with M rows, most promising first.

    Decode (M <= 64) is a stream of the weights: swap A and B so M sits on WGMMA's narrow N side,
    and split K (stream-K or split-K) until every SM streams its share. Mid M has a few waves of
    output tiles at most: stream-K, or a tile width that fills the last wave (the wave-fill
    configs, all timed: their fill ranks them, the clock decides). Large M is compute-bound: big
    tiles, clusters, L2 rasterization.
    """
    C, O = CONFIGS, RunOptions
    heuristic, dp = O(), O("data-parallel")
    if m <= 64:
        width = 16 if m <= 16 else 32 if m <= 32 else 64
        # 64-row tiles: N/64 CTAs stream the weights with no split-K and nothing to clear
        # between launches; for small N, split K across 128-row tiles instead.
        cands = [(C[f"sm90-swapab-pingpong-64x{width}"], O())]
        if width <= 32:
            # K-deep twins (gemm.py) only for 16- and 32-token tiles: at M 33-64 the token tile
            # is 64 wide, a 64x64x256 stage takes 64 KB and leaves three stages (not measured).
            cands.append((C[f"sm90-swapab-pingpong-64x{width}-k256"], O()))
        if m > 16 and 2 * -(-n // 64) <= sms:
            # Half-width token tiles: two rows of them double the CTAs while they still fit one
            # wave (N 4096: 128 CTAs where 64 leave half the SMs idle). cuBLAS runs 64x32
            # swapped tiles at M 64, N 4096 (H200 13.7 us against our 64x64's 14.5).
            cands.append((C[f"sm90-swapab-pingpong-64x{width // 2}"], O()))
        swap = C[f"sm90-swapab-128x{width}"]
        # Fewer 128-wide tiles than SMs: one CTA per tile (data-parallel, and the heuristic
        # mode, which chose the same at N 10240) leaves SMs idle, and such a partial grid's time
        # is bimodal on the H200: the 80-CTA kernel at N 10240 timed 48-51 us or 60-63 us, the
        # 64-CTA one at N 8192 38-39 or 50-55 us, at 1980 MHz every time: between runs, and
        # once within one process (48.9 -> 63.5 us over ~6 s), so tuner and harness disagreed
        # by up to 27% on it. The flush in front of it does not decide which (it held steady
        # after either flush: scripts/partial_grid_states.py). Stream-K forced runs one
        # persistent CTA per SM instead, as the split-K candidates do.
        # Yet the vendor libraries run decode one CTA per weight tile: cuBLASLt's fp8 kernel at
        # N 10240 is 80 CTAs of 128x8 (H200, 1x10240x8192: 25.1 us one CTA per tile, 28.7
        # stream-K, cuBLASLt 24.4; results/h200/_logs/fp8-explore), cuBLAS's bf16 kernels are
        # swapped tiles in 4x1 clusters that multicast the token tile. So those are timed too,
        # alone and clustered, beside stream-K; a bimodal partial grid is the sweep's spread
        # guard's to flag.
        one_per_tile = [
            (C[f"sm90-swapab-dp-128x{width}{cluster}"], O()) for cluster in ("", "-c2x1", "-c4x1")
        ]
        if -(-n // swap.tile[0]) < sms:
            cands += [(swap, O("stream-k")), *one_per_tile]
        else:
            cands += [(swap, heuristic), (swap, dp), *one_per_tile[1:]]
        cands += [(swap, O("split-k", 2)), (swap, O("split-k", 4))]
        return cands + [(swap, O("split-k", 8))] if k >= 8192 else cands
    fill = [(c, O(swizzle=1)) for c in wave_fill_configs(m, n, sms)]
    # Two or more 128-row tiles: the 2x1-cluster twins multicast each weight tile to a pair.
    if m > 128:
        fill += [(c, O(swizzle=1)) for c in wave_fill_configs(m, n, sms, "-c2x1")]
    if m <= 256:
        sk = C["sm90-streamk-128x128"]
        clustered = [
            (C["sm90-streamk-128x144-c2x1"], O("split-k", s)) for s in cluster_splits(m, n, sms)
        ]
        # fp8: ping-pong pairs sharing the activation tile; H200 128x28672x4096: 35.3 us against
        # 36.9 for the best of the rest (cuBLASLt 35.7; results/h200/_logs/fp8-explore).
        pairs = [(C["sm90-pingpong-128x128-c1x2"], O())] if dtype == "fp8_e4m3" else []
        return [
            (sk, heuristic),
            (sk, dp),
            (sk, O("split-k", 2)),
            (C["sm90-swapab-128x64"], heuristic),
            (C["sm90-swapab-128x64-c1x2"], heuristic),
            (C["sm90-pingpong-64x96-c2x1"], O(swizzle=1)),
            (C["sm90-pingpong-64x128-c2x1"], O(swizzle=1)),
            (C["sm90-swapab-pingpong-64x64"], O()),
            (C["sm90-pingpong-128x128"], O(swizzle=1)),
            # two tile rows share each weight tile in the 2x1 cluster: none at M 128
            *([(C["sm90-coop-128x128-c2x1"], O(swizzle=1))] if m > 128 else []),
            *pairs,
            *fill,
            *clustered,
        ]
    # The N-split 128x320 tile (cuBLAS's tile at N 10240, gemm.py) with 16-byte stores, where
    # its 320-wide tiles fill the waves. Its 2-byte-store original lost at all 16 shapes of M
    # 512-1024 (1.15-2.43x the fastest candidate, session 52) and stays out. The st16 twin in
    # one H200 run (results/h200/gemm_coopn_st16*, session 55): 1.010-1.025x cuBLAS at M 1024
    # and 2048 for N 10240 and 57344 (all 0.96-0.98 fill), 0.995x at 512x10240 where ping-pong
    # 128x128 took 0.835x; at N 8192 (26 tile columns, 0.79 fill) 0.86-0.89x.
    split = C["sm90-coopn-128x320-c2x1-st16"]
    fills_waves = wave_fill(m, n, split.tile[:2], sms) >= 0.9
    if m <= 1024:
        return [
            (C["sm90-streamk-128x128"], heuristic),
            (C["sm90-pingpong-128x128"], O(swizzle=1)),
            (C["sm90-coop-128x128-c2x1"], O(swizzle=1)),
            (C["sm90-coop-128x256"], O(swizzle=1)),
            (C["sm90-streamk-128x256"], heuristic),
            *([(split, heuristic)] if fills_waves else []),
            *fill,
        ]
    # Large M runs at the power cap, where wider raster groups win (less HBM traffic per GEMM,
    # so a higher clock: capped_retime.py): every big tile at swizzle 1, 4 and 8. The ping-pong
    # 128x128 never came within 7% here (H100 gemm_llama-pp, and 14-20% behind at the cap).
    # cuBLAS's large-M nvjet kernels raster either way per shape (h / v in their names:
    # results/h100/_logs/session41/cublas_kernels_large.txt), where CUTLASS's heuristic always
    # rasters along the longer side: the widest swizzle of each big tile is timed the other way too.
    coop = (C["sm90-coop-128x256"], C["sm90-coop-256x128"])
    return [
        *((c, O(swizzle=s)) for c in coop for s in (1, 4, 8)),
        *((c, O(swizzle=8, raster=flipped_raster(m, n, c, swizzle=8))) for c in coop),
        (C["sm90-streamk-128x256"], heuristic),
        (C["sm90-streamk-128x256"], O(swizzle=4)),
        *([(split, heuristic), (split, O(swizzle=4))] if fills_waves else []),
    ]


def all_sm90_configs() -> list[GemmConfig]:
    """Every SM90 config some candidate list can name (what a sweep prebuilds)."""
    return [c for c in CONFIGS.values() if c.kernel == "sm90"]


@dataclass
class TuneResult:
    """What tuning decided for one problem key."""

    config: GemmConfig  # the chosen config
    options: RunOptions
    timings_ms: dict[str, float] = field(default_factory=dict)  # candidate -> median ms
    # the contenders re-timed at the power cap (capped_retime.py) -> mean ms; they decided
    capped_ms: dict[str, float] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)  # candidate -> reason
    # "tuned" (timed in this process), "seeded" (timed here, another GPU's best few only:
    # tune_seed.py) or "cache" (read from disk)
    source: str = "tuned"
    cache_key: str = ""  # tune_cache.TuneKey.digest of the disk entry, when there is one


# The kernel files a tuned CUTLASS GEMM choice depends on (a change to any of them re-tunes).
TUNE_SOURCES = (
    "cutlass/gemm*.py",
    "cutlass/build.py",
    "cutlass/sm90_gemm.cu",
    "cutlass/sm90_quad_store_epilogue.h",
    "cutlass/common.h",
    "bench_cold.py",  # how candidates are timed decides which one wins
    "capped_retime.py",
    "stream_hold.py",
)


def stored_key(
    a: torch.Tensor, b: torch.Tensor, candidates: list[Candidate], fp8_alpha: bool
) -> tune_cache.TuneKey | None:
    """The disk-cache key of the decision for a @ b (None when the cache is off)."""
    headers = build.find_headers()
    toolchain = f"cutlass {headers.version if headers else 'none'}, nvcc {build.nvcc_version()}"
    (m, k), n = a.shape, b.shape[1]
    layout = "nt" if b.stride(0) == 1 and n > 1 else "nn"
    problem = (m, n, k, str(a.dtype), layout, "alpha" if fp8_alpha else "")
    device = torch.cuda.get_device_name(a.device)
    return tune_cache.make_key(
        "cutlass-gemm", device, problem, candidates, toolchain=toolchain, sources=TUNE_SOURCES
    )


_CACHE: dict[tuple, TuneResult] = {}


def clear_cache() -> None:
    _CACHE.clear()


def _rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    err = torch.linalg.vector_norm((out.float() - ref.float()).flatten()).item()
    return err / max(torch.linalg.vector_norm(ref.float().flatten()).item(), 1e-30)


def tune(
    a: torch.Tensor,
    b: torch.Tensor,
    candidates: list[Candidate],
    reference: Callable[[], torch.Tensor],
    key: tuple,
    alpha: torch.Tensor | None = None,
) -> TuneResult:
    """The fastest candidate that builds, plans and matches `reference()` ([M, N]); cached by
    key in this process and on disk (stored_key), so the reference is only computed and the
    candidates only built when tuning actually runs."""
    if key in _CACHE:
        return _CACHE[key]
    stored = stored_key(a, b, candidates, alpha is not None)
    if (found := tune_cache.load(stored, candidates)) is not None:
        assert stored is not None  # load() finds nothing without a key
        config, options = candidates[found.index]
        rec = found.record
        result = TuneResult(
            config,
            options,
            dict(rec.get("timings_ms", {})),
            dict(rec.get("capped_ms", {})),
            dict(rec.get("rejected", {})),
            "cache",
            stored.digest,
        )
        _CACHE[key] = result
        return result
    expected = reference()
    dtype = DTYPES[a.dtype][0]
    b_col = b.stride(0) == 1 and b.shape[1] > 1
    names = [_name(c) for c in candidates]
    # every candidate, or with seeding on (tune_seed.py) another GPU's best few and, where the
    # decode twin rule applies, their twins (the rule reads the twin's burst: decode_twin.py)
    order = tune_seed.order(stored, names)
    if (
        len(order) < len(candidates)
        and a.shape[0] <= decode_twin.MAX_M
        and dtype in decode_twin.DTYPES
    ):
        twins = {decode_twin.twin_name(candidates[i][0].name) for i in order} - {None}
        order = tune_seed.widen(
            stored, order, [i for i, c in enumerate(candidates) if c[0].name in twins]
        )
    timings: dict[str, float] = {}
    rejected: dict[str, str] = {}
    best: Candidate | None = None
    unbuildable: list[build.BuildError] = []

    def time_each(timing: list[Candidate]) -> None:
        nonlocal best
        build.build_many(c.spec(dtype, b_col) for c, _ in timing)  # parallel nvcc, once
        for config, options in timing:
            name = _name((config, options))
            try:
                launch = prepare_gemm(a, b, config, alpha=alpha, options=options)
                err = _rel_err(launch(), expected)
                if not err <= _TOLERANCE:
                    rejected[name] = f"rel_err {err:.3g}"
                    continue
                timings[name] = bench_cold(launch, a.device)
                # Checked again after many launches: a split-K flag left set would show up here.
                if not (err := _rel_err(launch(), expected)) <= _TOLERANCE:
                    rejected[name] = f"rel_err {err:.3g} after timing"
                    del timings[name]
                    continue
            except build.BuildError as e:
                rejected[name] = first_line(e)
                unbuildable.append(e)
                continue
            except (KernelError, ValueError) as e:
                rejected[name] = first_line(e)
                continue
            if best is None or timings[name] < timings[_name(best)]:
                best = (config, options)

    time_each([candidates[i] for i in order])
    if best is None and len(order) < len(candidates):  # no seeded candidate works here: all
        tune_seed.widen(stored, order, range(len(candidates)))
        time_each([c for i, c in enumerate(candidates) if i not in order])
    if best is None:
        if len(unbuildable) == len(candidates):  # every one was tried by now
            raise unbuildable[0]  # no toolchain and nothing cached: the caller skips the point
        raise KernelError(f"no candidate worked: {rejected}", 7)
    capped: dict[str, float] = {}
    by_name = {_name(c): c for c in candidates}
    if names := with_leanest(capped_retime.contenders(timings), timings, by_name):
        try:
            launches = {
                name: prepare_gemm(a, b, by_name[name][0], alpha=alpha, options=by_name[name][1])
                for name in names
            }
            capped = capped_retime.retime(launches, a.device)
        except (KernelError, ValueError, torch.OutOfMemoryError) as e:  # the burst decides
            rejected["capped re-time"] = first_line(e)
            capped = {}
        else:
            best = by_name[capped_retime.winner(capped, names[0])]
    digest = stored.digest if stored else ""
    source = "seeded" if tune_cache.noted_seed(stored) else "tuned"
    result = TuneResult(best[0], best[1], timings, capped, rejected, source, digest)
    _CACHE[key] = result
    index = candidates.index(best)
    record = dict(timings_ms=timings, capped_ms=capped, rejected=rejected)
    tune_cache.save(stored, candidates, index, best_ms(result), record)
    return result


def _name(candidate: Candidate) -> str:
    """A candidate's name in the decision's timings (and a seeding entry's, tune_seed.py)."""
    config, options = candidate
    return f"{config.name}:{options}"


def operand_intensity(config: GemmConfig) -> float:
    """MACs per operand element a CTA loads per K step, tm*tn / (tm + tn): the wider the tile,
    the less data it moves per MAC, and at the power cap the less energy it spends."""
    tm, tn = config.tile[:2]
    return tm * tn / (tm + tn)


def with_leanest(
    names: list[str], timings: dict[str, float], by_name: dict[str, Candidate]
) -> list[str]:
    """The capped re-time's contenders plus the leanest candidate (operand_intensity) within
    capped_retime.BAND of the burst winner, when no contender is as lean ([] stays []).

    At the cap the bursts' order of tile widths inverts: on an H200 (results/h200/README.md,
    session 50; pairs re-timed within one tuning, M 128-1024) the capped / burst time of
    128x176 against stream-K 128x128 was 0.895 (median of 6 shapes), of 128x256 against it
    0.915 (3), of 128x176 against ping-pong 128x128 0.933 (4). So at 1024x8192x8192 the
    128x256 tile, 7.6% behind stream-K 128x128 in the burst, was fifth and never re-timed, while
    the sweep timed the stream-K pick at 0.93x cuBLAS, which runs a 128x256 tile there."""
    if not names:
        return names
    leanest = max(operand_intensity(by_name[n][0]) for n in names)
    limit = timings[names[0]] * capped_retime.BAND
    lean = [
        (-operand_intensity(by_name[n][0]), ms, n)
        for n, ms in timings.items()
        if ms <= limit and n not in names and operand_intensity(by_name[n][0]) > leanest
    ]
    return [*names, min(lean)[2]] if lean else names


def best_ms(result: TuneResult) -> float:
    """The chosen candidate's tuner time: at the cap where it was re-timed there, else its burst."""
    if result.capped_ms:
        return result.capped_ms[f"{result.config.name}:{result.options}"]
    return min(result.timings_ms.values()) if result.timings_ms else math.nan
