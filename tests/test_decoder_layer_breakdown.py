"""scripts/decoder_layer_breakdown.py: the kernels of one graph replay matched to the layer's
steps (the script itself needs an NVIDIA GPU; this is its CPU-checkable part)."""

from __future__ import annotations

from script_module import load_script

breakdown = load_script("decoder_layer_breakdown")


def test_kernels_go_to_the_steps_that_launch_them_in_order():
    steps = [["norm"], ["gemm"], ["split", "reduce"], ["gemm"]]
    replay = ["norm", "gemm", "split", "reduce", "gemm"]
    assert breakdown.assign_kernels(replay, steps) == [0, 1, 2, 2, 3]


def test_a_graph_only_node_counts_with_the_step_before_it():
    steps = [["norm"], ["gemm"], ["act"], ["gemm"]]
    # a memset the graph holds between steps, and one that leads the replay
    assert breakdown.assign_kernels(["norm", "gemm", "Memset", "act", "gemm"], steps) == [
        0, 1, 1, 2, 3,
    ]  # fmt: skip
    assert breakdown.assign_kernels(["Memset", "norm", "gemm", "act", "gemm"], steps) == [
        0, 0, 1, 2, 3,
    ]  # fmt: skip


def test_trailing_kernels_belong_to_the_last_step():
    assert breakdown.assign_kernels(["a", "b", "Memset"], [["a"], ["b"]]) == [0, 1, 1]
