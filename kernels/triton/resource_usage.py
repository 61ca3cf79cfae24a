"""Registers and spills of a kernel compiled ahead of time, read the same way on every Triton
release we support (3.6 to 3.9), without a GPU.

Triton's metadata does not record them for NVIDIA (the driver reports them when the cubin is
loaded, which needs a GPU), so they come from the toolchain the wheel ships: registers from the
cubin that would run (`cuobjdump --dump-resource-usage`), spill bytes from `ptxas -v` rerun on
the PTX. The ptxas must be the one Triton used: 3.9 compiles sm_90 with ptxas-blackwell (CUDA
13) and emits PTX 9.x, which the CUDA 12 `ptxas` beside it rejects. AMD: the AMDGPU backend
writes VGPR/SGPR counts and spills into the kernel metadata of the asm.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import triton

_NVIDIA_BIN = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
# Names a release might give these in CompiledKernel.metadata; none of 3.6-3.9 records them.
_META_KEYS = {"n_regs": ("n_regs", "num_regs"), "n_spills": ("n_spills", "num_spills", "spills")}


def _run(cmd: list[str]) -> str | None:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return proc.stdout + proc.stderr if proc.returncode == 0 else None


def _metadata_usage(metadata: Any) -> dict[str, int]:
    usage = {}
    for key, names in _META_KEYS.items():
        values = [getattr(metadata, n, None) for n in names]
        found = [v for v in values if isinstance(v, int) and v >= 0]
        if found:
            usage[key] = found[0]
    return usage


def _ptxas_paths(arch: int) -> list[str]:
    """Triton's own choice for `arch` first, then every ptxas the wheel ships."""
    paths = []
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        paths.append(get_ptxas(arch).path)
    except Exception:  # renamed or moved in some release: the shipped binaries still work
        pass
    paths += [
        str(p) for p in (_NVIDIA_BIN / "ptxas-blackwell", _NVIDIA_BIN / "ptxas") if p.exists()
    ]
    return list(dict.fromkeys(paths))


def ptxas_usage(ptx: str, arch: int) -> dict[str, int]:
    """n_regs and n_spills (spill-store + spill-load bytes per thread) from `ptxas -v`."""
    sm = f"sm_{arch}a" if arch >= 90 else f"sm_{arch}"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        for ptxas in _ptxas_paths(arch):
            text = _run([ptxas, f"-arch={sm}", "-v", str(src), "-o", str(src) + ".o"])
            if text is None:  # e.g. a PTX .version newer than this ptxas: try the next
                continue
            usage = {}
            if m := re.search(r"Used (\d+) registers", text):
                usage["n_regs"] = int(m.group(1))
            if m := re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text):
                usage["n_spills"] = int(m.group(1)) + int(m.group(2))
            return usage
    return {}


def cubin_usage(cubin: bytes) -> dict[str, int]:
    """REG, STACK and LOCAL (bytes per thread) of the cubin's kernel, from cuobjdump."""
    cuobjdump = _NVIDIA_BIN / "cuobjdump"
    if not cuobjdump.exists():
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        text = _run([str(cuobjdump), "--dump-resource-usage", str(path)]) or ""
    return {k: int(v) for k, v in re.findall(r"\b(REG|STACK|LOCAL):(\d+)", text)}


def amdgcn_usage(asm: str) -> dict[str, int]:
    """VGPR/SGPR counts and spills from the kernel metadata the AMD backend embeds in its asm."""
    usage: dict[str, int] = {}
    for key, name in (
        ("n_regs", r"\.vgpr_count"),
        ("n_sgprs", r"\.sgpr_count"),
        ("vgpr_spills", r"\.vgpr_spill_count"),
        ("sgpr_spills", r"\.sgpr_spill_count"),
    ):
        if m := re.search(name + r":\s+(\d+)", asm):
            usage[key] = int(m.group(1))
    if "vgpr_spills" in usage or "sgpr_spills" in usage:
        usage["n_spills"] = usage.get("vgpr_spills", 0) + usage.get("sgpr_spills", 0)
    return usage


def resource_usage(compiled: Any, target: Any) -> dict[str, int]:
    """n_regs and n_spills (plus n_sgprs, vgpr_spills, sgpr_spills on AMD) of a CompiledKernel
    for `target` (a GPUTarget); keys that no source could give are left out."""
    asm = compiled.asm
    if target.backend != "cuda":
        return amdgcn_usage(asm.get("amdgcn", ""))
    usage = _metadata_usage(compiled.metadata)
    if isinstance(asm.get("cubin"), bytes):
        res = cubin_usage(asm["cubin"])
        if "REG" in res:  # the binary that runs: authoritative for registers
            usage["n_regs"] = res["REG"]
        if res.get("LOCAL") == 0 and res.get("STACK") == 0:
            usage.setdefault("n_spills", 0)  # no local memory at all: nothing was spilled
    if "n_spills" not in usage or "n_regs" not in usage:
        for key, value in ptxas_usage(asm["ptx"], int(target.arch)).items():
            usage.setdefault(key, value)
    return usage
