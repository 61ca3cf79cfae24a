"""`harness inspect`: a static resource report of the project's Triton kernels, compiled ahead
of time for cuda sm_80, cuda sm_90, hip gfx90a and hip gfx942 on any machine, GPU or not.

    harness inspect [targets=sm_80,sm_90,gfx90a,gfx942] [kernels=gemm,attention,microbench]
                    [results_dir=results/_scratch] [run_id=inspect-<utc time>] [write=true]
                    [jobs=<processes>]

Per kernel and target: registers (VGPRs on AMD), spills (NVIDIA: ptxas spill-store + spill-load
bytes per thread; AMD: spilled VGPRs + SGPRs), shared memory / LDS, warps, stages, and the kind
and static count of matrix instructions in the code: HGMMA (wgmma.mma_async, sm_90), HMMA
(mma.sync), MFMA (v_mfma). Counts are instructions in the compiled code (an unrolled K loop
body), not instructions executed. `kernels=` takes groups or glob patterns over names such as
gemm:full-bf16-8192, attention:attn_prefill_full_causal_d128, microbench:stream_read.

Compiles need real JIT functions, so they run in child processes (one per target) with
TRITON_INTERPRET removed; each child prints one JSON line per kernel.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import subprocess
import sys
import time
from typing import Any

TARGETS = ("sm_80", "sm_90", "gfx90a", "gfx942")
GROUPS = ("gemm", "attention", "microbench")
_MARK = "INSPECT "
# PTX / AMDGCN mnemonic prefix -> the SASS-style name of the matrix instruction it becomes.
_MMA_KINDS = (
    ("wgmma.", "HGMMA"),
    ("mma.sync", "HMMA"),
    ("tcgen05.mma", "UTCMMA"),
    ("v_mfma", "MFMA"),
    ("v_smfmac", "MFMA"),
    ("v_wmma", "WMMA"),
)


def mma_kind(mnemonics: dict[str, int]) -> str:
    """'HGMMA', 'HMMA', 'MFMA' (joined with '+' when mixed) or 'none'."""
    kinds: set[str] = set()
    for op in mnemonics:
        kinds.update(kind for prefix, kind in _MMA_KINDS if op.startswith(prefix))
    return "+".join(sorted(kinds)) or "none"


def matches(name: str, patterns: list[str]) -> bool:
    """A kernel name 'group:kernel' matches a group name or a glob over either form."""
    group, _, short = name.partition(":")
    return any(
        p == group or fnmatch.fnmatch(name, p) or fnmatch.fnmatch(short, p) for p in patterns
    )


# ---------------------------------------------------------------------------------------------
# Child process: build the catalog for one target and compile what matches
# ---------------------------------------------------------------------------------------------


def _provider(rung: str) -> str:
    return "own-triton" if rung == "full" else f"own-triton-{rung}"


def _without_tma(spec: dict) -> dict:
    """The pointer-load form of an attention spec: what the launcher runs below sm_90."""
    if not spec["constexprs"].get("USE_TMA"):
        return spec
    sig, cx = dict(spec["signature"]), dict(spec["constexprs"], USE_TMA=False)
    for arg, ty in spec["signature"].items():
        if ty.startswith("tensordesc"):
            sig[arg], cx[arg] = "constexpr", None
    return dict(spec, signature=sig, constexprs=cx, note="no TMA below sm_90 (pointer loads)")


def _spec_config(spec: dict) -> dict:
    cfg = {k: v for k, v in spec["constexprs"].items() if k.isupper() and not isinstance(v, str)}
    return {**cfg, **spec["options"]}


def _catalog(target_name: str) -> list[dict[str, Any]]:
    """Every inspectable kernel: {name, provider, dtype, compile: () -> info, config}."""
    import torch
    from harness_kernels.triton import aot
    from harness_kernels.triton import attention_decode as dec
    from harness_kernels.triton import attention_prefill as pre
    from harness_kernels.triton import microbench as mb

    target, _ = aot.TARGETS[target_name]
    backend = "cuda" if target.backend == "cuda" else "hip"
    dtypes = {
        torch.bfloat16: "bf16",
        torch.float16: "fp16",
        torch.float8_e4m3fn: "fp8_e4m3",
        torch.float32: "tf32",
    }
    out: list[dict[str, Any]] = []
    for case_name, case in aot.gemm_cases().items():
        out.append(
            dict(
                name=f"gemm:{case_name}",
                provider=_provider(case.rung),
                dtype=dtypes.get(case.dtype),
                config=None,
                compile=lambda c=case: aot.compile_gemm_case(c, target_name, False),
            )
        )

    def spec_entry(group: str, spec: dict, provider: str, dtype: str | None) -> dict:
        if backend == "cuda" and int(target.arch) < 90:
            spec = _without_tma(spec)
        run = lambda s=spec: aot.compile_for(
            s["fn"], target, s["signature"], s["constexprs"], s["attrs"], s["options"]
        )
        cfg = dict(_spec_config(spec), **({"note": spec["note"]} if "note" in spec else {}))
        return dict(
            name=f"{group}:{spec['name']}", provider=provider, dtype=dtype, config=cfg, compile=run
        )

    specs = pre.aot_specs(
        torch.bfloat16, 128, backend, rungs=pre.PREFILL_RUNGS, causal=(False, True)
    ) + dec.aot_specs(torch.bfloat16, 128, backend)
    for spec in specs:
        rung = "full"
        if spec["name"].startswith("attn_prefill_"):
            rung = next(r for r in pre.PREFILL_RUNGS if spec["name"][13:].startswith(r + "_"))
        out.append(spec_entry("attention", spec, _provider(rung), "bf16"))
    for spec in mb.aot_specs():
        provider = (
            "triton-stream" if spec["name"].startswith("stream") else f"triton-{spec['name']}"
        )
        out.append(
            spec_entry("microbench", spec, provider, None if spec["name"] == "chase" else "fp32")
        )
    return out


def _compile_one(entry: dict, target_name: str) -> dict:
    t0 = time.perf_counter()
    row: dict[str, Any] = {k: entry[k] for k in ("name", "provider", "dtype")}
    row["target"] = target_name
    try:
        info = entry["compile"]()
    except Exception as e:  # one kernel failing must not hide the others
        text = str(e).strip().splitlines()
        # A ValueError is the launcher refusing the target (e.g. fp8 below sm_89): skipped.
        status = "skipped" if isinstance(e, ValueError) else "error"
        return {
            **row,
            "status": status,
            "elapsed_s": time.perf_counter() - t0,
            "reason": f"{type(e).__name__}: {text[0] if text else ''}"[:500],
        }
    mma = dict(info.get("mma") or {})
    config = dict(entry["config"] or info.get("config") or {})
    extra = {k: info[k] for k in ("n_sgprs", "vgpr_spills", "sgpr_spills") if k in info}
    # aot reads them per Triton release (resource_usage); say so rather than leave a bare NaN
    unread = [k for k in ("n_regs", "n_spills") if info.get(k) is None]
    reason = f"not readable from this Triton's output: {', '.join(unread)}" if unread else None
    return {
        **row,
        "status": "ok",
        "reason": reason,
        "kernel": info.get("name"),
        "registers": info.get("n_regs"),
        "spills": info.get("n_spills"),
        "shared_bytes": info.get("shared"),
        "num_warps": info.get("num_warps"),
        "num_stages": info.get("num_stages"),
        "mma_kind": mma_kind(mma),
        "mma_count": int(info.get("mma_count") or 0),
        "details": {"mma": mma, "config": config, **extra},
        "elapsed_s": time.perf_counter() - t0,
    }


def _worker(target_name: str, patterns: list[str]) -> None:
    """Child entry point: one JSON line (prefixed) per matching kernel of one target."""
    from harness_kernels.triton import aot

    device_name = aot.TARGETS[target_name][1].name
    for entry in _catalog(target_name):
        if matches(entry["name"], patterns):
            row = _compile_one(entry, target_name)
            row["device_name"] = device_name
            print(_MARK + json.dumps(row, default=str), flush=True)


# ---------------------------------------------------------------------------------------------
# Parent: fan out over targets, collect rows, store and print them
# ---------------------------------------------------------------------------------------------


def _run_worker(target: str, patterns: list[str], env: dict, timeout_s: float) -> list[dict]:
    cmd = [sys.executable, "-m", "harness.inspect", "--worker", target, *patterns]
    try:
        proc = subprocess.run(cmd, env=env, text=True, capture_output=True, timeout=timeout_s)
        out, err, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        raw = e.stdout or ""  # bytes even under text=True (CPython's TimeoutExpired)
        out = raw.decode() if isinstance(raw, bytes) else raw
        err, rc = f"timed out after {timeout_s:g} s", -1
    rows = [json.loads(line[len(_MARK) :]) for line in out.splitlines() if line.startswith(_MARK)]
    if rc != 0:
        last = (err.strip().splitlines() or ["no output"])[-1]
        rows.append(
            {
                "name": "(worker)",
                "provider": None,
                "dtype": None,
                "target": target,
                "status": "error",
                "reason": f"compile worker failed: {last}"[:500],
            }
        )
    return rows


def inspect_kernels(
    targets: list[str], patterns: list[str], jobs: int | None = None, timeout_s: float = 3600
) -> list[dict]:
    """Compile every kernel matching `patterns` for each target (one child process each)."""
    from concurrent.futures import ThreadPoolExecutor

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(targets)))
    with ThreadPoolExecutor(jobs) as pool:
        parts = pool.map(lambda t: _run_worker(t, patterns, env, timeout_s), targets)
        results = [row for part in parts for row in part]
    order = {t: i for i, t in enumerate(TARGETS)}
    return sorted(results, key=lambda r: (r["name"], order.get(r["target"], 99)))


def store_rows(results: list[dict], run_id: str) -> list[dict]:
    """The report as store rows (op="inspect", one per kernel x target)."""
    from harness.provenance import now_iso, software

    prov = software()
    rows = []
    for r in results:
        key = f"inspect|{r['target']}|{r['name']}|{prov['kernel_source_hash']}"
        rows.append(
            {
                **prov,
                "run_id": run_id,
                "point_key": hashlib.sha256(key.encode()).hexdigest()[:20],
                "op": "inspect",
                "provider": r.get("provider"),
                "family": "own",
                "status": r["status"],
                "reason": r.get("reason"),
                "problem": r["name"],
                "dtype": r.get("dtype"),
                "target": r["target"],
                **{
                    k: r.get(k)
                    for k in (
                        "registers",
                        "spills",
                        "shared_bytes",
                        "num_warps",
                        "num_stages",
                        "mma_kind",
                        "mma_count",
                    )
                },
                "provider_config": json.dumps(
                    {"kernel": r.get("kernel"), **(r.get("details") or {})},
                    sort_keys=True,
                    default=str,
                ),
                "device_type": "aot",
                "device_arch": r["target"],
                "device_name": r.get("device_name"),
                "timestamp": now_iso(),
                "elapsed_s": r.get("elapsed_s"),
            }
        )
    return rows


def table(results: list[dict]) -> str:
    from tabulate import tabulate

    body = []
    for r in results:
        if r["status"] != "ok":
            body.append(
                [
                    r["name"],
                    r.get("provider") or "",
                    r["target"],
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    (r.get("reason") or "")[:70],
                ]
            )
            continue
        smem = r.get("shared_bytes")
        body.append(
            [
                r["name"],
                r["provider"],
                r["target"],
                r.get("registers"),
                r.get("spills"),
                "" if smem is None else f"{smem / 1024:.1f}",
                r.get("num_warps"),
                r.get("num_stages"),
                r["mma_kind"],
                r["mma_count"],
                "",
            ]
        )
    head = [
        "kernel",
        "provider",
        "target",
        "regs",
        "spills",
        "smem KiB",
        "warps",
        "stages",
        "mma",
        "mma count",
        "why not",
    ]
    return tabulate(body, headers=head, tablefmt="github")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3:])
