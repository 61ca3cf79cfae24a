"""Ahead-of-time compilation of the own Triton kernels for a named GPU target, without a GPU.

Used by tests (does the full GEMM emit wgmma on sm_90 and MFMA on gfx942?) and by
`harness inspect` (registers, spills, shared memory, MMA instruction counts per target).
Needs real JITFunctions: run it in a process where TRITON_INTERPRET is not "1".

    python -m harness_kernels.triton.aot --target sm_90 [--case full-bf16-8192]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.compiler.compiler import make_backend
from triton.runtime.jit import JITFunction, native_specialize_impl

from .gemm import MatmulLaunch, build_launch
from .gemm_candidates import candidate_configs
from .gemm_configs import GemmConfig, apply_rung
from .gemm_kernel import _gemm_kernel
from .gemm_operands import check_operands
from .gemm_reduce_kernel import SUM_WARPS, _splitk_sum_kernel
from .gemm_target import KernelTarget
from .resource_usage import resource_usage

# Named targets -> (Triton target, the device facts the config search needs).
TARGETS: dict[str, tuple[GPUTarget, KernelTarget]] = {
    "sm_80": (
        GPUTarget("cuda", 80, 32),
        KernelTarget("cuda", "sm_80", 80, "A100 (aot)", 108, 166912),
    ),
    "sm_90": (
        GPUTarget("cuda", 90, 32),
        KernelTarget("cuda", "sm_90", 90, "H100/H200 (aot)", 132, 232448),
    ),
    "gfx90a": (
        GPUTarget("hip", "gfx90a", 64),
        KernelTarget("hip", "gfx90a", 0, "MI250X (aot)", 110, 65536),
    ),
    "gfx942": (
        GPUTarget("hip", "gfx942", 64),
        KernelTarget("hip", "gfx942", 0, "MI300X (aot)", 304, 65536),
    ),
}

# Instructions that mean "tensor cores were used", per assembly flavour.
_MMA_PATTERNS = {
    "ptx": re.compile(r"\b(wgmma\.mma_async[\w.]*|mma\.sync[\w.]*|tcgen05\.mma[\w.]*)"),
    "amdgcn": re.compile(r"\b(v_mfma_\w+|v_smfmac_\w+|v_wmma_\w+)"),
}


def specialize(fn: JITFunction, args: tuple, target: GPUTarget) -> tuple[dict, dict, dict]:
    """(signature, constexprs, attrs) exactly as the JIT would build them for a launch with
    `args` (ints equal to 1 and None become constexprs; 16-divisible ints/pointers get
    tt.divisibility). Tensors may live on the meta device; only dtype and alignment matter."""
    backend = make_backend(target)
    signature: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    attrs: dict[tuple, list] = {}
    for i, (param, arg) in enumerate(zip(fn.params, args, strict=True)):
        if param.is_constexpr:
            signature[param.name] = "constexpr"
            constexprs[param.name] = arg
            continue
        ty, attr = native_specialize_impl(
            type(backend), arg, False, not param.do_not_specialize, True
        )
        signature[param.name] = ty
        if ty == "constexpr":
            constexprs[param.name] = attr
        elif isinstance(attr, str) and backend.parse_attr(attr):
            attrs[(i,)] = backend.parse_attr(attr)
    return signature, constexprs, attrs


def compile_for(
    fn: JITFunction,
    target: GPUTarget,
    signature: dict,
    constexprs: dict,
    attrs: dict | None = None,
    options: dict | None = None,
) -> dict[str, Any]:
    """Compile `fn` for `target`; return asm by stage plus n_regs, n_spills, shared (bytes) and
    the tensor-core instruction counts (`mma`: mnemonic -> count) where they can be read."""
    source = ASTSource
    if getattr(fn, "is_gluon", lambda: False)():  # a Gluon kernel builds its IR its own way
        from triton.experimental.gluon._runtime import GluonASTSource

        source = GluonASTSource
    src = source(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs or {})
    compiled = triton.compile(src, target=target, options=dict(options or {}))
    asm = {k: v for k, v in compiled.asm.items() if isinstance(v, str)}
    flavour = "ptx" if "ptx" in asm else "amdgcn"
    mma = Counter(_MMA_PATTERNS[flavour].findall(asm.get(flavour, "")))
    info: dict[str, Any] = {
        "name": compiled.metadata.name,
        "target": f"{target.backend}:{target.arch}",
        "shared": compiled.metadata.shared,
        "num_warps": compiled.metadata.num_warps,
        "num_stages": compiled.metadata.num_stages,
        "mma": dict(mma),
        "mma_count": sum(mma.values()),
        "asm": asm,
    }
    info.update(resource_usage(compiled, target))
    return info


@dataclass(frozen=True)
class GemmCase:
    """A representative GEMM launch: problem shape, dtype, B layout, rung (and a pinned config)."""

    m: int
    n: int
    k: int
    dtype: torch.dtype = torch.bfloat16
    b_col_major: bool = True
    rung: str = "full"
    config: GemmConfig | None = None  # None: the first candidate the search would time
    prefer_split_k: bool = False  # with config None: the first candidate that splits K
    prefer_stream_k: bool = False  # with config None: the first stream-K candidate


def gemm_cases() -> dict[str, GemmCase]:
    """The GEMM kernels `harness inspect` reports: one large, one decode shape, each rung."""
    cases = {
        "full-bf16-8192": GemmCase(8192, 8192, 8192),
        "full-bf16-decode": GemmCase(16, 4096, 4096, prefer_split_k=True),
        "full-fp16-rowmajor": GemmCase(4096, 4096, 4096, torch.float16, b_col_major=False),
        "full-fp8-8192": GemmCase(8192, 8192, 8192, torch.float8_e4m3fn),
        "full-tf32-4096": GemmCase(4096, 4096, 4096, torch.float32),
        # 80 tiles of 128x256 on 132 SMs: the K iterations shared out evenly (stream-K)
        "streamk-bf16-mid": GemmCase(256, 10240, 8192, prefer_stream_k=True),
    }
    for rung in ("no-tma", "no-pipeline", "not-persistent", "no-splitk", "no-tensor-cores"):
        cases[f"{rung}-bf16-8192"] = GemmCase(8192, 8192, 8192, rung=rung)
    cases["no-splitk-bf16-decode"] = GemmCase(16, 4096, 4096, rung="no-splitk")
    return cases


def gemm_launch_args(case: GemmCase, dev: KernelTarget) -> tuple[tuple, dict, dict]:
    """(kernel args, launch options, reported config) for `case` on `dev`, built on meta tensors
    by the same code path prepare_matmul uses, so the compiled instance is the one that runs."""
    launch = _meta_launch(case, dev)
    return launch.positional_args(), launch._options, launch.config


def _meta_launch(case: GemmCase, dev: KernelTarget) -> MatmulLaunch:
    """build_launch's MatmulLaunch for `case` on meta tensors (nothing is allocated or run)."""
    meta = torch.device("meta")
    a = torch.empty((case.m, case.k), device=meta, dtype=case.dtype)
    if case.b_col_major:
        b = torch.empty((case.n, case.k), device=meta, dtype=case.dtype).t()
    else:
        b = torch.empty((case.k, case.n), device=meta, dtype=case.dtype)
    a_scale = b_scale = None
    if case.dtype == torch.float8_e4m3fn:
        a_scale, b_scale = (torch.empty(1, device=meta, dtype=torch.float32) for _ in range(2))
    p = check_operands(a, b, None, a_scale, b_scale, "tf32", dev)
    cfg = case.config
    if cfg is None:
        cands = candidate_configs(
            case.rung, case.m, case.n, case.k, a.element_size(), p.out_bytes, dev
        )
        split = [c for c in cands if c.split_k > 1] if case.prefer_split_k else []
        split += [c for c in cands if c.stream_k] if case.prefer_stream_k else []
        cfg = (split or cands)[0]
    else:
        cfg = apply_rung(cfg, case.rung)
    return build_launch(p, cfg, dev)


def compile_gemm_case(case: GemmCase, target_name: str, keep_asm: bool = True) -> dict[str, Any]:
    """Compile one GEMM case for a named target (see TARGETS); adds the config it used."""
    target, dev = TARGETS[target_name]
    launch = _meta_launch(case, dev)
    signature, constexprs, attrs = specialize(_gemm_kernel, launch.positional_args(), target)
    info = compile_for(_gemm_kernel, target, signature, constexprs, attrs, launch._options)
    info["config"] = launch.config
    if launch._sum is not None:  # reduce_apart: the second launch, which sums the partials
        summed = launch._sum
        names = _splitk_sum_kernel.arg_names[len(summed.args) :]
        args = (*summed.args, *(summed.constexprs[name] for name in names))
        signature, constexprs, attrs = specialize(_splitk_sum_kernel, args, target)
        options = {"num_warps": SUM_WARPS}
        info["sum"] = compile_for(_splitk_sum_kernel, target, signature, constexprs, attrs, options)
        if not keep_asm:
            info["sum"].pop("asm")
    if not keep_asm:
        info.pop("asm")
    return info


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=sorted(TARGETS), default="sm_90")
    parser.add_argument("--case", choices=sorted(gemm_cases()), action="append")
    args = parser.parse_args(argv)
    report = {}
    for name in args.case or sorted(gemm_cases()):
        try:
            info = compile_gemm_case(gemm_cases()[name], args.target, keep_asm=False)
        except Exception as exc:  # report per case; one failure should not hide the others
            info = {"error": f"{type(exc).__name__}: {exc}"}
        report[name] = info
    print(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
