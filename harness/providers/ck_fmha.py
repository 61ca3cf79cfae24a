"""AMD Composable Kernel tile FMHA forward, run as CK's own benchmark binary.

Three providers, one per code-generation config (harness_kernels.ck.fmha_codegen), each built
with `python -m harness_kernels.ck.fmha_build --config C --arch gfx90a|gfx942`:
  ck-fmha                           vendor  CK's default kernels (qr_async pipeline: the next K
                                            tile copied global -> LDS by async buffer loads)
  ck-fmha-register-trick            own     the thesis's config: the same kernels on the qr
                                            pipeline (K prefetched through registers; Q is in
                                            VGPRs and V goes through registers in both). They
                                            are padded in the head dim, which qr serves with
                                            2-byte global accesses (qr_async keeps 16 bytes)
  ck-fmha-register-trick-unpadded   own     the same with an unpadded qr kernel ahead (16-byte
                                            accesses on the tile grid): against ck-fmha it
                                            isolates the pipeline, against the thesis's config
                                            the padding's narrowing
All cover head_dim 128, fp16 and bf16, dense K/V, GQA, no mask or bottom-right causal.

Correctness: tile_example_fmha_fwd makes its own inputs (uniform floats, seeded from the
protocol) and, with -v=1, compares its output with its own CPU reference (rtol = atol = 1e-3
for fp16, 1e-2 for bf16). That is the correctness check for this external program: valid:y is
ok, valid:n is wrong and never timed. Its outputs never reach the harness's fp32 reference, so
rel_err stays null; provider_config records the check's arguments and verdict.

Timing: CK's own hipEvent pair around `repeat` back-to-back launches on the same buffers, after
`warmup` launches (timer "ck-internal", L2 hot: no flush between launches). One sample is one
process run's mean; samples are taken under the protocol's stop rule. TFLOP/s and GB/s are
recomputed from the problem's flops() and min_bytes(); CK's printed TFlops (which count the full
score matrix under a causal mask) and GB/s are kept in provider_config for reference only.
"""

from __future__ import annotations

import math
import subprocess
from typing import Any

import torch
from harness_kernels.ck import fmha_build
from harness_kernels.ck.fmha_codegen import DEFAULT_PIPELINE, REGISTER_TRICK_PIPELINE
from harness_kernels.ck.fmha_run import CK_TOLERANCE, CkResult, command_args, parse_output

from harness.device import DeviceInfo
from harness.problems import AttentionProblem
from harness.providers.registry import External, ExternalCheck, Prepared, Unsupported, register

# provider name -> (codegen config, family, pipeline)
PROVIDERS = {
    "ck-fmha": ("default", "vendor", DEFAULT_PIPELINE),
    "ck-fmha-register-trick": ("register-trick", "own", REGISTER_TRICK_PIPELINE),
    "ck-fmha-register-trick-unpadded": (
        "register-trick-unpadded",
        "own",
        REGISTER_TRICK_PIPELINE,
    ),
}
_SAMPLE_TARGET_MS = 100.0  # timed launches per process run
_RUN_TIMEOUT_S = 3600  # a -v=1 run computes a CPU reference; the point deadline is the real cap
CORRECTNESS = (
    "tile_example_fmha_fwd -v=1: CK's own CPU reference on inputs the binary generates "
    "(init=uf); no harness fp32 reference (rel_err null)"
)


def _gpu_arch() -> str:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return props.gcnArchName.split(":")[0]


def _available(config: str):
    def available() -> str | None:
        if torch.version.hip is None:
            return "needs a ROCm build of torch (CK runs on AMD GPUs only)"
        if not torch.cuda.is_available():
            return "torch sees no ROCm GPU"
        arch = _gpu_arch()
        if fmha_build.find_binary(config, arch) is not None:
            return None
        if why := fmha_build.ck_missing():
            return why
        if fmha_build.find_hipcc() is None:
            return "no hipcc (install ROCm >= 6.2 or set HIPCC)"
        return (
            f"{fmha_build.EXE_NAME} ({config}, {arch}) not built: "
            f"python -m harness_kernels.ck.fmha_build --config {config} --arch {arch}"
        )

    return available


def _supports(problem: AttentionProblem, device: DeviceInfo) -> str | None:
    if problem.kv_layout != "dense":
        return "CK's fmha_fwd example takes dense K/V only"
    if problem.head_dim != 128:
        return "the project's CK kernel set is head_dim 128 only"
    if problem.dtype not in CK_TOLERANCE:
        return f"CK FMHA kernels are built for {', '.join(CK_TOLERANCE)} only"
    return None


def _shape(problem: AttentionProblem) -> tuple:
    p = problem
    return (p.batch, p.q_heads, p.kv_heads, p.q_len, p.kv_len, p.head_dim, p.causal, p.dtype)


def run_binary(exe: str, args: list[str]) -> CkResult:
    """Run the binary with an argument list (no shell) and parse what it printed.

    Raises Unsupported when no generated kernel covers the problem, RuntimeError when the
    program failed or ran another problem than asked."""
    proc = subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=_RUN_TIMEOUT_S, check=False
    )
    try:
        res = parse_output(proc.stdout)
    except ValueError:
        last = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
        raise RuntimeError(f"{fmha_build.EXE_NAME} exit {proc.returncode}: {last}") from None
    if res.unsupported:
        raise Unsupported("CK: not supported yet (no generated kernel covers this problem)")
    if why := res.matches(args):
        raise RuntimeError(f"{fmha_build.EXE_NAME} ran another problem: {why}")
    if res.valid is not False and proc.returncode != 0:  # valid:n exits -2 by design
        raise RuntimeError(f"{fmha_build.EXE_NAME} exit {proc.returncode} after a result line")
    return res


def _prepare_for(name: str):
    config_name, _, pipeline = PROVIDERS[name]

    def prepare(problem: AttentionProblem, inputs: dict, device: DeviceInfo) -> Prepared:
        exe = fmha_build.find_binary(config_name, device.arch)
        if exe is None:
            raise Unsupported(_available(config_name)() or f"{fmha_build.EXE_NAME} not built")
        shape = _shape(problem)
        state: dict[str, Any] = {}  # what the check run saw
        tol = CK_TOLERANCE[problem.dtype]

        def check(protocol) -> ExternalCheck:
            seed = protocol.seed * 1000 + 1  # the harness's check seed; never 0 (CK: random)
            args = command_args(*shape, validate=True, seed=seed, warmup=1, repeat=3)
            res = run_binary(str(exe), args)
            state.update(ms=res.ms, kernel=res.kernel)
            cfg = {
                "correctness": CORRECTNESS,
                "ck_check_args": args,
                "ck_tolerance": tol,
                "ck_check": f"valid:{'y' if res.valid else 'n'}",
                "ck_kernel": res.kernel,
            }
            if res.valid is None:
                raise RuntimeError("CK printed no valid:y/n although -v=1 was given")
            if not res.valid:
                why = (
                    f"CK -v=1 validation failed (valid:n) against its own CPU reference on "
                    f"inputs it generated (init=uf, seed={seed}, rtol=atol={tol:g})"
                )
                return ExternalCheck(False, why, cfg)
            return ExternalCheck(True, None, cfg)

        def time_it(protocol, stop) -> tuple[dict, dict]:
            per = max(state.get("ms") or 1.0, 1e-3)  # from the check run
            warmup = max(5, math.ceil(protocol.warmup_ms / per))
            repeat = int(min(1000, max(20, math.ceil(_SAMPLE_TARGET_MS / per))))
            seed = protocol.seed * 1000 + 2
            args = command_args(*shape, validate=False, seed=seed, warmup=warmup, repeat=repeat)
            samples: list[float] = []
            runs: list[CkResult] = []
            while (why := stop(samples)) is None:
                runs.append(run_binary(str(exe), args))
                samples.append(runs[-1].ms)
            extra = {
                "ck_timed_args": args,
                "ck_kernel": runs[-1].kernel,
                "ck_reported_ms": [r.ms for r in runs],
                "ck_reported_tflops": [r.tflops for r in runs],
                "ck_reported_gbps": [r.gbps for r in runs],
                "ck_numbers_note": "CK's TFlops count the full score matrix under a causal mask "
                "and K/V once per query head; tflops/gbps columns use the problem's own counts",
            }
            timing = {
                "samples_ms": samples,
                "timer": "ck-internal",
                "l2": "hot",
                "stop_reason": why,
                "calls_per_sample": repeat,
                "warmup_calls": warmup,
            }
            return timing, extra

        def never() -> None:
            raise RuntimeError("ck-fmha runs through Prepared.external, not run()")

        # "variant": the codegen config's stored key in provider_config (as the own kernels')
        config = {
            "variant": config_name,
            "pipeline": pipeline,
            "binary": str(exe),
            "ck_sha": fmha_build.CK_SHA,
            "arch": device.arch,
        }
        return Prepared(never, config, external=External(check, time_it))

    return prepare


for _name, (_config, _family, _pipeline) in PROVIDERS.items():
    _prep = _prepare_for(_name)
    _prep.__doc__ = (
        f"CK tile FMHA forward, {_config} codegen config ({_pipeline} pipeline), run as "
        "CK's tile_example_fmha_fwd (self-checked, self-timed)."
    )
    register(
        _name,
        "attention",
        _family,
        ("amd",),
        available=_available(_config),
        supports=_supports,
    )(_prep)
