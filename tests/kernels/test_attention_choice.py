"""own-triton's prefill picks the `tl` or the Gluon FMHA (attention_choice.py): which launch is
returned, what its config records, and that the CPU interpreter path still computes attention."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
from harness_kernels import capped_retime  # noqa: E402
from harness_kernels.triton import attention_choice  # noqa: E402
from harness_kernels.triton.attention_gluon import GluonUnsupported  # noqa: E402
from harness_kernels.triton.attention_launch import AttentionLaunch  # noqa: E402
from harness_kernels.triton.kernel_choice import ATTENTION_FAMILY, Choice  # noqa: E402

pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim:DeprecationWarning"
)


class _FakeGpuTensor:
    """What prepare_best_attention reads of q / k / v on a GPU, without one."""

    device = torch.device("cuda")
    dtype = torch.bfloat16

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = torch.Size(shape)


def _launch(kernel: str, tile: tuple[int, int], tune_ms: float | None) -> AttentionLaunch:
    config = dict(kernel=kernel, BLOCK_M=tile[0], BLOCK_N=tile[1], tune_key=f"{kernel}-key")
    if tune_ms is not None:
        config["tune_ms"] = tune_ms
    return AttentionLaunch(torch.empty(1), None, config, [lambda: None])


@pytest.fixture
def fakes(monkeypatch):
    """Fake tuned `tl` and Gluon launches and a recording `choose`; returns what choose got."""
    seen: dict = {}
    made = {"tl": _launch("attn_prefill", (128, 64), 2.0)}
    made["gluon"] = _launch("attn_prefill_gluon", (128, 128), 1.8)

    def prepare_attention(q, k, v, *, causal, rung):
        assert rung == "full"
        return made["tl"]

    def prepare_gluon_attention(q, k, v, *, causal):
        if isinstance(made["gluon"], Exception):
            raise made["gluon"]
        return made["gluon"]

    def choose(tl, gluon, sides, problem, device, device_name, sources, capped, family):
        seen.update(sides=sides, capped=capped, family=family, sources=sources)
        burst = seen.get("burst", (None, None))
        return Choice(seen.get("winner", "gluon-ws"), 2.1, 1.9, "timed", "capped", *burst)

    monkeypatch.setattr(attention_choice, "prepare_attention", prepare_attention)
    monkeypatch.setattr(attention_choice, "prepare_gluon_attention", prepare_gluon_attention)
    monkeypatch.setattr(attention_choice, "choose", choose)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "Fake H100")
    return made, seen


def _prepare():
    q, kv = _FakeGpuTensor((4, 32, 4096, 128)), _FakeGpuTensor((4, 8, 4096, 128))
    return attention_choice.prepare_best_attention(q, kv, kv, causal=True)


def test_the_faster_gluon_launch_runs_with_both_sides_recorded(fakes):
    made, seen = fakes
    launch = _prepare()
    assert launch is made["gluon"]
    cfg = launch.config
    assert cfg["choice"] == "gluon" and cfg["choice_source"] == "timed"
    assert (cfg["tl_tuned_ms"], cfg["gluon_tuned_ms"]) == (2.0, 1.8)
    assert (cfg["choice_tl_ms"], cfg["choice_gluon_ms"]) == (2.1, 1.9)
    assert (cfg["tl_tile"], cfg["gluon_tile"]) == ("128x64", "128x128")
    # decisions are stored apart from the GEMM's, keyed by both tuned choices, timed at the cap
    # (2 ms >= capped_retime.MIN_MS), and re-tuned when the choice module changes
    assert seen["family"] == ATTENTION_FAMILY and seen["capped"] is True
    assert seen["sides"] == ("tl attn_prefill-key 128x64", "gluon attn_prefill_gluon-key 128x128")
    assert "triton/kernel_choice.py" in seen["sources"]


def test_the_tl_launch_runs_where_it_re_times_faster(fakes):
    made, seen = fakes
    seen["winner"] = "tl"
    launch = _prepare()
    assert launch is made["tl"] and launch.config["choice"] == "tl"
    assert launch.config["choice_gluon_ms"] == 1.9  # what it beat stays on record


def test_a_burst_decided_choice_records_the_burst_pair_beside_the_capped_one(fakes):
    """Where the capped pair was within the noise and a burst pair decided, the row carries
    both: the capped pair may favour the side that did not run."""
    made, seen = fakes
    assert "choice_burst_tl_ms" not in _prepare().config  # decided at the cap: no burst pair
    seen.update(winner="tl", burst=(1.7, 1.75))
    cfg = _prepare().config
    assert cfg["choice"] == "tl" and (cfg["choice_tl_ms"], cfg["choice_gluon_ms"]) == (2.1, 1.9)
    assert (cfg["choice_burst_tl_ms"], cfg["choice_burst_gluon_ms"]) == (1.7, 1.75)


def test_a_short_kernel_is_re_timed_in_bursts_and_an_untuned_tl_side_uses_gluon_s_time(fakes):
    made, seen = fakes
    made["tl"] = _launch("attn_prefill", (128, 64), capped_retime.MIN_MS / 2)
    _prepare()
    assert seen["capped"] is False
    made["tl"] = _launch("attn_prefill", (128, 64), None)  # one candidate: nothing timed
    _prepare()
    assert seen["capped"] is True  # the Gluon side's 1.8 ms says heavy


def test_where_the_gluon_kernel_cannot_run_the_tl_launch_says_why(fakes):
    made, seen = fakes
    made["gluon"] = GluonUnsupported("the Gluon FMHA runs on sm_90 only")
    launch = _prepare()
    assert launch is made["tl"] and launch.config["choice"] == "tl"
    assert launch.config["gluon"] == "not run: the Gluon FMHA runs on sm_90 only"
    assert "sides" not in seen  # nothing re-timed


def test_on_the_cpu_interpreter_the_tl_kernel_runs_alone_and_is_correct():
    torch.manual_seed(0)
    q = torch.randn(1, 2, 40, 64, dtype=torch.float16)
    k, v = (
        torch.randn(1, 1, 40, 64, dtype=torch.float16),
        torch.randn(1, 1, 40, 64, dtype=torch.float16),
    )
    launch = attention_choice.prepare_best_attention(q, k, v, causal=True)
    assert launch.config["choice"] == "tl" and launch.config["gluon"] == "not run: no GPU"
    out = launch()
    kk, vv = (t.float().repeat_interleave(2, dim=1) for t in (k, v))
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kk, vv, is_causal=True)
    assert torch.allclose(out.float(), ref, atol=4e-3, rtol=0)


def test_the_providers_route_prefill_through_the_choice_and_no_gluon_around_it(monkeypatch):
    from harness_kernels.triton import attention_prefill

    from harness.device import get_device
    from harness.problems import AttentionProblem
    from harness.providers import load_all

    calls: list[tuple] = []

    def best(q, k, v, *, causal):
        calls.append(("best", causal))
        return _launch("attn_prefill_gluon", (128, 128), 1.0)

    def tl_only(q, k, v, *, causal, rung):
        calls.append(("tl", rung))
        return _launch("attn_prefill", (128, 64), 1.0)

    monkeypatch.setattr(attention_choice, "prepare_best_attention", best)
    monkeypatch.setattr(attention_prefill, "prepare_attention", tl_only)
    registry, cpu = load_all(), get_device("cpu")
    problem = AttentionProblem(
        batch=1, q_heads=2, kv_heads=1, q_len=40, kv_len=40, head_dim=64, causal=True
    )
    inputs = problem.make_inputs(0, "randn", torch.device("cpu"))
    registry.get("attention", "own-triton").prepare(problem, inputs, cpu)
    no_gluon = registry.get("attention", "own-triton-no-gluon").prepare(problem, inputs, cpu)
    assert calls == [("best", True), ("tl", "full")]  # no-gluon: the full `tl` kernel alone
    assert no_gluon.config["variant"] == "no-gluon"
    decode = AttentionProblem(
        batch=1, q_heads=2, kv_heads=1, q_len=1, kv_len=40, head_dim=64, causal=True
    )
    # decode takes no-gluon too: the `tl` decode kernel alone (attention_decode.py)
    assert registry.get("attention", "own-triton-no-gluon").why_not(decode, cpu) is None
    assert "prefill rung" in registry.get("attention", "own-triton-q-reload").why_not(decode, cpu)


def test_a_gluon_tuner_that_finds_nothing_that_runs_leaves_the_tl_kernel(fakes):
    made, seen = fakes
    made["gluon"] = RuntimeError("no candidate config compiled and ran: [...]")
    launch = _prepare()
    assert launch is made["tl"] and launch.config["choice"] == "tl"
    assert launch.config["gluon"].startswith("failed: RuntimeError: no candidate config")
