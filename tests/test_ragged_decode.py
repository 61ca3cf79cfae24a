"""A ragged paged-decode batch measured end to end on the CPU (Triton interpreter): own Triton
checked against the per-sequence reference, the gather strawman refusing, and the rows saying
ragged with FLOPs counted per sequence (issue 21.3)."""

from __future__ import annotations

from harness import store
from harness.cli import main
from harness.problems import AttentionProblem


def test_a_ragged_batch_is_measured_checked_and_recorded(tmp_path):
    rc = main(
        [
            "run",
            "sweep=fmha_decode_serving",
            "device=cpu",
            "sweep.groups.0.providers=[own-triton,sdpa-paged-gather]",
            "sweep.groups.0.product={q_len:[2],kv_heads:[1],ragged:[true],page_size:[16],"
            "batch:[3],kv_len:[40]}",
            "sweep.groups.0.fixed={q_heads:4,head_dim:64,dtype:fp16,causal:true,kv_layout:paged}",
            "protocol.max_time_s=0.1",
            "progress=false",
            f"results_dir={tmp_path}",
            "run_id=r",
        ]
    )
    assert rc == 0
    df = store.read_rows(tmp_path / "r").set_index("provider")
    problem = AttentionProblem(3, 4, 1, 2, 40, 64, True, "fp16", "paged", 16, ragged=True)
    own = df.loc["own-triton"]
    assert own.status == "ok" and own.rel_err <= own.tolerance  # against each sequence's length
    assert bool(own.ragged) and own.flops == problem.flops() < problem.batch * 4 * 4 * 64 * 2 * 40
    assert own.problem.endswith("paged16 ragged fp16")
    gather = df.loc["sdpa-paged-gather"]
    assert gather.status == "skipped" and "ragged" in gather.reason
