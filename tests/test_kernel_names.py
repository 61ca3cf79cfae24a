"""Vendor kernel names from a profiler trace (harness.measure.kernel_names) and how `harness
gaps` shows them beside the own kernel's config (harness.report.kernel_configs)."""

import json

from harness.measure.kernel_names import MAX_KERNELS, kernels_from_trace
from harness.report.kernel_configs import kernel_label, own_config, reference_kernel

NVJET = "nvjet_sm90_tst_168x128_64x5_1x2_h_bz_TNN"
REDUCE = (
    "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, "
    "__nv_bfloat16, float, __nv_bfloat16, true, false, false>(cublasLt::cublasSplitKParams<float>, "
    "__nv_bfloat16 const*, float const*, __nv_bfloat16*, float const*)"
)


def _kernel(name, ts, grid=(2, 61, 1), block=(384, 1, 1)):
    return {"ph": "X", "cat": "kernel", "name": name, "ts": ts,
            "args": {"grid": list(grid), "block": list(block)}}  # fmt: skip


def test_trace_kernels_in_launch_order_without_the_host_events():
    events = [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1},
        _kernel(REDUCE, 30, grid=(128, 4, 1), block=(32, 16, 1)),
        _kernel(NVJET, 10),
        {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "ts": 5},
    ]
    assert kernels_from_trace(events) == [
        {"name": NVJET, "grid": "2x61x1", "block": "384x1x1"},
        {"name": REDUCE, "grid": "128x4x1", "block": "32x16x1"},
    ]
    many = [_kernel(f"k{i}", i) for i in range(10)]
    assert [k["name"] for k in kernels_from_trace(many)] == [f"k{i}" for i in range(MAX_KERNELS)]


def test_labels_drop_templates_and_namespaces_and_fit_a_table():
    assert kernel_label(NVJET) == NVJET  # already short: the tile and cluster stay readable
    assert kernel_label(REDUCE) == "splitKreduce_kernel"
    long = "x" * 100
    assert len(kernel_label(long)) == 48 and kernel_label(long).endswith("~")


def test_gaps_columns_name_both_sides():
    cfg = {"kernels": [{"name": NVJET, "grid": "2x61x1", "block": "384x1x1"},
                       {"name": REDUCE, "grid": "128x4x1", "block": "32x16x1"}]}  # fmt: skip
    ref = {"provider": "cublas", "provider_config": json.dumps(cfg)}
    assert reference_kernel(ref) == f"{NVJET} + splitKreduce_kernel"
    assert reference_kernel({"provider_config": "{}"}) == ""  # rows from before the recording
    assert reference_kernel(None) == ""
    cutlass = {
        "library": "own-cutlass",
        "variant": "sm90-coop-128x192",
        "run_options": "heuristic/sw1",
    }
    triton = {"block_m": 128, "block_n": 128, "block_k": 64, "num_warps": 4, "num_stages": 3,
              "split_k": 3, "stream_k": False}  # fmt: skip
    attention = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2}
    gluon = {"BLOCK_M": 192, "BLOCK_N": 128, "STAGES": 3, "consumers": 3}
    gluon_gemm = {"kernel": "gluon-ws", "block_m": 128, "block_n": 192, "block_k": 64,
                  "num_stages": 5, "schedule": "ping-pong"}  # fmt: skip
    swapped = {"block_m": 64, "block_n": 16, "block_k": 256, "num_warps": 4, "num_stages": 4,
               "split_k": 2, "swap_ab": True}  # fmt: skip
    configs = (cutlass, triton, attention, gluon, gluon_gemm, swapped)
    rows = [{"provider_config": json.dumps(c)} for c in configs]
    assert [own_config(r) for r in rows] == [
        "sm90-coop-128x192 heuristic/sw1",
        "128x128x64 w4 s3 split-K 3",
        "128x64 w8 s2",
        "192x128 3 consumers s3",
        "128x192x64 Gluon ping-pong s5",
        "64x16x256 w4 s4 split-K 2 swapped (C^T)",  # a [N, M] tile: 64 weight rows x 16 tokens
    ]
