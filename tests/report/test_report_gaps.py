"""Own vs vendor gap analysis: work units from recorded configs, SM fill, reasons, summaries."""

import json
import math

import pandas as pd
import pytest
from report_fixtures import ceiling_row, speed_row, write_run

from harness.report import gap_reasons, gaps, kernel_configs
from harness.report.data import load

GEMM = {"dtype": "bf16", "layout": "nt", "batch": 1}


def _write_ceilings(root) -> None:
    """The H200's measured ceilings (ridge 760e12 / 4300e9 = 177 FLOP/B) as a run under root."""
    write_run(
        root,
        "ceilings",
        [
            ceiling_row("h200", m, v, "ceilings")
            for m, v in (("hbm_read_gbps", 4300.0), ("tensor_bf16_tflops", 760.0))
        ],
    )


def test_sm_fill_is_mean_over_busiest_sm():
    assert kernel_configs.sm_fill(80, 132) == pytest.approx(80 / 132)  # 52 SMs idle
    assert kernel_configs.sm_fill(264, 132) == 1.0
    assert kernel_configs.sm_fill(133, 132) == pytest.approx(
        (133 / 132) / 2
    )  # one SM runs a second unit
    assert kernel_configs.sm_fill(None, 132) is None and kernel_configs.sm_fill(10, None) is None


def _row(cfg: dict, **axes) -> dict:
    return {"provider_config": json.dumps(cfg), **axes}


@pytest.mark.parametrize(
    ("cfg", "axes", "units"),
    [
        ({"units": 240, "split_k": 3}, {}, 240),  # own Triton GEMM records tiles x splits
        (
            {"library": "own-cutlass", "tile": "128x256x64", "run_options": "data-parallel/sw1"},
            {"m": 256, "n": 10240},
            2 * 40,
        ),
        (
            {"library": "own-cutlass", "tile": "128x256x64", "run_options": "split-kx3/sw1"},
            {"m": 256, "n": 10240},
            2 * 40 * 3,
        ),
        (
            {
                "library": "own-cutlass",
                "tile": "64x32x64",
                "swap_ab": True,
                "run_options": "heuristic/sw1",
                "scheduler": "persistent",  # as sm90_gemm.cu records it
            },
            {"m": 16, "n": 4096},
            (4096 // 64) * 1,
        ),  # swapped: tile rows run along N
        (
            {"library": "own-cutlass", "tile": "128x128x64", "run_options": "stream-k/sw1"},
            {"m": 256, "n": 4096},
            None,
        ),  # stream-K balances the SMs itself
        (  # the stream-K scheduler's heuristic split K (a workspace): how, the row does not say
            {
                "library": "own-cutlass",
                "tile": "128x128x32",
                "run_options": "heuristic/sw1",
                "scheduler": "stream-k",
                "workspace_bytes": 2097408,
            },
            {"m": 128, "n": 4096},
            None,
        ),
        (  # ... or ran data-parallel (no workspace): one unit per output tile
            {
                "library": "own-cutlass",
                "tile": "128x128x32",
                "run_options": "heuristic/sw1",
                "scheduler": "stream-k",
                "workspace_bytes": 0,
            },
            {"m": 128, "n": 4096},
            32,
        ),
        ({"units": 80, "stream_k": True}, {}, None),  # stream-K: equal shares, no tail
        ({"kernel": "attn_decode", "programs": 120}, {}, 120),
        (  # own-triton's prefill that chose its Gluon kernel: one program per Q block and head
            {"kernel": "attn_prefill_gluon", "BLOCK_M": 128},
            {"batch": 2, "q_heads": 32, "q_len": 1000, "causal": False},
            2 * 32 * 8,
        ),
        (
            {"kernel": "attn_prefill", "BLOCK_M": 128},
            {"batch": 2, "q_heads": 32, "q_len": 1000, "causal": False},
            2 * 32 * 8,
        ),
        (
            {"kernel": "attn_prefill", "BLOCK_M": 128},
            {"batch": 2, "q_heads": 32, "q_len": 1000, "causal": True},
            None,
        ),  # unequal units
        # own Triton's Gluon GEMM records its tiles (equal, on a persistent grid)
        ({"kernel": "gemm_gluon_ws", "tiles": 116, "num_programs": 116}, {}, 116),
        # ... and its split-K twins, tiles x splits (405B QKV at M 256: 64 tiles of 64x144 split 2)
        ({"kernel": "gluon-ws", "tiles": 64, "split_k": 2, "num_programs": 128}, {}, 128),
        ({}, {}, None),
    ],
)
def test_work_units_from_recorded_config(cfg, axes, units):
    assert kernel_configs.work_units(_row(cfg, **axes)) == units


def _vendor(*grids: tuple[str, str]) -> dict:
    kernels = [{"name": name, "grid": grid, "block": "384x1x1"} for name, grid in grids]
    return {"provider": "cublas", "latency_ms_median": 0.0174, **_row({"kernels": kernels})}


NVJET = "nvjet_sm90_tst_64x32_64x16_4x1_v_bz_TNT"
REDUCE = "void cublasLt::splitKreduce_kernel<32, 16, int, float>(...)"


def test_reference_ctas_reads_the_main_kernels_grid():
    assert kernel_configs.reference_ctas(_vendor((NVJET, "4x24x1"))) == 96
    # a split-K reduce is not the main kernel, wherever it is listed
    assert kernel_configs.reference_ctas(_vendor((REDUCE, "128x1x1"), (NVJET, "2x64x1"))) == 128
    assert kernel_configs.reference_ctas(_vendor((NVJET, "?"))) is None
    assert (
        kernel_configs.reference_ctas(_row({})) is None
        and kernel_configs.reference_ctas(None) is None
    )


@pytest.mark.parametrize(("grid", "tail"), [("4x24x1", False), ("2x64x1", True)])
def test_tail_is_no_reason_when_the_vendor_leaves_as_many_sms_idle(grid, tail):
    """H200 32x6144x4096: own Triton's 96 units against cuBLAS's 96 CTAs (4x24 grid) is not a
    tail the vendor avoids; against a 128-CTA grid it is."""
    from types import SimpleNamespace

    own = {"provider": "own-triton", "latency_ms_median": 0.0198, **_row({"units": 96})}
    fill = kernel_configs.sm_fill(96, 132)
    reason = gap_reasons.reason(
        0.879,
        None,
        fill,
        96,
        132,
        "memory",
        0.54,
        own,
        _vendor((NVJET, grid)),
        0.61,
        SimpleNamespace(source="datasheet"),
    )
    if tail:
        assert reason.startswith("tail: 96 units on 132 SMs")
    else:
        assert reason.startswith("memory-bound: own 54% vs cublas 61%")
        assert reason.endswith("cublas runs 96 CTAs, so the 73% fill is shared")


def test_rungs_are_providers_extending_another_own_provider():
    names = {
        "own-triton",
        "own-triton-no-tma",
        "own-cutlass",
        "own-cutlass-sm90-coop-128x256",
        "ck-fmha-register-trick",
    }
    assert gaps.rungs(names) == {"own-triton-no-tma", "own-cutlass-sm90-coop-128x256"}
    # The FA3-class FMHA is a headline kernel beside the SM80-style one; its rungs are rungs.
    fmha = {"own-cutlass", "own-cutlass-fa3", "own-cutlass-fa3-no-pingpong", "own-cutlass-sm90"}
    assert gaps.rungs(fmha) == {"own-cutlass-fa3-no-pingpong", "own-cutlass-sm90"}


@pytest.fixture(scope="module")
def gap_root(tmp_path_factory):
    """Four GEMM points on an H200 with measured ceilings (ridge 760e12 / 4300e9 = 177 FLOP/B):
    a tail (80 units), a compute-bound main-loop gap, a memory-bound gap, and a win."""
    root = tmp_path_factory.mktemp("gaps")
    points = {  # problem: (vendor ms, own ms, own units)
        (256, 10240, 8192): (0.064, 0.0862, 80),
        (512, 10240, 8192): (0.120, 0.150, 640),
        (16, 6144, 4096): (0.020, 0.025, 264),
        (8192, 8192, 8192): (1.60, 1.50, 4096),
    }
    rows = []
    for (m, n, k), (ven_ms, own_ms, units) in points.items():
        p = {"m": m, "n": n, "k": k, **GEMM}
        rows.append(
            speed_row("h200", "gemm", p, "cublas", "gemm_llama", median_ms=ven_ms, noise=0.001)
        )
        own = speed_row(
            "h200", "gemm", p, "own-triton", "gemm_llama", median_ms=own_ms, noise=0.001
        )
        own["provider_config"] = json.dumps({"units": units})
        rows.append(own)
        rung = speed_row(
            "h200", "gemm", p, "own-triton-no-tma", "ladder", median_ms=own_ms * 2, noise=0.001
        )
        rows.append(rung)
    write_run(root, "gemm_llama", rows)
    _write_ceilings(root)
    return root


@pytest.fixture(scope="module")
def gap_rows(gap_root):
    return load([gap_root])


def test_reasons_name_the_tail_the_regime_and_the_win(gap_rows):
    frame = gaps.gap_frame(gap_rows)
    own = frame[frame["own"] == "own-triton"].set_index("problem")
    assert own.loc["gemm 256x10240x8192 bf16 nt", "reason"].startswith("tail: 80 units on 132")
    main_loop = own.loc["gemm 512x10240x8192 bf16 nt"]
    assert main_loop["regime"] == "compute" and main_loop["fill"] > gap_reasons.TAIL_FILL
    assert main_loop["reason"].startswith("compute-bound: own")
    assert main_loop["ridge"] == pytest.approx(760e12 / 4300e9)
    decode = own.loc["gemm 16x6144x4096 bf16 nt"]
    assert decode["regime"] == "memory" and decode["reason"].startswith("memory-bound")
    assert decode["own_frac"] == pytest.approx(decode["reference_frac"] * 0.020 / 0.025, rel=0.01)
    assert own.loc["gemm 8192x8192x8192 bf16 nt", "reason"] == "faster than the vendor"
    assert list(frame["speedup"]) == sorted(frame["speedup"])  # worst first


def test_summary_geomean_and_headline_first(gap_rows):
    summary = gaps.gap_summary(gaps.gap_frame(gap_rows))
    assert list(summary["rung"]) == [False, True]  # own-triton before its ladder rung
    head = summary.iloc[0]
    expected = math.exp(
        sum(
            math.log(v / o)
            for v, o in ((0.064, 0.0862), (0.120, 0.150), (0.020, 0.025), (1.60, 1.50))
        )
        / 4
    )
    assert head["points"] == 4 and head["geomean"] == pytest.approx(expected, rel=0.01)
    assert head["at_par_or_better"] == pytest.approx(0.25)
    assert head["behind_by_reason"] == "compute-bound 1, memory-bound 1, tail 1"
    assert "own-triton-no-tma" not in gaps.render_worst(gaps.gap_frame(gap_rows))
    # the room at the roof: 1 / each reference's fraction of its roof, geomean over the points
    frame = gaps.gap_frame(gap_rows)
    head_rows = frame[~frame["rung"]]
    room = math.exp(sum(math.log(1 / f) for f in head_rows["reference_frac"]) / len(head_rows))
    assert head["roof_speedup"] == pytest.approx(room) and room > 1


def test_the_room_at_the_roof_skips_points_without_one():
    frame = pd.DataFrame({"reference_of_roof": [0.5, 0.8, math.nan, None]})
    assert gaps.roof_speedup(frame) == pytest.approx(math.sqrt(2 * 1.25))
    assert math.isnan(gaps.roof_speedup(pd.DataFrame({"reference_of_roof": [math.nan]})))


def test_report_has_the_gap_section(built):
    index = (built.index.parent / "index.md").read_text()
    assert "## Own vs vendor: where and why" in index
    for stem in ("gaps_summary", "gaps_room", "gaps_worst", "gaps"):
        assert (built.index.parent / "tables" / f"{stem}.md").exists()
    assert "### The room at the roof, by regime" in index
    assert "The room at the roof, by regime" in (built.index.parent / "index.html").read_text()


def test_cli_prints_summary_and_worst(gap_root, capsys):
    from harness import cli

    assert cli.main(["gaps", str(gap_root), "worst=2"]) == 0
    out = capsys.readouterr().out
    assert "gemm_llama" in out and "worst 2 points per GPU" in out
    assert "tail: 80 units on 132 SMs" in out
    assert cli.main(["gaps", str(gap_root), "worst=0"]) == 2


def test_a_compute_bound_point_at_a_lower_clock_says_so_with_the_per_cycle_ratio(tmp_path):
    # H200 gemm_llama-r5, 16384x10240x8192: both at the 700 W cap, own CUTLASS 1350 MHz
    p = {"m": 16384, "n": 10240, "k": 8192, **GEMM}
    ven = speed_row("h200", "gemm", p, "cublas", "gemm_llama", median_ms=3.84, noise=0.001)
    own = speed_row("h200", "gemm", p, "own-cutlass", "gemm_llama", median_ms=4.30, noise=0.001)
    ven.update(sm_clock_mhz=1485.0, power_w=647.0)
    own.update(sm_clock_mhz=1350.0, power_w=691.0)
    write_run(tmp_path, "gemm_llama", [ven, own])
    _write_ceilings(tmp_path)
    line = gaps.gap_frame(load([tmp_path])).iloc[0]
    per_cycle = 3.84 * 1485 / (4.30 * 1350)
    assert line["reason"] == (
        f"clock: own 1350 MHz vs cublas 1485 MHz at 691 W vs 647 W; {per_cycle:.2f}x per cycle"
    )
    # within CLOCK_GAP the clocks explain nothing: the regime rule answers
    assert gap_reasons.clock_gap({**own, "sm_clock_mhz": 1455.0}, ven) is None
    assert gap_reasons.clock_gap({**own, "sm_clock_mhz": None}, ven) is None
    # slower per cycle too (0.82x: the code, not the clock): the regime rule, clocks aside
    slow = {**own, "latency_ms_median": 5.2}
    assert gap_reasons.clock_gap(slow, ven)[0] == pytest.approx(
        3.84 * 1485 / (5.2 * 1350), rel=1e-3
    )


def test_a_kernel_the_tuner_timed_at_par_but_the_sweep_slower_is_put_down_to_its_state(tmp_path):
    # H200 gemm_llama-settled, 1x28672x4096: own CUTLASS tuned 59.3 us, timed 65.9 (p90/p10
    # 1.03), cuBLAS 58.9 us; neither row power-capped
    p = {"m": 1, "n": 28672, "k": 4096, **GEMM}
    ven = speed_row("h200", "gemm", p, "cublas", "gemm_llama", median_ms=0.0589, noise=0.001)
    own = speed_row("h200", "gemm", p, "own-cutlass", "gemm_llama", median_ms=0.0659, noise=0.001)
    own["provider_config"] = json.dumps({"library": "own-cutlass", "tuned_ms": 0.0593})
    write_run(tmp_path, "gemm_llama", [ven, own])
    line = gaps.gap_frame(load([tmp_path])).iloc[0]
    assert line["reason"] == (
        "state: tuned 59.3 us (vs cublas 58.9 us), timed 65.9 us: the kernel ran in another "
        "state when the sweep timed it"
    )
    # at the power cap the tuner's shorter window is a better power state: not this rule
    assert gap_reasons.state_gap({**own, "throttle_reasons": "sw_power_cap"}, ven) is None
    # tuned within 5% of the sweep's time, or tuned behind the vendor: the other rules answer
    near = {**own, "provider_config": json.dumps({"tuned_ms": 0.0630})}
    behind = {**own, "provider_config": json.dumps({"tuned_ms": 0.0610})}
    assert gap_reasons.state_gap(near, ven) is None and gap_reasons.state_gap(behind, ven) is None
    # a decision read from the disk cache that nothing ties to this GPU (written before tuned_on,
    # or on another machine of the same GPU name), or own Triton's tl / Gluon choice read from
    # disk: a machine apart is no state, so not this rule
    for cached in (
        {"tune_source": "cache"},
        {"tune_source": "cache", "tuned_on": "GPU-another-h200"},
        {"tune_source": "cache", "tuned_on": ""},
        {"choice_source": "cache", "tuned_on": "GPU-h200"},
    ):
        cfg = {"tuned_ms": 0.0593, **cached}
        assert gap_reasons.state_gap({**own, "provider_config": json.dumps(cfg)}, ven) is None


def test_a_decision_this_gpu_timed_in_an_earlier_process_still_names_the_state(tmp_path):
    # H200 gemm_llama-tunepass (session 44), 4x28672x4096: the tune pass read own CUTLASS's
    # decision from the tune cache that an earlier process on the same GPU wrote (59.1 us),
    # the sweep timed 67.3 us, cuBLAS 58.2; eight fresh processes later ran it at 58.7-66.4 us
    p = {"m": 4, "n": 28672, "k": 4096, **GEMM}
    ven = speed_row("h200", "gemm", p, "cublas", "gemm_llama", median_ms=0.0582, noise=0.001)
    own = speed_row("h200", "gemm", p, "own-cutlass", "gemm_llama", median_ms=0.0673, noise=0.001)
    cfg = {"tuned_ms": 0.0591, "tune_source": "cache", "tuned_on": own["device_uuid"]}
    own["provider_config"] = json.dumps(cfg)
    write_run(tmp_path, "gemm_llama", [ven, own])
    line = gaps.gap_frame(load([tmp_path])).iloc[0]
    assert line["reason"] == (
        "state: tuned 59.1 us in an earlier process on this GPU (vs cublas 58.2 us), timed "
        "67.3 us: the kernel ran in another state when the sweep timed it"
    )


def test_the_tuned_time_is_the_deciding_re_time_where_own_triton_chose_a_kernel():
    chose = {"tuned_ms": 0.080, "choice_tl_ms": 0.075, "choice_gluon_ms": 0.071}
    assert gap_reasons.tuned_ms(chose) == 0.071  # nothing names the side that ran: the faster one
    # a pair within the noise that bursts decided may run its slower capped side: read that one
    assert gap_reasons.tuned_ms({**chose, "kernel": "tl"}) == 0.075  # the GEMM names it `kernel`
    assert gap_reasons.tuned_ms({**chose, "kernel": "gluon-ws"}) == 0.071
    # the prefill names it `choice`; its rows carry `kernel` too, the launch's name
    assert gap_reasons.tuned_ms({**chose, "kernel": "attn_prefill", "choice": "tl"}) == 0.075
    assert (
        gap_reasons.tuned_ms({**chose, "kernel": "attn_prefill_gluon", "choice": "gluon"}) == 0.071
    )
    assert gap_reasons.tuned_ms({"tuned_ms": 0.080}) == 0.080  # own CUTLASS, own Triton's GEMM
    assert gap_reasons.tuned_ms({"tune_ms": 1.27}) == 1.27  # the attention tuners
    assert gap_reasons.tuned_ms({"tuned": False}) is None


def test_a_reference_timed_on_another_gpu_of_the_model_is_flagged(tmp_path):
    """Two H200s differ by a few percent: a ratio whose vendor row came from another machine
    (another run, or a run resumed elsewhere) says so per point and per summary line."""
    p1 = {"m": 1024, "n": 10240, "k": 8192, **GEMM}
    p2 = {"m": 2048, "n": 10240, "k": 8192, **GEMM}
    rows = [
        speed_row("h200", "gemm", p1, "cublas", "r", median_ms=0.245),
        speed_row("h200", "gemm", p1, "own-cutlass", "r", median_ms=0.239),
        speed_row("h200", "gemm", p2, "cublas", "r", median_ms=0.501),
        {
            **speed_row("h200", "gemm", p2, "own-cutlass", "r", median_ms=0.495),
            "device_uuid": "GPU-another-h200",
        },
    ]
    write_run(tmp_path, "r", rows)
    frame = gaps.gap_frame(load([tmp_path]))
    by_m = {
        int(p.split("x")[0].split()[-1]): g
        for p, g in zip(frame["problem"], frame["reference_gpu"], strict=True)
    }
    assert by_m == {1024: "same", 2048: "other"}
    line = gaps.gap_summary(frame).iloc[0]
    assert line["points"] == 2 and line["reference_on_other_gpu"] == 1
    assert "reference_gpu" in gaps.render_worst(frame)
    assert gaps.same_gpu({"device_uuid": None}, {"device_uuid": "GPU-x"}) == ""
    assert gaps.same_gpu({"device_uuid": "GPU-x"}, None) == ""


@pytest.mark.parametrize(
    ("cfg", "shown"),
    [
        (  # H200 fmha_decode_serving-s58, batch 16, GQA 8, q_len 8, KV 4k, ragged
            {
                "kernel": "attn_decode",
                "BLOCK_M": 64,
                "BLOCK_N": 64,
                "num_warps": 4,
                "num_stages": 6,
                "num_splits": 4,
                "split_by": "longest",
                "max_kv_len": 4096,
            },
            "64x64 w4 s6, 4 splits of <= 1,024 keys (by the longest)",
        ),
        (
            {
                "kernel": "attn_decode",
                "BLOCK_M": 16,
                "BLOCK_N": 64,
                "num_warps": 4,
                "num_stages": 3,
                "num_splits": 8,
                "split_by": "length",
                "max_kv_len": 4096,
            },
            "16x64 w4 s3, 8 splits of <= 512 keys (by the own length)",
        ),
        (  # H200 fmha_decode_balanced-q1-s66: num_splits is the unit's partial slots
            {
                "kernel": "attn_decode",
                "BLOCK_M": 64,
                "BLOCK_N": 64,
                "num_warps": 4,
                "num_stages": 4,
                "num_splits": 4,
                "split_by": "balanced",
                "balanced_ctas": 132,
                "balanced_tiles_per_cta": 12,
                "max_kv_len": 16384,
            },
            "64x64 w4 s4, balanced runs of >= 768 keys on 132 CTAs",
        ),
        (  # the Gluon decode's items dealt to its CTAs longest first (session 67)
            {
                "kernel": "attn_decode",
                "BLOCK_M": 64,
                "BLOCK_N": 128,
                "num_warps": 4,
                "num_stages": 2,
                "num_splits": 2,
                "split_by": "longest",
                "max_kv_len": 16384,
                "item_order": "longest-first",
            },
            "64x128 w4 s2, 2 splits of <= 8,192 keys (by the longest), items longest first",
        ),
        (  # one split: the tile alone
            {
                "kernel": "attn_decode",
                "BLOCK_M": 16,
                "BLOCK_N": 128,
                "num_warps": 4,
                "num_stages": 6,
                "num_splits": 1,
                "max_kv_len": 16384,
            },
            "16x128 w4 s6",
        ),
        (  # prefill: no splits
            {
                "kernel": "attn_prefill",
                "BLOCK_M": 128,
                "BLOCK_N": 64,
                "num_warps": 8,
                "num_stages": 3,
            },
            "128x64 w8 s3",
        ),
        (  # the Gluon FMHA: its order since session 101, none before
            {
                "kernel": "attn_prefill_gluon",
                "BLOCK_M": 128,
                "BLOCK_N": 64,
                "STAGES": 4,
                "consumers": 2,
                "persistent": True,
                "order": "every head's longest tiles first, in snake rounds",
            },
            "128x64 2 consumers s4, persistent, every head's longest tiles first, in snake rounds",
        ),
        (  # ping-pong since session 102
            {
                "kernel": "attn_prefill_gluon",
                "BLOCK_M": 128,
                "BLOCK_N": 128,
                "STAGES": 2,
                "consumers": 2,
                "persistent": False,
                "pingpong": True,
                "order": "head by head, longest tile first",
            },
            "128x128 2 consumers s2, ping-pong, head by head, longest tile first",
        ),
        (
            {"BLOCK_M": 128, "BLOCK_N": 128, "STAGES": 3, "consumers": 2, "persistent": False},
            "128x128 2 consumers s3",
        ),
    ],
)
def test_own_config_names_a_decodes_splits_and_the_keys_each_program_streams(cfg, shown):
    assert kernel_configs.own_config(_row(cfg)) == shown


def test_a_compute_bound_attention_point_names_what_its_exponentials_need(tmp_path):
    """H200 fmha_prefill-dyn-s62, D 64, 4k, non-causal: own fa3 427 TFLOP/s against cuDNN's 451,
    both far under the tensor peak because at head_dim 64 the exponentials (one per score, 16
    per clock per SM) need about as long as the matmuls (256 FLOP per score)."""
    p = {
        **{"batch": 4, "q_heads": 32, "kv_heads": 8, "q_len": 4096, "kv_len": 4096},
        **{"head_dim": 64, "causal": False, "dtype": "bf16", "kv_layout": "dense", "page_size": 0},
    }
    ven = speed_row("h200", "attention", p, "sdpa-cudnn", "fmha_prefill", median_ms=0.610)
    ven["family"] = "vendor"
    own = speed_row("h200", "attention", p, "own-cutlass-fa3", "fmha_prefill", median_ms=0.644)
    write_run(tmp_path, "fmha_prefill", [ven, own])
    line = gaps.gap_frame(load([tmp_path])).iloc[0]
    share = 989.4 / (66.9 / 16) / (4 * 64)  # the H200 SXM datasheet: bf16 and FP32 FMA peaks
    assert line["softmax_share"] == pytest.approx(share) and 0.9 < share < 0.95
    assert line["reason"].startswith("compute-bound: own")
    assert line["reason"].endswith(
        f"its exponentials alone need {share:.0%} of the tensor time at head_dim 64 "
        "(SFU rate, datasheet)"
    )
    # twice the head_dim, half the share; a GEMM row has none, nor a GPU off the datasheet
    peaks = gaps.device_peaks(load([tmp_path]))["NVIDIA H200"]
    assert gap_reasons.softmax_share({**own, "head_dim": 128}, peaks) == pytest.approx(share / 2)
    assert gap_reasons.softmax_share({**own, "op": "gemm"}, peaks) is None
    assert gap_reasons.softmax_share(own, None) is None


def _read_once_row(nbytes: float, gbps: float, provider: str = "triton-stream") -> dict:
    """A probes_read_once row: one cold pass over `nbytes` on the H200."""
    row = ceiling_row("h200", "read", gbps, "read_once")
    row.update(
        op="memory",
        provider=provider,
        family="probe",
        working_set_bytes=nbytes,
        traffic_bytes=nbytes,
        point_key=f"read{int(nbytes)}{provider}"[:20],
        gbps=gbps,
        tflops=None,
    )
    return row


def test_a_memory_bound_point_is_set_against_a_cold_read_of_its_own_bytes(tmp_path):
    """With a read-once run among the rows, a memory-bound point's roof is one cold pass over
    its bytes (a 50 MB decode GEMM cannot read at the 4.3 TB/s ceiling): the reason names it,
    and the room at the roof uses it; a compute-bound point keeps the tensor peak."""
    mem = {"m": 16, "n": 6144, "k": 4096, **GEMM}
    big = {"m": 8192, "n": 8192, "k": 8192, **GEMM}
    rows = []
    for p, ven_ms, own_ms in ((mem, 0.020, 0.025), (big, 1.60, 1.50)):
        rows.append(speed_row("h200", "gemm", p, "cublas", "gemm_llama", median_ms=ven_ms))
        rows.append(speed_row("h200", "gemm", p, "own-triton", "gemm_llama", median_ms=own_ms))
    write_run(tmp_path, "gemm_llama", rows)
    _write_ceilings(tmp_path)
    reads = [_read_once_row(1e7, 2000.0), _read_once_row(1e9, 4000.0)]
    reads.append(_read_once_row(1e7, 2100.0, "torch-stream"))  # the faster one at 10 MB
    write_run(tmp_path, "read_once", reads)
    frame = gaps.gap_frame(load([tmp_path])).set_index("problem")
    m = frame.loc[next(p for p in frame.index if p.startswith("gemm 16x"))]
    c = frame.loc[next(p for p in frame.index if p.startswith("gemm 8192x"))]
    nbytes = speed_row("h200", "gemm", mem, "cublas", "x")["min_bytes"]
    frac = math.log(nbytes / 1e7) / math.log(100)
    expect = 2100.0 + (4000.0 - 2100.0) * frac  # linear in log bytes between the two sizes
    assert m["regime"] == "memory" and m["read_once_gbps"] == pytest.approx(expect)
    ven_gbps = nbytes / (m["reference_ms"] * 1e-3) / 1e9
    assert m["reference_of_read_once"] == pytest.approx(ven_gbps / expect, rel=0.02)
    assert "a cold read of these bytes runs" in m["reason"]
    assert c["regime"] == "compute" and pd.isna(c["read_once_gbps"])
    room = math.sqrt((1 / m["reference_of_read_once"]) * (1 / c["reference_frac"]))
    line = gaps.gap_summary(frame.reset_index()).iloc[0]
    assert line["roof_speedup"] == pytest.approx(room)
    # without the read-once run the same point's roof is the HBM read ceiling
    (tmp_path / "read_once").rename(tmp_path.parent / f"{tmp_path.name}-aside")
    plain = gaps.gap_frame(load([tmp_path])).set_index("problem").loc[m.name]
    assert pd.isna(plain["read_once_gbps"]) and "cold read" not in plain["reason"]


def test_a_compute_bound_point_whose_bytes_read_slower_than_its_flops_has_the_read_as_roof(
    tmp_path,
):
    """Just past the ridge (177 FLOP/B here) a GEMM's one cold read can take longer than its
    FLOPs at the peak: 256x4096x4096 bf16 (228 FLOP/B, 37.7 MB) needs 11.3 us at 760 TFLOP/s
    but 14.2 us to read at this curve's 2,648 GB/s, so its roof is the read, not the peak."""
    p = {"m": 256, "n": 4096, "k": 4096, **GEMM}
    rows = [
        speed_row("h200", "gemm", p, "cublas", "gemm_llama", median_ms=0.020),
        speed_row("h200", "gemm", p, "own-triton", "gemm_llama", median_ms=0.021),
    ]
    write_run(tmp_path, "gemm_llama", rows)
    _write_ceilings(tmp_path)
    write_run(tmp_path, "read_once", [_read_once_row(1e7, 2100.0), _read_once_row(1e9, 4000.0)])
    line = gaps.gap_frame(load([tmp_path])).iloc[0]
    assert line["regime"] == "compute" and pd.isna(line["read_once_gbps"])
    nbytes, flops = rows[0]["min_bytes"], rows[0]["flops"]
    read_rate = 2100.0 + 1900.0 * math.log(nbytes / 1e7) / math.log(100)
    assert flops / 760e12 < nbytes / (read_rate * 1e9)  # the read is the slower
    assert line["reference_frac"] == pytest.approx(flops / 760e12 / 20e-6, rel=1e-3)
    assert line["roof"] == "cold read"
    assert line["reference_of_roof"] == pytest.approx(nbytes / (read_rate * 1e9) / 20e-6, rel=1e-3)
    assert line["reason"].startswith("compute-bound")  # the reason keeps the peak
    room = gaps.room_by_regime(gaps.gap_frame(load([tmp_path]))).iloc[0]
    assert (room["regime"], room["roof"]) == ("compute", "cold read")


def test_a_ceilings_run_is_a_roof_not_a_run_to_judge(tmp_path):
    """The ceilings run's own GEMMs (4096^3 tf32 here, at 0.7x) stay out of the judged points
    when a grid run is among the rows; alone, the ceilings run is judged."""
    grid = {"m": 16, "n": 6144, "k": 4096, **GEMM}
    cube = {"m": 4096, "n": 4096, "k": 4096, "dtype": "tf32", "layout": "nn", "batch": 1}
    rows = [speed_row("h200", "gemm", grid, prov, "grid") for prov in ("cublas", "own-triton")]
    write_run(tmp_path, "grid", rows)
    ceil = [
        ceiling_row("h200", "hbm_read_gbps", 4300.0, "ceilings"),
        ceiling_row("h200", "tensor_bf16_tflops", 760.0, "ceilings"),
        speed_row("h200", "gemm", cube, "cublas", "ceilings", median_ms=0.7),
        speed_row("h200", "gemm", cube, "own-triton", "ceilings", median_ms=1.0),
    ]
    write_run(tmp_path, "ceilings", ceil)
    frame = gaps.gap_frame(load([tmp_path]))
    assert set(frame["run"]) == {"grid"} and not frame["problem"].str.contains("tf32").any()
    assert "run" in gaps.WORST_COLUMNS
    alone = gaps.gap_frame(load([tmp_path / "ceilings"]))
    assert set(alone["run"]) == {"ceilings"}


def test_without_a_ceilings_run_the_roof_says_it_is_the_datasheets(tmp_path):
    """No ceilings run among the rows: the roof is the datasheet's, and the room table says so
    (a datasheet peak is never reached, so its room is larger than any kernel can win)."""
    p = {"m": 16, "n": 6144, "k": 4096, **GEMM}
    rows = [speed_row("h200", "gemm", p, prov, "grid") for prov in ("cublas", "own-triton")]
    write_run(tmp_path, "grid", rows)
    line = gaps.gap_frame(load([tmp_path])).iloc[0]
    assert line["roof"] == "ceiling (datasheet)"
    _write_ceilings(tmp_path)
    assert gaps.gap_frame(load([tmp_path])).iloc[0]["roof"] == "ceiling"


def test_rows_without_a_gpu_uuid_are_not_called_another_gpus():
    """A CPU row has no device_uuid (NaN in a frame): 'same' or 'other' cannot be told."""
    assert gaps.same_gpu({"device_uuid": math.nan}, {"device_uuid": math.nan}) == ""
    assert gaps.same_gpu({"device_uuid": None}, {"device_uuid": "GPU-1"}) == ""
    assert gaps.same_gpu({"device_uuid": "GPU-1"}, {"device_uuid": "GPU-1"}) == "same"
    assert gaps.same_gpu({"device_uuid": "GPU-1"}, {"device_uuid": "GPU-2"}) == "other"


def test_a_point_smaller_than_every_probe_has_no_cold_read_roof():
    """Below the smallest probed size the read rate still climbs, so the smallest size's rate
    is no roof for fewer bytes: such a point falls back to the HBM read ceiling ('ceiling')."""
    curves = {"NVIDIA H200": pd.Series({1.6e7: 2064.0, 4.3e9: 4628.0})}
    small = {"device_name": "NVIDIA H200", "min_bytes": 8e6}
    assert gap_reasons.read_once_at(small, curves) is None
    assert gap_reasons.roof_name("memory", gap_reasons.read_once_at(small, curves)) == "ceiling"
    inside = gap_reasons.read_once_at({**small, "min_bytes": 1.6e7}, curves)
    assert inside == pytest.approx(2064.0)
    assert gap_reasons.read_once_at({**small, "min_bytes": 1e10}, curves) == pytest.approx(4628.0)


def test_the_room_by_regime_splits_memory_from_compute_and_names_each_roof(gap_rows):
    """gap_root has two memory-bound points (no read-once run: the read ceiling is their roof)
    and two compute-bound ones; own's fraction of the roof is the reference's times the speedup."""
    frame = gaps.gap_frame(gap_rows)
    room = gaps.room_by_regime(frame).set_index("regime")
    assert set(room.index) == {"memory", "compute"}
    assert room.loc["memory", "roof"] == "ceiling" and room.loc["compute", "roof"] == "peak"
    head = frame[~frame["rung"]]
    for regime, line in room.iterrows():
        g = head[head["regime"] == regime]
        assert line["points"] == len(g)
        expect = math.exp(sum(math.log(v) for v in g["reference_frac"]) / len(g))
        assert line["reference_of_roof"] == pytest.approx(expect)
        own = math.exp(sum(math.log(v) for v in g["reference_frac"] * g["speedup"]) / len(g))
        assert line["own_of_roof"] == pytest.approx(own)
        assert line["room"] == pytest.approx(1 / expect)
    assert gaps.room_by_regime(frame.iloc[0:0]).empty


def test_cli_prints_the_room_by_regime(gap_root, capsys):
    from harness import cli

    assert cli.main(["gaps", str(gap_root), "worst=1"]) == 0
    assert "room at the roof by regime" in capsys.readouterr().out


def _share_reason(units: int, *grids: tuple[str, str]) -> str:
    from types import SimpleNamespace

    cfg = {"kernel": "gemm_gluon_ws", "tiles": units}
    own = {"provider": "own-triton", "latency_ms_median": 0.0299, **_row(cfg)}
    return gap_reasons.reason(
        0.863,
        None,
        kernel_configs.sm_fill(units, 132),
        units,
        132,
        "compute",
        0.57,
        own,
        _vendor(*grids),
        0.66,
        SimpleNamespace(source="datasheet"),
    )


def test_a_vendor_that_spreads_the_output_over_more_ctas_in_one_wave_is_the_reason():
    """Qwen2.5-7B 512x4608x3584 on an H200 (session 78): own Triton's 116 tiles of 128x160
    against cuBLAS's 128 CTAs of 144x128, both one wave: own's busiest SM computes 128 / 116 =
    1.10x as much of the output. A split-K vendor (unequal shares), a grid of whole waves of SMs
    (persistent: shares unknown) or a gap under 5% give no such reason."""
    tst = "nvjet_sm90_tst_144x128_64x6_1x2_h_bz_TNN"
    reason = _share_reason(116, (tst, "2x64x1"))
    assert reason == (
        "work per SM: own's busiest SM computes 1.10x as much of the output as cublas's (116 "
        "units, 1 on the busiest of 132 SMs; cublas: 128 CTAs, 1)"
    )
    for grids in (((tst + "_splitK", "2x64x1"), (REDUCE, "64x1x1")), ((tst, "2x66x1"),)):
        assert _share_reason(116, *grids).startswith("compute-bound: own 57% vs cublas 66%")
    assert _share_reason(124, (tst, "2x64x1")).startswith("compute-bound")  # 1.03x


def test_a_vendor_kernel_in_clusters_is_named_beside_an_unclustered_own_kernel():
    """Llama-3.1-405B's fused QKV at M 256 on an H200 (session 83): cuBLAS's split-K kernel runs
    1x2 clusters (its name says so), own Triton's Gluon split GEMM none, and ncu found ours moving
    27% more bytes through L2. The reason says so; not where the own kernel clusters (own CUTLASS
    records "2x1") or the vendor's is 1x1, and a name without a cluster gives none."""
    from types import SimpleNamespace

    qkv = "nvjet_sm90_tst_144x128_64x6_1x2_h_bz_splitK_TNN"
    assert kernel_configs.reference_cluster(_vendor((REDUCE, "72x8x1"), (qkv, "2x64x1"))) == "1x2"
    assert kernel_configs.reference_cluster(_vendor((NVJET, "4x24x1"))) == "4x1"
    plain = "nvjet_sm90_tst_128x128_64x6_1x1_h_bz_TNN"
    assert kernel_configs.reference_cluster(_vendor((plain, "2x64x1"))) is None
    assert kernel_configs.reference_cluster(_vendor((REDUCE, "72x8x1"))) is None
    assert kernel_configs.reference_cluster(_row({})) is None

    def reason(own_cfg: dict, name: str) -> str:
        own = {"provider": "own-triton", "latency_ms_median": 0.0395, **_row(own_cfg)}
        return gap_reasons.reason(
            0.853,
            None,
            0.97,
            128,
            132,
            "compute",
            0.49,
            own,
            _vendor((name, "2x64x1"), (REDUCE, "72x8x1")),
            0.58,
            SimpleNamespace(source="datasheet"),
        )

    gluon = {"kernel": "gluon-ws", "tiles": 64, "split_k": 2, "num_programs": 128}
    assert reason(gluon, qkv) == (
        "compute-bound: own 49% vs cublas 58% of tensor peak (datasheet); cublas's kernel runs "
        "1x2 CTA clusters (a TMA load can feed each CTA of one), own none"
    )
    assert "clusters" not in reason({**gluon, "cluster": "2x1"}, qkv)
    assert "clusters" not in reason(gluon, plain)
