"""The own-cutlass providers on the CPU: registration, availability reasons, what each supports,
and which libraries a sweep's prebuild would compile (nothing is compiled here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness_kernels.cutlass import build
from harness_kernels.cutlass.gemm import CONFIGS, layout_of

from harness.device import DeviceInfo, get_device
from harness.problems import AttentionProblem, GemmProblem
from harness.providers import load_all
from harness.providers import own_cutlass as oc

H200 = DeviceInfo(
    "cuda", 0, "nvidia", "NVIDIA H200", None, "sm_90", (9, 0), 132, 50 << 20, 141 << 30, None, None
)
A100 = DeviceInfo(
    "cuda", 0, "nvidia", "NVIDIA A100", None, "sm_80", (8, 0), 108, 40 << 20, 80 << 30, None, None
)


@pytest.fixture
def registry():
    return load_all()


def test_every_config_and_the_attention_kernel_are_registered(registry):
    gemm = registry.names("gemm")
    assert "own-cutlass" in gemm and "own-cutlass" in registry.names("attention")
    for name in CONFIGS:
        assert f"own-cutlass-{name}" in gemm
    for name in ("sm90-coop-128x256", "sm90-pingpong-128x128", "sm80-multistage"):
        assert f"own-cutlass-{name}" in gemm


def test_compute_capability_floors(registry):
    sm90 = registry.get("gemm", "own-cutlass")
    sm80 = registry.get("gemm", "own-cutlass-sm80-multistage")
    fmha = registry.get("attention", "own-cutlass")
    assert sm90.why_unavailable(A100).startswith("needs compute capability >= 9.0")
    assert sm80.min_cc == (8, 0) and fmha.min_cc == (8, 0)
    cpu = get_device("cpu")
    assert sm90.why_unavailable(cpu).startswith("runs on nvidia")


def test_unavailable_without_toolchain_or_cache_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(build, "find_nvcc", lambda: None)
    monkeypatch.setenv("HARNESS_CUTLASS_CACHE", str(tmp_path / "empty"))
    why = oc._available()
    assert why.startswith("nvcc not found") and "no cached builds" in why and "\n" not in why
    # A carried cache makes the provider available: prepare loads the matching build.
    entry = tmp_path / "empty" / "gemm-x-0123"
    entry.mkdir(parents=True)
    (entry / "lib.so").write_bytes(b"")
    assert oc._available() is None


def test_gemm_supports_reasons(registry):
    own = registry.get("gemm", "own-cutlass")
    ok = GemmProblem(m=1, n=4096, k=4096, dtype="bf16", layout="nt")
    assert own.supports(ok, H200) is None
    assert own.supports(GemmProblem(m=16384, n=57344, k=8192, layout="nt"), H200) is None
    assert "batched" in own.supports(GemmProblem(m=64, n=64, k=64, batch=2), H200)
    assert "K=100" in own.supports(GemmProblem(m=64, n=64, k=100), H200)
    assert "N=12" in own.supports(GemmProblem(m=64, n=12, k=64), H200)
    assert own.supports(GemmProblem(m=64, n=64, k=64, dtype="fp32"), H200).startswith("takes")
    fp8_nn = GemmProblem(m=64, n=64, k=64, dtype="fp8_e4m3", layout="nn")
    assert "layout nt" in own.supports(fp8_nn, H200)
    sm80 = registry.get("gemm", "own-cutlass-sm80-multistage")
    assert sm80.supports(GemmProblem(m=64, n=64, k=64, dtype="fp8_e4m3", layout="nt"), A100)
    # tf32 takes both layouts (nn through CUTLASS's register-A mainloop) and fp32 rows of 4
    for layout in ("nt", "nn"):
        assert (
            own.supports(GemmProblem(m=128, n=6144, k=4096, dtype="tf32", layout=layout), H200)
            is None
        )
    assert own.supports(GemmProblem(m=64, n=36, k=64, dtype="tf32"), H200) is None
    assert "N=34" in own.supports(GemmProblem(m=64, n=34, k=64, dtype="tf32"), H200)
    assert sm80.supports(GemmProblem(m=64, n=64, k=64, dtype="tf32"), A100).startswith("takes")


def test_attention_supports_reasons(registry):
    fmha = registry.get("attention", "own-cutlass")
    prefill = AttentionProblem(4, 32, 8, 4096, 4096, 128, causal=True)
    assert fmha.supports(prefill, H200) is None
    assert fmha.supports(AttentionProblem(1, 32, 8, 1024, 2048, 64), A100) is None
    assert "no partial tiles" in fmha.supports(AttentionProblem(1, 32, 8, 1, 4096, 128), H200)
    assert "head_dim" in fmha.supports(AttentionProblem(1, 8, 8, 128, 128, 96), H200)
    paged = AttentionProblem(1, 8, 8, 128, 256, 128, kv_layout="paged", page_size=64)
    assert "dense" in fmha.supports(paged, H200)
    wgmma = registry.get("attention", "own-cutlass-sm90")
    assert wgmma.min_cc == (9, 0) and wgmma.supports(prefill, H200) is None
    assert "sm_90 only" in wgmma.supports(prefill, A100)
    assert "no partial tiles" in wgmma.supports(AttentionProblem(1, 32, 8, 1, 4096, 128), H200)


def test_specs_for_a_llama_sweep_cover_every_candidate():
    problems = [
        GemmProblem(m=m, n=4096, k=4096, dtype="bf16", layout="nt") for m in (1, 32, 200, 800, 8192)
    ]
    labels = {s.label for s in oc.specs_for(problems, ["own-cutlass"])}
    assert "gemm-sm90-swapab-128x16-bf16-nt" in labels
    assert "gemm-sm90-coop-128x256-bf16-nt" in labels
    assert "gemm-sm90-streamk-128x128-bf16-nt" in labels
    assert not any("sm80" in label for label in labels)
    everything = {s.label for s in oc.specs_for(problems)}
    assert "gemm-sm80-multistage-bf16-nt" in everything and len(everything) == len(CONFIGS)
    attn = [AttentionProblem(16, 32, 8, 1024, 1024, d, causal=c) for d in (64, 128) for c in (0, 1)]
    ws = ("fa3-no-pingpong", "fa3-no-overlap", "fa3-no-pingpong-no-overlap")
    ws += ("fa3-not-persistent", "fa3-no-st16", "fa3-static", "fa3-exp-emu", "fa3-t128")
    # fa3 on FA3's tiles per problem (causal 1k at D 64 and causal D 128 on 128x128), fa3-tiles
    # on FA3's non-causal shapes everywhere
    tiled = {"fmha-fa3-bf16-d64-192x128", "fmha-fa3-bf16-d64-128x128", "fmha-fa3-bf16-d128-128x176"}
    tiled |= {"fmha-fa3-bf16-d128-128x128"}
    tiled |= {"fmha-fa3-tiles-bf16-d64-192x128", "fmha-fa3-tiles-bf16-d128-128x176"}
    assert {s.label for s in oc.specs_for(attn)} == tiled | {
        f"fmha-{kernel}-bf16-d{d}" for kernel in ("sm80", "sm90", *ws) for d in (64, 128)
    }
    assert {s.label for s in oc.specs_for(attn, ["own-cutlass-sm90"])} == {
        "fmha-sm90-bf16-d64",
        "fmha-sm90-bf16-d128",
    }


def test_warp_specialized_fmha_rungs(registry):
    """own-cutlass-fa3 and its rungs: sm_90 only, head_dim up to 256, 128-key tiles up to
    head_dim 128 (64 at 256), any length (partial tiles), each library built with its own feature
    switches; fa3-tiles on FlashAttention-3's tile shapes."""
    from harness_kernels.cutlass.fmha import fmha_spec

    prefill = AttentionProblem(4, 32, 8, 4096, 4096, 128, causal=True)
    wide = AttentionProblem(4, 32, 8, 4096, 4096, 256, causal=False)
    names = ["own-cutlass-fa3", *(f"own-cutlass-fa3-{r}" for r in ("no-pingpong", "no-overlap"))]
    names += ["own-cutlass-fa3-no-pingpong-no-overlap", "own-cutlass-fa3-not-persistent"]
    names += ["own-cutlass-fa3-no-st16", "own-cutlass-fa3-static", "own-cutlass-fa3-exp-emu"]
    names += ["own-cutlass-fa3-tiles", "own-cutlass-fa3-t128"]
    for name in names:
        p = registry.get("attention", name)
        assert p.min_cc == (9, 0) and p.family == "own"
        assert p.supports(prefill, H200) is None and p.supports(wide, H200) is None
        assert "sm_90 only" in p.supports(prefill, A100)
    fa3 = registry.get("attention", "own-cutlass-fa3")
    ragged = AttentionProblem(1, 32, 8, 1000, 1088, 128, causal=True)
    assert fa3.supports(ragged, H200) is None  # partial tiles: TMA's zero fill, masks
    why = registry.get("attention", "own-cutlass-sm90").supports(ragged, H200)
    assert "no partial tiles" in why  # the cp.async kernels take whole tiles only
    assert "head_dim" in registry.get("attention", "own-cutlass-sm90").supports(wide, H200)
    assert {s.label for s in oc.specs_for([wide])} == {
        f"fmha-{k}-bf16-d256"
        for k in ("fa3-no-pingpong", "fa3-no-overlap", "fa3-no-pingpong-no-overlap")
        + ("fa3-not-persistent", "fa3-no-st16", "fa3-static", "fa3-exp-emu", "fa3-t128")
    } | {"fmha-fa3-bf16-d256-128x80", "fmha-fa3-tiles-bf16-d256-128x80"}
    # the rungs against fa3-t128 (fa3 on 128x128 tiles); fa3's own tile is per problem
    flags = {k: dict(fmha_spec("bf16", 128, k).defines) for k in ("fa3-t128", "fa3-no-overlap")}
    flags["fa3"] = flags.pop("fa3-t128")
    assert flags["fa3"]["HK_PINGPONG"] == 1 and flags["fa3"]["HK_OVERLAP"] == 1
    assert flags["fa3-no-overlap"]["HK_OVERLAP"] == 0 and flags["fa3"]["HK_BLOCK_N"] == 128
    assert dict(fmha_spec("bf16", 256, "fa3-t128").defines)["HK_BLOCK_N"] == 64
    assert flags["fa3"]["HK_PERSISTENT"] == 1
    assert dict(fmha_spec("bf16", 128, "fa3-not-persistent").defines)["HK_PERSISTENT"] == 0
    # every rung names every switch; each differs from fa3 in the one it is named for
    rungs = {
        "fa3-no-pingpong": ("HK_PINGPONG",),
        "fa3-no-overlap": ("HK_OVERLAP",),
        "fa3-no-st16": ("HK_STORE16",),
        "fa3-static": ("HK_DYNAMIC",),
        # one CTA per tile: the atomic counter has nothing to hand out
        "fa3-not-persistent": ("HK_PERSISTENT", "HK_DYNAMIC"),
        "fa3-exp-emu": ("HK_EXP_EMU",),  # adds one: a quarter of the exp2 on the FMA pipe
        "fa3-tiles": ("HK_BLOCK_N", "HK_STAGES"),  # 128x176 at D 128: two stages fit
        "fa3": ("HK_BLOCK_N", "HK_STAGES"),  # the same, non-causal (fa3_tile_rule)
    }
    causal = dict(fmha_spec("bf16", 128, "fa3", causal=True, q_len=4096).defines)
    assert causal == flags["fa3"]  # FA3's rule: 128 keys at D 128 when causal
    short = dict(fmha_spec("bf16", 64, "fa3", causal=True, q_len=1024).defines)
    assert (short["HK_BLOCK_M"], short["HK_BLOCK_N"]) == (128, 128)  # 192 rows: q_len >= 2048
    tiles = {d: dict(fmha_spec("bf16", d, "fa3-tiles").defines) for d in (64, 128, 256)}
    assert [(t["HK_BLOCK_M"], t["HK_BLOCK_N"], t["HK_STAGES"]) for t in tiles.values()] == [
        (192, 128, 3),  # three consumer warpgroups
        (128, 176, 2),
        (128, 80, 2),  # 64 KiB of Q and two 40 KiB K and V stages: 224 of 227 KiB
    ]
    assert flags["fa3"]["HK_BLOCK_M"] == 128 and "HK_FA3_TILES" not in flags["fa3"]
    assert dict(fmha_spec("bf16", 64, "fa3-exp-emu").defines)["HK_EXP_EMU"] == 4
    assert flags["fa3"]["HK_STORE16"] == 1 and flags["fa3"]["HK_DYNAMIC"] == 1
    for rung, switches in rungs.items():
        defines = dict(fmha_spec("bf16", 128, rung).defines)
        assert {k for k in defines if defines[k] != flags["fa3"][k]} == set(switches), rung
    both = dict(fmha_spec("bf16", 128, "fa3-no-pingpong-no-overlap").defines)
    assert {k for k in both if both[k] != flags["fa3"][k]} == {"HK_PINGPONG", "HK_OVERLAP"}
    assert fmha_spec("bf16", 128, "fa3").source == "fmha_sm90_ws.cu"


def test_prebuild_needs_a_toolchain(monkeypatch):
    monkeypatch.setattr(build, "find_nvcc", lambda: None)
    assert oc.prebuild([GemmProblem(m=1, n=4096, k=4096, layout="nt")]) == {}


def test_prebuild_cli_builds_only_the_named_configs(monkeypatch, capsys):
    """`--config` narrows `--gemm` to named configs: a call script prebuilds the few libraries a
    run compares without building every config's (sessions on a lent GPU pay for each)."""
    from harness_kernels.cutlass import prebuild as pb

    asked = []
    monkeypatch.setattr(build, "toolchain_problem", lambda: None)
    monkeypatch.setattr(pb, "prebuild", lambda specs, jobs=None: asked.extend(specs) or {})
    names = ["sm90-coopn-128x320-c2x1-st16", "sm90-pingpong-128x128"]
    assert pb.main(["--gemm", "bf16:nt", *(f"--config={n}" for n in names)]) == 0
    assert [s.label for s in asked] == [f"gemm-{n}-bf16-nt" for n in names]
    asked.clear()
    assert pb.main(["--gemm", "bf16:nt"]) == 0
    assert len(asked) == len(pb.gemm_specs("bf16", "nt")) > len(names)


def test_prebuild_reports_a_failed_build_by_its_first_line_or_its_type(monkeypatch):
    """A build that raised with no message (a bare AssertionError) is reported, not a crash."""
    from harness_kernels.cutlass import prebuild as pb

    specs = pb.gemm_specs("bf16", "nt")[:2]
    failures = {specs[0]: RuntimeError("nvcc failed\nthe log"), specs[1]: AssertionError()}
    monkeypatch.setattr(build, "build_many", lambda todo, jobs: failures)
    assert pb.prebuild(specs) == {
        specs[0].label: "error: nvcc failed",
        specs[1].label: "error: AssertionError()",
    }


def test_config_specs_pick_targets_and_defines():
    sm90 = CONFIGS["sm90-coop-128x256"].spec("bf16", b_col=True)
    assert sm90.archs == ("sm_90a",) and sm90.source == "sm90_gemm.cu"
    assert dict(sm90.defines)["HK_CLUSTER_M"] == 2
    fp8 = CONFIGS["sm90-coop-128x256"].spec("fp8_e4m3", b_col=True)
    assert dict(fp8.defines)["HK_TILE_K"] == 128  # same 128 bytes of K per stage
    tf32 = CONFIGS["sm90-coop-128x256"].spec("tf32", b_col=False)
    assert dict(tf32.defines)["HK_TILE_K"] == 32 and dict(tf32.defines)["HK_DTYPE"] == 3
    assert tf32.label == "gemm-sm90-coop-128x256-tf32-nn"
    # tf32 nn always runs swapped (B^T the register operand); nt and bf16 nn do not
    assert dict(tf32.defines)["HK_SWAP_AB"] == 1
    assert dict(CONFIGS["sm90-coop-128x256"].spec("tf32", b_col=True).defines)["HK_SWAP_AB"] == 0
    assert dict(CONFIGS["sm90-coop-128x256"].spec("bf16", b_col=False).defines)["HK_SWAP_AB"] == 0
    sm80 = CONFIGS["sm80-multistage"].spec("fp16", b_col=False)
    assert sm80.archs == ("sm_80", "sm_90") and dict(sm80.defines)["HK_B_COL"] == 0
    assert Path(build.SOURCE_DIR / sm80.source).is_file()


def test_layout_of_reads_row_and_column_major_b():
    import torch

    a = torch.empty(5, 64)
    w = torch.empty(32, 64)
    assert layout_of(a, w.t()) == (True, 64, 64)  # nt: b = w.t(), column-major
    assert layout_of(a, torch.empty(64, 32)) == (False, 64, 32)  # nn: row-major
    with pytest.raises(ValueError):
        layout_of(a.t().contiguous().t(), w.t())  # column-major A is not taken


def test_tuning_candidates_per_m_regime():
    from harness_kernels.cutlass.gemm_tune import sm90_candidates

    first = {}
    for m in (1, 16, 17, 33, 64, 65, 256, 257, 1024, 1025, 16384):
        cands = sm90_candidates(m, 4096, 4096, "bf16")
        assert cands and all(c.kernel == "sm90" and c.name in CONFIGS for c, _ in cands)
        assert len({(v.name, str(o)) for v, o in cands}) == len(cands)  # no duplicates
        first[m] = cands[0][0].name
    assert first[1] == first[16] == "sm90-swapab-pingpong-64x16"
    assert (first[17], first[33]) == ("sm90-swapab-pingpong-64x32", "sm90-swapab-pingpong-64x64")
    assert first[65] == "sm90-streamk-128x128" and first[16384] == "sm90-coop-128x256"


def test_k_deep_decode_tiles_offered_beside_the_128_deep_ones():
    """The 64-row swapped ping-pong tiles 256 deep along K (own Triton's decode block at N 4096)
    are timed at M <= 32 right after their 128-deep twin, and not at M 33-64 (no 64x64 twin)."""
    from harness_kernels.cutlass.gemm_tune import sm90_candidates

    for m, width in ((1, 16), (16, 16), (32, 32)):
        names = [c.name for c, _ in sm90_candidates(m, 4096, 4096, "bf16")]
        assert names[:2] == [
            f"sm90-swapab-pingpong-64x{width}",
            f"sm90-swapab-pingpong-64x{width}-k256",
        ]
        deep = CONFIGS[names[1]]
        assert deep.tile == (64, width, 256) and deep.tile_for("fp8_e4m3") == (64, width, 512)
        assert deep.schedule == "pingpong" and deep.swap_ab
    assert not any(c.name.endswith("-k256") for c, _ in sm90_candidates(64, 4096, 4096, "bf16"))


def test_cooperative_128x128_pairs_offered_in_the_mid_band_after_ping_pong():
    """sm90-coop-128x128-c2x1 (cuBLAS's 128x128 tile and 2x1 cluster at M 512, N 4096, with both
    consumer warp groups on the one tile a CTA gets there) is timed right after the ping-pong
    128x128 at M 129-1024, and not at M 128 (one tile row: a cluster half would idle) nor at
    large M."""
    from harness_kernels.cutlass.gemm_tune import sm90_candidates

    coop = CONFIGS["sm90-coop-128x128-c2x1"]
    assert (coop.tile, coop.cluster, coop.schedule) == ((128, 128, 64), (2, 1), "cooperative")
    assert not coop.streamk and not coop.swap_ab
    for m in (256, 512, 1024):
        names = [c.name for c, _ in sm90_candidates(m, 4096, 4096, "bf16")]
        at = names.index("sm90-pingpong-128x128")
        assert names[at + 1] == "sm90-coop-128x128-c2x1", m
    for m in (128, 2048):
        assert "sm90-coop-128x128-c2x1" not in {
            c.name for c, _ in sm90_candidates(m, 4096, 4096, "bf16")
        }


def test_clustered_split_k_offered_where_few_tiles_pair_up():
    """sm90-streamk-128x144-c2x1 split K (cuBLAS's decomposition at the 405B QKV, 256x2304x16384:
    32 tiles of 128x144 split 4 ways on 128 CTAs, 2x1 clusters multicasting the weight tile):
    offered at M <= 256 where the tile rows pair up and the tiles fill at most half the SMs,
    split the most ways that stay within one wave and half that; not at M 128 (one tile row: a
    cluster half would idle), nor where the tiles already fill the SMs."""
    from harness_kernels.cutlass.gemm_tune import cluster_splits, sm90_candidates

    assert CONFIGS["sm90-streamk-128x144-c2x1"].cluster == (2, 1)
    assert cluster_splits(256, 2304) == [4, 2]
    assert cluster_splits(256, 4096) == [2]  # 58 tiles: 2 ways within 132 SMs
    assert cluster_splits(128, 2304) == [] and cluster_splits(256, 16384) == []
    cands = [(c.name, o.mode, o.splits) for c, o in sm90_candidates(256, 2304, 16384, "bf16")]
    assert ("sm90-streamk-128x144-c2x1", "split-k", 4) in cands
    assert ("sm90-streamk-128x144-c2x1", "split-k", 2) in cands
    assert not any("144" in c.name for c, _ in sm90_candidates(512, 2304, 16384, "bf16"))


def test_large_m_times_each_big_tile_against_the_raster_its_heuristic_passes_over():
    from harness_kernels.cutlass.gemm_tune import heuristic_raster, sm90_candidates

    coop = CONFIGS["sm90-coop-128x256"]  # 2x1 clusters
    # CUTLASS rasters along M when the grid has more tile columns than rows (in whole clusters)
    assert heuristic_raster(16384, 10240, coop) == "along-n"  # 128 rows, 40 columns
    assert heuristic_raster(2048, 57344, coop) == "along-m"  # 16 rows, 224 columns
    assert heuristic_raster(256, 512, coop) == "along-n"  # 2 rows, 2 columns: a tie goes to N
    assert heuristic_raster(128, 512, coop) == "along-n"  # 1 row rounds up to a 2-row cluster
    # ...and then to whole swizzle groups of clusters: at 2176x6144, 18 rows against 24
    # columns, but at swizzle 8 (groups of 8 clusters: 16 rows, 8 columns) 32 against 24
    assert heuristic_raster(2176, 6144, coop) == "along-m"
    assert heuristic_raster(2176, 6144, coop, swizzle=8) == "along-n"

    def flipped(m: int, n: int) -> dict[str, tuple[int, str]]:
        return {
            c.name: (o.swizzle, o.raster)
            for c, o in sm90_candidates(m, n, 4096, "bf16")
            if o.raster != "heuristic"
        }

    # 256x128 in 1x2 clusters at 2176x6144: 9 -> 16 rows, 48 columns at swizzle 8: along M
    assert flipped(2176, 6144) == {
        "sm90-coop-128x256": (8, "along-m"),
        "sm90-coop-256x128": (8, "along-n"),
    }
    # 16384x10240: 128 rows, 40 columns of 128x256; 64 rows, 80 columns of 256x128
    assert flipped(16384, 10240) == {
        "sm90-coop-128x256": (8, "along-m"),
        "sm90-coop-256x128": (8, "along-n"),
    }
    # 2048x57344: 16 rows, 224 columns of 128x256; 8 rows, 448 columns of 256x128
    assert flipped(2048, 57344) == {
        "sm90-coop-128x256": (8, "along-n"),
        "sm90-coop-256x128": (8, "along-n"),
    }
    # below M 2048 the heuristic's raster stands
    assert all(o.raster == "heuristic" for _, o in sm90_candidates(1024, 10240, 8192, "bf16"))


def test_decode_candidates_never_leave_sms_idle_with_one_cta_per_tile():
    from harness_kernels.cutlass.gemm_tune import sm90_candidates

    def modes(n: int) -> set[str]:
        return {o.mode for c, o in sm90_candidates(4, n, 8192, "bf16") if c.streamk}

    # N 10240: 80 tiles of 128 on 132 SMs; data-parallel (and the heuristic, which picks it)
    # would run 80 CTAs, a partial grid whose time was bimodal on the H200: stream-K instead.
    assert modes(10240) == {"stream-k", "split-k"}
    assert modes(28672) == {"heuristic", "data-parallel", "split-k"}  # 224 tiles: full grid


def test_decode_also_times_one_cta_per_tile_alone_and_in_token_multicast_clusters():
    from harness_kernels.cutlass.gemm_tune import sm90_candidates

    def names(m: int, n: int, dtype: str) -> list[str]:
        return [c.name for c, _ in sm90_candidates(m, n, 8192, dtype)]

    # cuBLASLt's fp8 decode kernel at N 10240 runs 80 CTAs of 128-row tiles, cuBLAS's bf16 ones
    # swapped tiles in 4x1 clusters: the own plain persistent twins are timed beside stream-K,
    # for both dtypes; where the tiles fill the SMs (N 28672: 224) only the clustered ones.
    for dtype in ("bf16", "fp8_e4m3"):
        for m, w in ((1, 16), (32, 32), (64, 64)):
            found = names(m, 10240, dtype)
            assert {f"sm90-swapab-dp-128x{w}{c}" for c in ("", "-c2x1", "-c4x1")} <= set(found)
            assert f"sm90-swapab-128x{w}" in found  # stream-K stays a candidate
        full = names(1, 28672, dtype)
        assert "sm90-swapab-dp-128x16" not in full and "sm90-swapab-dp-128x16-c4x1" in full
    dp = CONFIGS["sm90-swapab-dp-128x16"]
    assert dp.swap_ab and not dp.streamk and dp.tile == CONFIGS["sm90-swapab-128x16"].tile
    for c in (2, 4):  # the cluster runs along the weight tiles (M of the swapped problem)
        clustered = CONFIGS[f"sm90-swapab-dp-128x64-c{c}x1"]
        assert clustered.cluster == (c, 1) and clustered.swap_ab and not clustered.streamk
        assert ("HK_CLUSTER_M", c) in clustered.spec("bf16", True).defines
    # fp8 at M 128-256: ping-pong pairs that share the activation tile (1x2)
    assert "sm90-pingpong-128x128-c1x2" in names(128, 28672, "fp8_e4m3")
    assert "sm90-pingpong-128x128-c1x2" not in names(128, 28672, "bf16")


def test_wave_fill_ranks_the_widths_that_fill_the_last_wave():
    from harness_kernels.cutlass.gemm_tune import sm90_candidates, wave_fill, wave_fill_configs

    # M 256, N 10240 on 132 SMs: 80 tiles of 128x256 (61%), 128 of 128x160 (97%)
    assert wave_fill(256, 10240, (128, 256)) == pytest.approx(80 / 132)
    assert wave_fill(256, 10240, (128, 160)) == pytest.approx(128 / 132)
    assert wave_fill(8192, 8192, (128, 128), sms=128) == 1.0  # whole waves
    assert wave_fill_configs(256, 10240)[0].name == "sm90-coop-128x160"
    assert wave_fill_configs(256, 6144)[0].name == "sm90-coop-128x96"  # 2 x 64 = 128 tiles
    # 2 x 64 = 128 tiles of 128x64 (cuBLAS's tile there), 104 of 128x80 (79%)
    assert wave_fill_configs(256, 4096)[0].name == "sm90-coop-128x64"
    assert wave_fill_configs(512, 6144)[0].name == "sm90-coop-128x192"  # 4 x 32 = 128 tiles
    # 2 x 326 = 652 tiles of 128x176: 99% of five waves (160 and 192 wide: 91% of six and five)
    assert wave_fill_configs(256, 57344)[0].name == "sm90-coop-128x176"
    # 128 tiles of 128x224 at 128x28672 (97%), where 128x128 ran 224 tiles: two on some SMs
    assert wave_fill_configs(128, 28672)[0].name == "sm90-coop-128x224"
    assert wave_fill_configs(256, 28672)[0].name == "sm90-coop-128x224"  # 2 x 128 tiles
    for m in (128, 256, 512, 1024):  # the mid band times every wave-fill width
        names = {c.name for c, _ in sm90_candidates(m, 10240, 8192, "bf16")}
        assert {f"sm90-coop-128x{w}" for w in (64, 80, 96, 160, 176, 192, 224)} <= names
    assert not any("128x160" in c.name for c, _ in sm90_candidates(4096, 10240, 8192, "bf16"))


def test_mid_band_times_the_multicast_cluster_twins_where_a_pair_shares_a_weight_tile():
    from harness_kernels.cutlass.gemm import CONFIGS
    from harness_kernels.cutlass.gemm_tune import sm90_candidates

    def names(m):
        return {c.name for c, _ in sm90_candidates(m, 4096, 4096, "bf16")}

    # Two CTAs of a 2x1 cluster own vertically adjacent tiles: at M 128 there is one tile row,
    # so the pair would be half padding; from M 256 each pair shares its weight tile.
    assert not any(n.startswith("sm90-coop-") and n.endswith("-c2x1") for n in names(128))
    for m in (256, 512, 1024):
        assert {f"sm90-coop-128x{w}-c2x1" for w in (80, 96, 160, 176, 192, 224)} <= names(m)
    # The swapped 128x64 twin in a 1x2 cluster: cuBLAS's kernel at 256x4096x4096 on the H200.
    assert "sm90-swapab-128x64-c1x2" in names(128) and "sm90-swapab-128x64-c1x2" in names(256)
    # 64-token ping-pong tiles in pairs: 2 x 64 tiles of 64x96 at 128x6144 (97% of 132 SMs)
    assert {"sm90-pingpong-64x96-c2x1", "sm90-pingpong-64x128-c2x1"} <= names(128)
    pair = CONFIGS["sm90-pingpong-64x96-c2x1"]
    assert pair.schedule == "pingpong" and pair.cluster == (2, 1) and not pair.swap_ab
    twin = CONFIGS["sm90-swapab-128x64-c1x2"]
    assert (
        twin.swap_ab and twin.cluster == (1, 2) and twin.tile == CONFIGS["sm90-swapab-128x64"].tile
    )
    spec = dict(twin.spec("bf16", True).defines)
    assert (spec["HK_CLUSTER_M"], spec["HK_CLUSTER_N"], spec["HK_SWAP_AB"]) == (1, 2, 1)


def test_tf32_candidates_leave_out_tiles_whose_fp32_epilogue_cannot_be_built():
    from harness_kernels.cutlass.gemm import CONFIGS
    from harness_kernels.cutlass.gemm_tune import sm90_candidates

    # 128x80 and 128x176 fail CuTe's stride-divisibility assertion when the output is fp32
    # (H100 GPU tests, session 51); bf16 keeps them, tf32 keeps the widths in multiples of 32.
    assert "tf32" not in CONFIGS["sm90-coop-128x80"].dtypes
    assert "tf32" not in CONFIGS["sm90-coop-128x176-c2x1"].dtypes
    assert "tf32" in CONFIGS["sm90-coop-128x64"].dtypes
    assert "bf16" in CONFIGS["sm90-coop-128x176"].dtypes
    for m in (128, 256, 1024):
        tf32 = {c.name for c, _ in sm90_candidates(m, 4096, 4096, "tf32")}
        bf16 = {c.name for c, _ in sm90_candidates(m, 4096, 4096, "bf16")}
        assert "sm90-coop-128x80" in bf16 and "sm90-coop-128x80" not in tf32
        assert {"sm90-coop-128x64", "sm90-coop-128x160", "sm90-coop-128x192"} <= tf32


def test_the_n_split_128x320_tile_has_its_own_define_and_is_no_tuner_candidate():
    from harness_kernels.cutlass.gemm import CONFIGS
    from harness_kernels.cutlass.gemm_tune import sm90_candidates

    split = CONFIGS["sm90-coopn-128x320-c2x1"]
    st16 = CONFIGS["sm90-coopn-128x320-c2x1-st16"]
    assert ("HK_SPLIT_N", 1) in split.spec("bf16", True).defines
    assert ("HK_QUAD_STORES", 1) not in split.spec("bf16", True).defines
    assert {("HK_SPLIT_N", 1), ("HK_QUAD_STORES", 1)} <= set(st16.spec("bf16", True).defines)
    assert split.spec("bf16", True).label != st16.spec("bf16", True).label
    for c in (split, st16):
        assert c.dtypes == ("bf16", "fp16")  # sm90_gemm.cu builds the N split for 16-bit only
    # every other library compiles exactly as before (no new define)
    others = [c for c in CONFIGS.values() if c.kernel == "sm90" and not c.split_n]
    new_defines = {"HK_SPLIT_N", "HK_QUAD_STORES"}
    assert not any(d[0] in new_defines for c in others for d in c.spec("bf16", True).defines)

    # It lost at every mid-band shape on an H200 (session 52): the tuner no longer times it.
    # Its 16-byte-store twin is timed where 320-wide tiles fill the waves (it beat cuBLAS at
    # N 10240 and 57344, M 1024-2048, and lost where 26 tile columns left a partial wave).
    def names(m, n, dtype="bf16", b_col=True):
        return {c.name for c, _ in sm90_candidates(m, n, 8192, dtype, b_col=b_col)}

    for m in (128, 256, 512, 1024, 4096):
        for dtype in ("bf16", "fp16", "fp8_e4m3", "tf32"):
            assert split.name not in names(m, 10240, dtype)
    for m, n in ((512, 10240), (1024, 10240), (1024, 57344), (2048, 10240), (8192, 57344)):
        assert st16.name in names(m, n) and st16.name in names(m, n, "fp16")
        assert st16.name not in names(m, n, "fp8_e4m3") | names(m, n, "tf32")
        assert st16.name not in names(m, n, b_col=False)  # nt only
    for m, n in ((256, 10240), (1024, 8192), (2048, 8192), (64, 10240)):
        assert st16.name not in names(m, n)  # a partial last wave of 320-wide tiles


def test_every_header_a_gemm_library_includes_is_a_tune_source():
    """A change to any file a tuned CUTLASS GEMM library compiles from must re-tune: the tune
    cache's key hashes TUNE_SOURCES, so sm90_gemm.cu and each local header it includes must be
    among them (the tuner picks sm90 configs only: the sm80 path is a fixed-config provider)."""
    from fnmatch import fnmatch

    from harness_kernels.cutlass import gemm_tune

    assert {c.kernel for c in gemm_tune.all_sm90_configs()} == {"sm90"}
    root = build.SOURCE_DIR.parent
    files = [p.relative_to(root).as_posix() for p in build._source_files("sm90_gemm.cu")]
    assert "cutlass/sm90_quad_store_epilogue.h" in files
    for rel in files:
        assert any(fnmatch(rel, g) for g in gemm_tune.TUNE_SOURCES), rel


def test_the_n_split_has_no_nn_library_and_nothing_asks_for_one(registry):
    from harness_kernels.cutlass.gemm_tune import sm90_candidates
    from harness_kernels.cutlass.prebuild import gemm_specs

    # nvcc fails the nn build (CuTe's "Shape Divisibility Condition": a row-major B's swizzle
    # atom is 64 wide, each warpgroup's share 160): the tuner, the prebuild and the fixed-config
    # provider must not ask for it, while nt keeps it.
    split = CONFIGS["sm90-coopn-128x320-c2x1"]
    assert split.unbuildable("bf16", True) is None
    assert "nt only" in (split.unbuildable("bf16", False) or "")
    # the tuner's layout filter: fp8 (both operands K-major) has no nn candidate at all
    assert sm90_candidates(512, 10240, 8192, "fp8_e4m3")
    assert not sm90_candidates(512, 10240, 8192, "fp8_e4m3", b_col=False)
    assert sm90_candidates(512, 10240, 8192, "bf16", b_col=False)
    assert not any("coopn" in s.label for s in gemm_specs("bf16", "nn"))
    assert any("coopn" in s.label for s in gemm_specs("bf16", "nt"))
    nn_problem = GemmProblem(m=1024, n=10240, k=8192, dtype="bf16", layout="nn")
    assert not any("coopn" in s.label for s in oc.specs_for([nn_problem]))
    fixed = registry.get("gemm", f"own-cutlass-{split.name}")
    assert "nt only" in (fixed.supports(nn_problem, H200) or "")
    nt_problem = GemmProblem(m=1024, n=10240, k=8192, dtype="bf16", layout="nt")
    assert fixed.supports(nt_problem, H200) is None
