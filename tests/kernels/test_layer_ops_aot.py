"""Ahead-of-time compiles of the decoder-layer kernels (kernels/triton/layer_ops.py) for sm_90
and gfx942, on the launch arguments the launchers build for every layer_ops sweep shape.

The H200's first layer_ops run lost all 18 own rope points to `num_warps must be a power of 2`,
which the interpreter never checks: these compiles do. Meta-device tensors stand in for the
inputs (only dtype, shape and alignment matter); one child process without TRITON_INTERPRET
compiles every case.
"""

from __future__ import annotations

import pytest
from aot_child import compile_in_child

# What both child scripts share: meta-device tensors and one launch compiled for a target.
_COMPILE = r"""
import json
import torch
from harness_kernels.triton import layer_ops as k
from harness_kernels.triton.aot import TARGETS, compile_for, specialize

meta = torch.device("meta")
def t(*shape, dtype=torch.bfloat16):
    return torch.empty(shape, dtype=dtype, device=meta)

def compile_launch(launch, target):
    consts = {n: v for n, v in launch.meta.items() if n != "num_warps"}
    full = list(launch.args) + [consts[q.name] for q in launch.kernel.params[len(launch.args):]]
    gpu = TARGETS[target][0]
    sig, ce, attrs = specialize(launch.kernel, tuple(full), gpu)
    return compile_for(launch.kernel, gpu, sig, ce, attrs, {"num_warps": launch.meta["num_warps"]})
"""

_SCRIPT = (
    _COMPILE
    + r"""
from omegaconf import OmegaConf
from harness.config import compose_run_config
from harness.providers import load_all
from harness.sweep import expand

def launch_for(p):
    if p.op in ("rmsnorm", "add_rmsnorm"):
        res = t(p.m, p.n) if p.op == "add_rmsnorm" else None
        return k.prepare_rmsnorm(t(p.m, p.n), t(p.n), res, sms=132)
    if p.op == "silu_mul":
        return k.prepare_silu_mul(t(p.m, 2 * p.n), 132)
    if p.op == "rope":
        return k.prepare_rope(t(p.m, p.q_heads, p.head_dim), t(p.m, p.kv_heads, p.head_dim),
                              t(p.m, dtype=torch.int64), t(8192, p.head_dim, dtype=torch.float32))
    pages = p.batch * p.pages_per_seq
    cache = (pages, p.page_size, p.kv_heads, p.head_dim)
    row = (p.tokens, p.kv_heads, p.head_dim)
    return k.prepare_kv_append(t(*row), t(*row), t(*cache), t(*cache), t(p.tokens, dtype=torch.int64))

cfg = compose_run_config(["sweep=layer_ops"])
problems = {pt.problem for pt in expand(OmegaConf.to_container(cfg.sweep.groups), load_all())}
seen, out = set(), {}
for p in sorted(problems, key=lambda p: p.label()):
    launch = launch_for(p)
    consts = {n: v for n, v in launch.meta.items() if n != "num_warps"}
    key = (launch.kernel.__name__, tuple(sorted(consts.items())), launch.meta["num_warps"])
    if key in seen:  # the same specialization as an earlier shape
        continue
    seen.add(key)
    for target in ("sm_90", "gfx942"):
        info = compile_launch(launch, target)
        info.pop("asm")
        out[f"{target}/{p.label()}"] = {**info, "num_warps_asked": launch.meta["num_warps"]}
# SiLU-and-multiply's row-and-block kernel, which only its rung launches
launch = k.prepare_silu_mul(t(4096, 2 * 14336), 132, order="rows")
for target in ("sm_90", "gfx942"):
    info = compile_launch(launch, target)
    info.pop("asm")
    out[f"{target}/silu-rows"] = {**info, "num_warps_asked": launch.meta["num_warps"]}
# the two-pass kernel, which no layer_ops shape picks (its rule starts at rows of 16384)
for fused in (False, True):
    launch = k.prepare_rmsnorm(t(512, 16384), t(16384), t(512, 16384) if fused else None,
                               looped=True, sms=132)
    for target in ("sm_90", "gfx942"):
        info = compile_launch(launch, target)
        info.pop("asm")
        out[f"{target}/looped-{fused}"] = {**info, "num_warps_asked": launch.meta["num_warps"]}
print(json.dumps(out, default=str))
"""
)


@pytest.fixture(scope="module")
def compiled() -> dict:
    return compile_in_child(_SCRIPT)


def test_every_layer_op_kernel_compiles_for_sm90_and_gfx942(compiled):
    kernels = {info["name"] for info in compiled.values()}
    assert {
        "_rmsnorm_kernel",
        "_silu_mul_flat_kernel",
        "_rope_kernel",
        "_kv_append_kernel",
    } <= kernels
    assert "_silu_mul_kernel" in kernels  # the rung's row-and-block grid
    assert "_rmsnorm_looped_kernel" in kernels
    assert {key.split("/")[0] for key in compiled} == {"sm_90", "gfx942"}


def test_layer_op_kernels_do_not_spill_and_keep_their_warps(compiled):
    for key, info in compiled.items():
        assert info["num_warps"] == info["num_warps_asked"], key
        assert info.get("n_spills", 0) == 0, key


_ORDER_SCRIPT = (
    _COMPILE
    + r"""
out = {}
for n in (4096, 16384):  # Mixtral's and Llama-3.1-405B's hidden sizes
    for fused in (False, True):
        x = t(1, n)
        launch = k.prepare_rmsnorm(x, t(n), t(1, n) if fused else None, sms=132)
        info = compile_launch(launch, "sm_90")
        lines = info["asm"]["ptx"].splitlines()
        out[f"n{n}/{'add_' if fused else ''}rmsnorm"] = {
            "loads": [i for i, s in enumerate(lines) if "ld.global" in s],
            "barriers": [i for i, s in enumerate(lines) if "bar.sync" in s],
            "registers": info.get("n_regs"),
            "threads": 32 * launch.meta["num_warps"],
        }
print(json.dumps(out))
"""
)


@pytest.fixture(scope="module")
def load_order() -> dict:
    return compile_in_child(_ORDER_SCRIPT)


def test_rmsnorm_loads_its_weight_before_the_row_sum_barrier_up_to_8192_wide(load_order):
    """The weight was once loaded after the row's sum: behind the sum's CTA barrier, a second
    memory round trip in series where one row is the kernel's work (own 5.12 us against
    torch.compile's 4.26 at m 1, N 4096, H200, session 81). Every global load must come before
    the first barrier, except in rows of 16384 and wider, where the late load measured faster
    (session 84: WEIGHT_LATE_MIN_N) and the weight's loads follow the barrier."""
    for key, order in load_order.items():
        assert order["barriers"], f"{key}: no CTA barrier (a one-warp row?)"
        before = max(order["loads"]) < min(order["barriers"])
        assert order["loads"] and before == key.startswith("n4096/"), (key, order)


def test_rows_of_16384_fit_two_programs_an_sm_by_registers(load_order):
    """Why the weight loads late from 16384: loaded early, add-RMSNorm's 16-warp program took 77
    registers under Triton 3.6 (75 under 3.9), one program per SM, where the late load's 62-64
    fit two (session 84: the early load 1.09x slower at m 256, two waves of rows against one)."""
    for key in ("n16384/rmsnorm", "n16384/add_rmsnorm"):
        found = load_order[key]
        if found["registers"] is None:
            pytest.skip("this Triton release's metadata gives no register count")
        allocated = -(-found["registers"] // 8) * 8  # registers are allocated 8 a thread at a time
        assert allocated * found["threads"] * 2 <= 65536, (key, found)


_SILU_SCRIPT = (
    _COMPILE
    + r"""
import re
out = {}
for n in (14336, 18944, 300):  # Llama-3-8B's and Qwen2.5-7B's intermediate sizes; a ragged one
    for order in k.SILU_ORDERS:
        ptx = compile_launch(k.prepare_silu_mul(t(4096, 2 * n), 132, order=order), "sm_90")["asm"]["ptx"]
        out[f"{n}/{order}"] = {
            "loads": sorted(set(re.findall(r"ld\.global[\w.]*", ptx))),
            "stores": sorted(set(re.findall(r"st\.global[\w.]*", ptx))),
        }
print(json.dumps(out))
"""
)


def test_the_flat_silu_index_keeps_16_byte_accesses():
    """The flat order splits its one index into row and column by dividing by n: Triton must
    still see runs of eight contiguous bf16 (n is specialized as divisible by 16), or the order
    that matched torch.compile's bandwidth (session 86) would cost 16-byte vectors. A row of 300
    is not divisible: every order falls back to 2-byte accesses there."""
    found = compile_in_child(_SILU_SCRIPT)
    for key, access in found.items():
        vector = key.split("/")[0] != "300"
        for kind in ("loads", "stores"):
            assert access[kind], (key, kind)
            assert all((".v4." in a) == vector for a in access[kind]), (key, access)
