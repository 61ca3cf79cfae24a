"""Every own-CUTLASS .cu file compiles for its targets, and the SASS holds the instructions the
design is about: HGMMA + TMA on sm_90a, HMMA + cp.async + ldmatrix on sm_90 for the sm80 path.
(One build per .cu file per session, from the `kernel_builds` fixture: device code alone
where only the SASS is read.)"""

from __future__ import annotations

import ctypes
import re

from harness_kernels.cutlass import build


def count(text: str, pattern: str) -> int:
    return len(re.findall(pattern, text))


def test_sm90_gemm_is_tma_wgmma_warp_specialized(kernel_builds, sass_of):
    """The N split with 16-byte stores (the GEMM library built whole): TMA loads multicast in
    its 2x1 cluster, an mbarrier pipeline, and each consumer warpgroup's 64x160 share as one
    wgmma per K step. Its register epilogue (sm90_quad_store_epilogue.h) gathers each quad's
    column pairs with shuffles and stores 16 bytes per thread: 128x320 over 256 consumer
    threads is 160 bf16 each, 20 16-byte stores, where CUTLASS's DefaultEpilogue issued 160
    2-byte ones (the STG.E.U16 ncu found filling the store queue on an H200, session 54)."""
    sass = sass_of(kernel_builds["sass"]["sm90_gemm"])
    assert set(sass) == {"sm_90a"}
    text = sass["sm_90a"]
    # WGMMA at the warpgroup's full width: one 64x160 instruction per K step, not five 64x32
    # ones (CuTe picks N 160 only with CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED, which the .cu
    # defines)
    assert count(text, r"\bHGMMA\.64x160x16\.F32\.BF16") > 0
    assert count(text, r"\bHGMMA\.64x32x16") == 0
    assert count(text, r"\bUTMALDG") > 0  # TMA loads
    assert count(text, r"\bUTMALDG\.\w+\.MULTICAST") > 0  # cluster 2x1 multicast
    assert count(text, r"\bSYNCS\.") > 0  # mbarrier pipeline
    assert count(text, r"\bHMMA\b") == 0
    assert count(text, r"\bSTG\.E\.128\b") == 20
    assert count(text, r"\bSTG\.E\.U16\b") == 0
    assert count(text, r"\bSHFL\.BFLY\b") > 0
    assert count(text, r"\bUTMASTG") == 0  # no TMA store: the N split cannot use it
    assert count(text, r"\b(STL|LDL)\b") == 0  # the selects do not index registers dynamically


def test_sm90_tf32_nn_gemm_reads_b_through_registers(kernel_builds, sass_of):
    """wgmma reads 32-bit operands from shared memory only K-major, so tf32 nn is built swapped
    and CUTLASS's register-A mainloop feeds B^T (the MN-major operand) from registers: the A
    operand of every TF32 HGMMA is a register, loaded from shared memory by LDS (the transposing
    read), and the K-major one still arrives by TMA and is read by descriptor. Its cooperative
    epilogue stages through shared memory and stores with TMA."""
    text = sass_of(kernel_builds["sass"]["sm90_gemm_tf32_nn"])["sm_90a"]
    assert count(text, r"\bHGMMA\.64x256x8\.F32\.TF32 R\d+, R\d+, gdesc") > 0
    assert count(text, r"\bHGMMA\.\S+ R\d+, gdesc") == 0  # no shared-memory-only form
    assert count(text, r"\bLDS\b") > 0 and count(text, r"\bUTMALDG") > 0
    assert count(text, r"\bUTMASTG") > 0  # TMA epilogue store
    assert count(text, r"\b(STL|LDL)\b") == 0  # no spills


def test_sm80_gemm_is_cp_async_mma_sync_on_hopper(kernel_builds, sass_of):
    """The sm80 path as the Hopper GPUs run it (sm_90 SASS; the library also carries sm_80)."""
    from harness_kernels.cutlass.gemm import CONFIGS

    assert CONFIGS["sm80-multistage"].spec("bf16", b_col=True).archs == ("sm_80", "sm_90")
    sass = sass_of(kernel_builds["sass"]["sm80_gemm"])
    assert set(sass) == {"sm_90"}
    for arch, text in sass.items():
        assert count(text, r"\bHMMA\.16816\.F32\.BF16") > 0, arch
        assert count(text, r"\bLDGSTS") > 0, arch  # cp.async
        assert count(text, r"\bLDSM") > 0, arch  # ldmatrix
        assert count(text, r"\bHGMMA|\bUTMALDG") == 0, arch


def test_fmha_is_cute_mma_sync_on_hopper(kernel_builds, sass_of):
    from harness_kernels.cutlass.fmha import fmha_spec

    assert fmha_spec("bf16", 128).archs == ("sm_80", "sm_90")
    sass = sass_of(kernel_builds["sass"]["fmha_sm80"])
    assert set(sass) == {"sm_90"}
    for arch, text in sass.items():
        assert count(text, r"\bHMMA\.16816\.F32\.BF16") > 0, arch
        assert count(text, r"\bLDSM\.16\.MT88") > 0, arch  # V^T, transposing ldmatrix
        assert count(text, r"\bLDGSTS") > 0, arch
        assert count(text, r"\bMUFU\.EX2") > 0, arch  # softmax exp2


def test_fmha_sm90_is_wgmma_with_p_from_registers(kernel_builds, sass_of):
    """The wgmma rung: HGMMA for both products (S = Q K^T 64x64, O += P V 64xD), cp.async
    loads, exp2 on MUFU, and no local-memory spills of the 256-thread CTA."""
    sass = sass_of(kernel_builds["sass"]["fmha_sm90"])
    assert set(sass) == {"sm_90a"}
    text = sass["sm_90a"]
    assert count(text, r"\bHGMMA\.64x64x16\.F32\.BF16") > 0  # Q K^T, both operands in smem
    assert count(text, r"\bHGMMA\.64x128x16\.F32\.BF16") > 0  # P V, D = 128
    assert count(text, r"\bHMMA") == 0 and count(text, r"\bLDSM") == 0  # no mma.sync path
    assert count(text, r"\bLDGSTS") > 0 and count(text, r"\bMUFU\.EX2") > 0
    assert count(text, r"\b(STL|LDL)\b") == 0  # no spills


def test_fmha_sm90_ws_is_fa3_shaped(kernel_builds, sass_of):
    """The warp-specialized FMHA: TMA loads (Q, K, V as 4-d tensors), register reallocation
    between the producer and the consumer warpgroups, the ping-pong token (named barriers with
    256 threads), 64x128 wgmmas for both products at D 128, a wait that leaves one wgmma batch
    in flight (P V still running while the softmax of the next scores starts), no spills."""
    sass = sass_of(kernel_builds["sass"]["fmha_sm90_ws"])
    assert set(sass) == {"sm_90a"}
    text = sass["sm_90a"]
    assert count(text, r"\bUTMALDG\.4D") > 0
    assert count(text, r"\bLDGSTS") == 0  # no cp.async: the producer loads by TMA alone
    assert count(text, r"\bUSETMAXREG\.DEALLOC\.CTAPOOL 0x18") > 0  # producer: 24 registers
    assert count(text, r"\bUSETMAXREG\.TRY_ALLOC\.CTAPOOL \w+, 0xf0") > 0  # consumers: 240
    assert count(text, r"\bBAR\.ARV \w+, 0x100") > 0  # hand the token on (256 threads)
    assert count(text, r"\bBAR\.SYNC\.DEFER_BLOCKING \w+, 0x100") > 0  # wait for it
    assert count(text, r"\bHGMMA\.64x128x16\.F32\.BF16") > 0
    assert count(text, r"\bWARPGROUP\.DEPBAR\.LE gsb0, 0x1") > 0  # wait<1>: P V in flight
    assert count(text, r"\bSYNCS\.") > 0  # mbarrier pipelines
    assert count(text, r"\b(STL|LDL)\b") == 0


def test_fmha_on_192_row_tiles_runs_three_consumer_warpgroups(kernel_builds, sass_of):
    """fa3 at D 64 (FA3's 192x128 tile): three consumer warpgroups at 160 registers each beside
    the producer's 24 (24 * 128 + 160 * 384 = 64,512), the ping-pong token passed round the
    three (a named barrier each, 256 threads), 64x128 wgmmas for Q K^T and 64x64 for P V, the
    P V wait leaving one batch in flight, no local memory."""
    text = sass_of(kernel_builds["sass"]["fmha_sm90_ws_192"])["sm_90a"]
    assert count(text, r"\bUSETMAXREG\.DEALLOC\.CTAPOOL 0x18") > 0
    assert count(text, r"\bUSETMAXREG\.TRY_ALLOC\.CTAPOOL \w+, 0xa0") > 0
    assert count(text, r"\bBAR\.SYNC\.DEFER_BLOCKING \w+, 0x100") > 0
    assert count(text, r"\bHGMMA\.64x128x16\.F32\.BF16") > 0
    assert count(text, r"\bHGMMA\.64x64x16\.F32\.BF16") > 0
    assert count(text, r"\bWARPGROUP\.DEPBAR\.LE gsb0, 0x1") > 0
    assert count(text, r"\b(STL|LDL)\b") == 0


def test_fmha_on_80_key_tiles_issues_80_wide_wgmmas(kernel_builds, sass_of):
    """fa3 at D 256 (FA3's 128x80 tile): Q K^T as 64x80 wgmmas (CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED;
    without it CuTe tiles N = 80 with 16-wide ones), P V as 64x256, no local memory."""
    text = sass_of(kernel_builds["sass"]["fmha_sm90_ws_80"])["sm_90a"]
    assert count(text, r"\bHGMMA\.64x80x16\.F32\.BF16") > 0
    assert count(text, r"\bHGMMA\.64x16x16\.F32\.BF16") == 0
    assert count(text, r"\bHGMMA\.64x256x16\.F32\.BF16") > 0
    assert count(text, r"\b(STL|LDL)\b") == 0


def test_fmha_stores_its_o_tile_16_bytes_per_thread(kernel_builds, sass_of):
    """fa3 (HK_STORE16, its default since session 62): a quad's shuffles leave each lane 8
    columns of one row, stored as one 16-byte vector: at D 128, 8 per thread per tile (one per
    kernel, causal and not, 16 in all) where the 2-byte store (fa3-no-st16) has 64 2-byte
    stores per thread; no local memory for the selects. fa3-static stores the same way."""
    for name in ("fmha_sm90_ws", "fmha_sm90_ws_static"):
        text = sass_of(kernel_builds["sass"][name])["sm_90a"]
        assert count(text, r"\bSTG\.E\.128\b") == 2 * 8, name
        assert count(text, r"\bSTG\.E\.U16\b") == 0, name
        assert count(text, r"\b(STL|LDL)\b") == 0, name


def test_fmha_takes_its_tiles_from_an_atomic_counter(kernel_builds, sass_of):
    """fa3 (HK_DYNAMIC, its default since session 62): the producer's next tile comes from a
    global atomic add with a returned value (one per kernel for the tiles, one for the CTAs
    done), where fa3-static's grid stride has none; the wgmmas are the same."""
    dyn = sass_of(kernel_builds["sass"]["fmha_sm90_ws"])["sm_90a"]
    static = sass_of(kernel_builds["sass"]["fmha_sm90_ws_static"])["sm_90a"]
    atomics = r"\bATOMG\.E\.ADD"
    hgmma = r"\bHGMMA\.64x128x16\.F32\.BF16"
    assert count(static, atomics) == 0
    assert count(dyn, atomics) == 2 * 2  # two kernels (causal and not), two counters each
    assert count(dyn, hgmma) == count(static, hgmma) > 0


def test_fmha_exp_emu_moves_a_quarter_of_the_exponentials_off_the_sfu(kernel_builds, sass_of):
    """fa3-exp-emu (HK_EXP_EMU 4): of a thread's 64 scores per KV tile at D 128, 16 take
    exp2_poly, at both softmax sites of both kernels (causal and not): 64 MUFU.EX2 fewer than
    fa3, and each emulated exp2 ends in one integer add of n << 23 to the cubic's bits (IMAD by
    0x800000 or LEA by 23); no local memory."""
    fa3 = sass_of(kernel_builds["sass"]["fmha_sm90_ws"])["sm_90a"]
    emu = sass_of(kernel_builds["sass"]["fmha_sm90_ws_exp_emu"])["sm_90a"]
    ex2 = r"\bMUFU\.EX2\b"
    assert count(fa3, ex2) - count(emu, ex2) == 2 * 2 * 16
    to_exponent = r"\bIMAD R\d+, R\d+, 0x800000, R\d+|\bLEA R\d+, R\d+, R\d+, 0x17\b"
    assert count(emu, to_exponent) == 2 * 2 * 16 and count(fa3, to_exponent) == 0
    assert count(emu, r"\b(STL|LDL)\b") == 0


def test_fmha_softmax_exp2_is_one_sfu_op_per_score(kernel_builds, sass_of):
    """exp2 as ex2.approx.ftz (fmha_common.h's exp2_ftz): a bare MUFU.EX2 per score, without the
    range check and predicated multiplies plain exp2f wraps around it (FSETP ... -126), in every
    FMHA kernel that shares the softmax."""
    range_check = r"\bFSETP\.\w+(\.\w+)* P\d+, PT, R\d+(\.reuse)?, -126"
    for name in ("fmha_sm90_ws", "fmha_sm90", "fmha_sm80"):
        for arch, text in sass_of(kernel_builds["sass"][name]).items():
            assert count(text, r"\bMUFU\.EX2") > 0, (name, arch)
            assert count(text, range_check) == 0, (name, arch)


def test_fmha_register_layout_conversions_hold_for_every_thread(kernel_builds):
    output, rc = kernel_builds["layout_check"]
    assert rc == 0 and output.strip().endswith("ok"), output


def test_libraries_export_the_c_abi_and_describe_themselves(kernel_builds):
    """A GEMM library and an FMHA one (the two ABIs; common.h's HK_EXPORT makes every .cu's
    symbols visible the same way) load without a GPU and describe what they compiled."""
    expect = {
        "sm90_gemm": ("hk_gemm_plan", "hk_gemm_run", "hk_gemm_workspace", "hk_gemm_destroy"),
        "fmha_sm90": ("hk_fmha_plan", "hk_fmha_run", "hk_fmha_destroy"),
    }
    libraries = kernel_builds["libraries"]
    assert set(libraries) == set(expect)
    for name, symbols in expect.items():
        built = libraries[name]
        lib = ctypes.CDLL(str(built.path))  # loads on a machine without a GPU: static cudart
        for sym in (*symbols, "hk_describe", "hk_status_string"):
            assert hasattr(lib, sym), (name, sym)
        info = build.describe(lib)
        assert info["kernel"] == name
        assert info["cutlass"] == built.manifest["cutlass_version"]
        assert built.manifest["header_source"] in ("env", "submodule", "wheel")
    info = build.describe(ctypes.CDLL(str(libraries["sm90_gemm"].path)))
    assert (info["tile"], info["cluster"], info["schedule"]) == (
        "128x320x64",
        "2x1x1",
        "cooperative",
    )
    assert (info["split_n"], info["quad_stores"]) == ("1", "1")


def test_every_source_exports_its_abi_with_hk_export():
    """The sources the ABI test does not load (their SASS is built as device code alone) declare
    the same entry points through the same macro, so what loads for one loads for all."""
    gemm = ("hk_gemm_plan", "hk_gemm_run", "hk_gemm_workspace", "hk_gemm_destroy")
    fmha = ("hk_fmha_plan", "hk_fmha_run", "hk_fmha_destroy")
    for source, symbols in {
        "sm80_gemm.cu": gemm,
        "sm90_gemm.cu": gemm,
        "fmha_sm80.cu": fmha,
        "fmha_sm90.cu": fmha,
        "fmha_sm90_ws.cu": fmha,
    }.items():
        text = (build.SOURCE_DIR / source).read_text()
        for sym in (*symbols, "hk_describe", "hk_status_string"):
            assert re.search(rf"\bHK_EXPORT\b[^;{{]*\b{sym}\(", text), (source, sym)
