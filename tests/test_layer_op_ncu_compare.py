"""scripts/layer_op_ncu_compare.py on the CPU: it prepares providers as a sweep does, checks each
against the fp32 reference and prints the launch order ncu's report follows."""

from __future__ import annotations

from script_module import load_script

ncu = load_script("layer_op_ncu_compare")


def test_prints_each_provider_in_launch_order_with_its_check(capsys):
    ncu.main(["add_rmsnorm", "3", "256", "own-triton", "torch-eager", "--device", "cpu"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("add_rmsnorm m 3 n 256 bf16")
    assert [line.split()[:2] for line in lines[1:]] == [["own-triton", "ok"], ["torch-eager", "ok"]]
    assert "'kernel': 'add_rmsnorm'" in lines[1]
