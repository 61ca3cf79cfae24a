"""Every preset composes, expands within its guard, and states its true point count."""

import re

import pytest
from omegaconf import OmegaConf

from harness.config import SWEEPS_DIR, compose_run_config, protocol_of, sweep_names
from harness.providers import load_all
from harness.sweep import expand, point_key

PRESETS = sweep_names()


def test_required_presets_exist():
    assert {"smoke", "gemm_square", "gemm_llama", "fmha_prefill", "fmha_decode"} <= set(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_composes_and_header_matches(name):
    cfg = compose_run_config([f"sweep={name}"])
    assert cfg.sweep.name == name
    protocol_of(cfg)  # validates
    points = expand(OmegaConf.to_container(cfg.sweep.groups), load_all())
    assert 0 < len(points) <= cfg.sweep.max_points
    header = (SWEEPS_DIR / f"{name}.yaml").read_text().splitlines()[0]
    m = re.match(rf"# harness run sweep={name}\s+\(points: (\d+)\)", header)
    assert m, f"{name}.yaml must start with its command and point count"
    assert int(m.group(1)) == len(points)


def test_gemm_llama_covers_m_1_to_16384_for_8b_and_70b():
    cfg = compose_run_config(["sweep=gemm_llama"])
    pts = expand(OmegaConf.to_container(cfg.sweep.groups), load_all())
    ms = sorted({p.problem.m for p in pts})
    assert ms[0] == 1 and ms[-1] == 16384 and len(ms) == 15
    nk = {(p.problem.n, p.problem.k) for p in pts}
    assert (
        (28672, 4096) in nk and (8192, 28672) in nk and all(p.problem.layout == "nt" for p in pts)
    )


def test_fmha_presets_cover_prefill_and_paged_decode():
    pre = expand(
        OmegaConf.to_container(compose_run_config(["sweep=fmha_prefill"]).sweep.groups), load_all()
    )
    assert {p.problem.batch * p.problem.q_len for p in pre} == {16384}
    dec = expand(
        OmegaConf.to_container(compose_run_config(["sweep=fmha_decode"]).sweep.groups), load_all()
    )
    assert {p.problem.kv_layout for p in dec} == {"dense", "paged"}
    assert all(p.problem.phase == "decode" for p in dec)


def test_fmha_decode_paged_is_own_vs_flashinfer_with_the_gather_strawman():
    cfg = compose_run_config(["sweep=fmha_decode_paged"])
    pts = expand(OmegaConf.to_container(cfg.sweep.groups), load_all())
    problems = {p.problem for p in pts}
    assert {p.batch for p in problems} == {1, 16, 64, 256}
    assert {p.kv_len for p in problems} == {1024, 4096, 16384, 32768}
    assert {p.page_size for p in problems} == {16, 256} and len(problems) == 32
    assert all(p.kv_layout == "paged" and p.phase == "decode" for p in problems)
    assert {"own-triton", "flashinfer", "sdpa-paged-gather", "flash-attn-4"} <= {
        p.provider for p in pts
    }
    assert "strawman" in cfg.sweep.description


def test_fmha_decode_serving_is_issue_21_3s_grid():
    """q_len 1-8, GQA groups of 4 and 8, one length or ragged, pages of 16 and 256, batch >= 16
    and KV >= 4k: own Triton beside the two vendors that take per-sequence lengths."""
    cfg = compose_run_config(["sweep=fmha_decode_serving"])
    pts = expand(OmegaConf.to_container(cfg.sweep.groups), load_all())
    problems = {p.problem for p in pts}
    assert {p.q_len for p in problems} == {1, 2, 4, 8}
    assert {p.q_heads // p.kv_heads for p in problems} == {4, 8}
    assert {p.ragged for p in problems} == {False, True}
    assert {p.page_size for p in problems} == {16, 256}
    assert min(p.batch for p in problems) >= 16 and min(p.kv_len for p in problems) >= 4096
    assert all(p.kv_layout == "paged" and p.phase == "decode" for p in problems)
    assert {p.provider for p in pts} == {"own-triton", "flashinfer", "flash-attn-4"}
    assert len(pts) == 384 <= cfg.sweep.max_points


def test_fmha_presets_carry_the_flash_baselines():
    for name in ("fmha_prefill", "fmha_decode"):
        cfg = compose_run_config([f"sweep={name}"])
        providers = {
            p.provider for p in expand(OmegaConf.to_container(cfg.sweep.groups), load_all())
        }
        assert {"flash-attn", "flash-attn-4", "flashinfer"} <= providers, name


def test_point_key_is_stable_and_sensitive():
    from harness.problems import GemmProblem

    a = point_key(GemmProblem(1, 2, 3), "x", {"l2": "cold"}, "dev")
    assert a == point_key(GemmProblem(1, 2, 3), "x", {"l2": "cold"}, "dev")
    assert a != point_key(GemmProblem(1, 2, 4), "x", {"l2": "cold"}, "dev")
    assert a != point_key(GemmProblem(1, 2, 3), "x", {"l2": "hot"}, "dev")
    assert a != point_key(GemmProblem(1, 2, 3), "x", {"l2": "cold"}, "dev2")


def test_thesis_preset_is_the_studys_shapes_with_both_register_tricks():
    """sweep=thesis re-runs the original study's two experiments on its own shapes
    (shared/notes/thesis-study.md): fp16 square GEMMs 256..8192, and causal FMHA at batch 1,
    32 / 8 heads, head_dim 128, 256..16384 tokens, with CK's register trick and NVIDIA's rung."""
    cfg = compose_run_config(["sweep=thesis"])
    pts = expand(OmegaConf.to_container(cfg.sweep.groups), load_all())
    gemm = [p.problem for p in pts if p.problem.op == "gemm"]
    assert {(g.m, g.n, g.k) for g in gemm} == {
        (s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192)
    }
    assert {(g.dtype, g.layout) for g in gemm} == {("fp16", "nn")}
    gemm_providers = {p.provider for p in pts if p.problem.op == "gemm"}
    assert {"cublas", "own-cutlass-sm80-multistage", "own-triton-no-tensor-cores"} <= gemm_providers
    attn = [p for p in pts if p.problem.op == "attention"]
    assert {p.problem.q_len for p in attn} == {256 << i for i in range(7)}
    assert {
        (a.problem.batch, a.problem.q_heads, a.problem.kv_heads, a.problem.head_dim) for a in attn
    } == {(1, 32, 8, 128)}
    assert all(a.problem.causal and a.problem.dtype == "fp16" for a in attn)
    providers = {a.provider for a in attn}
    assert {"ck-fmha", "ck-fmha-register-trick", "own-triton-reg-stage", "sdpa-cudnn"} <= providers
