"""scripts/provider_ncu_compare.py on the CPU: it builds the op's problem from key=value words,
prepares each provider as a sweep does, checks it against the fp32 reference and prints the
launch order ncu's report follows; bad words exit 2 in one line."""

from __future__ import annotations

import pytest
from script_module import load_script

ncu = load_script("provider_ncu_compare")

SMALL = ["batch=1", "q_heads=2", "kv_heads=1", "q_len=64", "kv_len=64", "head_dim=64"]


def test_prints_each_provider_in_launch_order_with_its_check(capsys):
    args = ["attention", *SMALL, "causal=true", "dtype=fp16", "own-triton", "sdpa-math"]
    assert ncu.main([*args, "--device", "cpu"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("attention batch=1 q_heads=2") and "causal=true" in lines[0]
    assert [line.split()[:2] for line in lines[1:]] == [["own-triton", "ok"], ["sdpa-math", "ok"]]


def test_a_layer_op_is_one_more_op(capsys):
    """The decoder layer's small ops (session 84 profiled RMSNorm with a launcher of its own)."""
    args = ["add_rmsnorm", "m=3", "n=256", "own-triton", "torch-eager", "--device", "cpu"]
    assert ncu.main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("add_rmsnorm m=3 n=256")
    assert [line.split()[:2] for line in lines[1:]] == [["own-triton", "ok"], ["torch-eager", "ok"]]
    assert "'kernel': 'add_rmsnorm'" in lines[1]


def test_the_problem_takes_yaml_values():
    problem = ncu.problem_of("attention", [*SMALL, "causal=true", "dtype=fp16"])
    assert problem.causal is True and problem.q_len == 64 and problem.dtype == "fp16"


@pytest.mark.parametrize(
    ("words", "says"),
    [
        (["attention", "q_lenn=4", "sdpa-math"], "'q_lenn' is not a field of attention"),
        (["attentio", "q_len=4", "sdpa-math"], "op: 'attentio'; allowed:"),
        (["attention", *SMALL, "no-such-provider"], "unknown 'no-such-provider'"),
        (["attention", *SMALL], "no provider named"),
    ],
)
def test_bad_words_exit_2_in_one_line(words, says, capsys):
    assert ncu.main([*words, "--device", "cpu"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err


def test_a_provider_this_machine_lacks_is_said_and_the_rest_run(capsys):
    args = ["attention", *SMALL, "causal=true", "dtype=fp16", "flash-attn-4", "sdpa-math"]
    assert ncu.main([*args, "--device", "cpu"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["sdpa-math", "ok"]
    assert lines[2].split()[:2] == ["flash-attn-4", "skipped:"]


def _stand_in(monkeypatch, real, name: str, prepare) -> None:
    """The script's registry, with provider `name` supported everywhere and prepared by
    `prepare(problem, inputs, device)`; every other provider is the real one."""

    class Provider:
        def why_not(self, problem, device):
            return None

        def prepare(self, problem, inputs, device):
            return prepare(problem, inputs, device)

    class Registry:
        def get(self, op, provider):
            return Provider() if provider == name else real.get(op, provider)

    monkeypatch.setattr(ncu, "load_all", lambda: Registry())


def test_a_wrong_output_is_said_before_it_is_profiled(monkeypatch, capsys):
    """A fast wrong kernel is a failure: the launch-order line says WRONG, not ok."""
    import torch

    real = ncu.load_all()

    class Zeros:
        config = {"kernel": "zeros"}
        external = None

        def __init__(self, like):
            self.like = like

        def run(self):
            return torch.zeros_like(self.like)

        def output(self, raw):
            return raw

    def zeros(problem, inputs, device):
        return Zeros(real.get("attention", "sdpa-math").prepare(problem, inputs, device).run())

    _stand_in(monkeypatch, real, "zeros", zeros)
    assert ncu.main(["attention", *SMALL, "zeros", "sdpa-math", "--device", "cpu"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["zeros", "WRONG:"]
    assert lines[2].split()[:2] == ["sdpa-math", "ok"]


def test_a_provider_that_refuses_on_preparing_is_said_and_the_rest_run(monkeypatch, capsys):
    from harness.providers.registry import Unsupported

    real = ncu.load_all()

    def refuses(problem, inputs, device):
        raise Unsupported("no such tile here")

    _stand_in(monkeypatch, real, "refuses", refuses)
    assert ncu.main(["attention", *SMALL, "refuses", "sdpa-math", "--device", "cpu"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["sdpa-math", "ok"]
    assert lines[2].split()[:3] == ["refuses", "skipped:", "no"]
