"""own-triton's GEMM picks the tuned `tl` kernel or the Gluon one (gemm._gluon_if_faster), with
the tuners and the interleaved re-time stood in: which launch runs and what its config records,
on a CPU."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from harness_kernels.triton import gemm
from harness_kernels.triton.kernel_choice import Choice


def _operands(m: int = 4096):
    a = SimpleNamespace(dtype=torch.bfloat16, device=torch.device("cpu"))
    return SimpleNamespace(
        a=a, b=object(), a_scale=None, b_scale=None, out_dtype=torch.bfloat16, b_is_nk=True,
        mnk=(m, 6144, 4096),
    )  # fmt: skip


@pytest.fixture
def pick(monkeypatch):
    """Run the choice with a stood-in Gluon tuner and `choose`; returns the launch that runs,
    the Gluon launch, and what `choose` was given."""
    seen: dict = {}
    gluon = SimpleNamespace(
        config=dict(block_m=128, block_n=192, schedule="cooperative", tune_ms=0.155, tune_key="g")
    )
    monkeypatch.setattr(gemm, "prepare_gluon_matmul", lambda *a, **k: gluon)

    def choose(tl, gl, sides, problem, device, device_name, sources, capped, ties):
        seen.update(sides=sides, capped=capped, ties=ties)
        return seen["choice"]

    monkeypatch.setattr(gemm, "choose", choose)
    dev = SimpleNamespace(backend="cuda", capability=90, name="Fake H200")

    def run(choice: Choice, m: int = 4096, rung: str = "full"):
        seen["choice"] = choice
        tl = SimpleNamespace(config=dict(tuned_ms=0.158, block_m=128, block_n=256, tune_key="t"))
        return gemm._gluon_if_faster(tl, _operands(m), dev, rung), tl, gluon, seen

    return run


def test_the_burst_pair_that_decided_is_recorded_beside_the_capped_pair(pick):
    """Session 74, H200, fp8 4096x6144x4096: the capped pair had `tl` 1.2% ahead, within the
    noise, and the burst pair put Gluon ahead, so Gluon ran. The row must say so."""
    choice = Choice("gluon-ws", 0.1614, 0.1633, "timed", "burst", 0.1566, 0.1547)
    ran, _, gluon, seen = pick(choice)
    assert ran is gluon and seen["capped"] is True  # 0.158 ms >= capped_retime.MIN_MS
    cfg = ran.config
    assert cfg["kernel"] == "gluon-ws" and cfg["choice_decided_by"] == "burst"
    assert (cfg["choice_tl_ms"], cfg["choice_gluon_ms"]) == (0.1614, 0.1633)
    assert (cfg["choice_burst_tl_ms"], cfg["choice_burst_gluon_ms"]) == (0.1566, 0.1547)
    assert (cfg["tl_tile"], cfg["gluon_tile"], cfg["gluon_schedule"]) == (
        "128x256",
        "128x192",
        "cooperative",
    )


def test_a_choice_decided_at_the_cap_records_no_burst_pair(pick):
    ran, tl, _, _ = pick(Choice("tl", 0.150, 0.160, "timed", "capped"))
    assert ran is tl and ran.config["kernel"] == "tl"
    assert ran.config["choice_gluon_ms"] == 0.160  # what it beat stays on record
    assert "choice_burst_tl_ms" not in ran.config


def test_at_decode_sizes_the_gluon_kernel_is_not_tried(pick):
    ran, tl, _, seen = pick(Choice("gluon-ws", 1.0, 0.5, "timed"), m=gemm.GLUON_MIN_M)
    assert ran is tl and "sides" not in seen and "kernel" not in ran.config


def test_the_no_swap_ab_rung_keeps_the_gluon_kernel_under_its_own_name(pick):
    """own-triton-no-swap-ab removes only the swapped configs: where Gluon wins it runs, and the
    row names the rung, not "full"."""
    ran, _, gluon, _ = pick(Choice("gluon-ws", 0.16, 0.15, "timed", "capped"), rung="no-swap-ab")
    assert ran is gluon and ran.config["variant"] == "no-swap-ab"


@pytest.mark.parametrize(
    ("rung", "ties"), [("full", "retime"), ("tl-ties", "tl"), ("burst-ties", "burst")]
)
def test_each_rung_names_its_rule_for_a_capped_tie(pick, rung, ties):
    """own-triton (session 101) times a GEMM's capped tie again at the cap; the tl-ties rung
    keeps sessions 85-100's rule (the tie to `tl`), burst-ties the one before it; whichever
    kernel a rule picks runs under the rung's name."""
    ran, tl, gluon, seen = pick(Choice("tl", 0.1614, 0.1633, "timed", "tie"), rung=rung)
    assert seen["ties"] == ties
    assert ran is tl and ran.config["choice_decided_by"] == "tie"
    burst = Choice("gluon-ws", 0.3312, 0.3299, "timed", "burst", 0.3166, 0.3096)
    ran, _, gluon, _ = pick(burst, rung=rung)
    assert ran is gluon and ran.config["variant"] == rung
