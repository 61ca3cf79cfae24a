"""Build CK's tile_example_fmha_fwd from the pinned submodule with one codegen config's blobs.

    python -m harness_kernels.ck.fmha_build --config register-trick --arch gfx942 [--jobs 16]
    python -m harness_kernels.ck.fmha_build --config default --arch gfx90a --print-commands

CK's own CMake builds the example from every blob generate.py emits (1,170 forward kernels at
the pinned commit). This builds the same program from CK's fmha_fwd.cpp and only the blobs
fmha_codegen selected, with hipcc driven directly (argument lists, no shell): one compile per
translation unit in parallel, then one link. Flags are those CK's CMakeLists.txt and
example/ck_tile/01_fmha/CMakeLists.txt set at the pinned commit for this HIP version.

Builds land in a content-keyed cache, $HARNESS_CK_CACHE, else $HARNESS_CACHE_DIR/ck, else
~/.cache/kernel-harness/ck:  <config>-<arch>-<key>/{gen/*.cpp, obj/*.o, tile_example_fmha_fwd,
manifest.json}, key = sha256(CK commit, codegen source, dtypes, flags, hipcc version).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import CK_SHA, fmha_codegen

REPO_ROOT = Path(__file__).resolve().parents[2]
SUBMODULE = REPO_ROOT / "third_party" / "composable_kernel"
EXE_NAME = "tile_example_fmha_fwd"
ARCHS = ("gfx90a", "gfx942")  # CDNA2 (MI210/MI250X), CDNA3 (MI300X/MI325X)
COMPILE_TIMEOUT_S = 3600  # one CK FMHA instance takes minutes
MIN_HIP = (6, 2)  # ck_tile at the pinned commit needs the ROCm 6.2 compiler


class BuildError(RuntimeError):
    """hipcc or CK is missing, or a compile or link failed (first line says which)."""


def ck_root() -> Path:
    """$HARNESS_CK_ROOT, else the third_party/composable_kernel submodule."""
    return Path(os.environ.get("HARNESS_CK_ROOT") or SUBMODULE)


def ck_missing(root: Path | None = None) -> str | None:
    """Why the CK sources cannot be used, or None."""
    root = root or ck_root()
    need = (
        root / "include" / "ck_tile" / "core.hpp",
        root / fmha_codegen.FMHA_EXAMPLE / "fmha_fwd.cpp",
    )
    if not all(p.is_file() for p in need):
        return (
            f"composable_kernel not checked out at {root} "
            "(git submodule update --init third_party/composable_kernel, or set HARNESS_CK_ROOT)"
        )
    return None


def find_hipcc() -> str | None:
    """$HIPCC, else hipcc on PATH, else /opt/rocm/bin/hipcc."""
    for cand in (os.environ.get("HIPCC"), shutil.which("hipcc"), "/opt/rocm/bin/hipcc"):
        if cand and Path(cand).is_file():
            return cand
    return None


def parse_hip_version(text: str) -> tuple[int, int, int] | None:
    """'HIP version: 6.2.41133-dd7f95766' (hipcc --version) -> (6, 2, 41133)."""
    m = re.search(r"HIP version:\s*(\d+)\.(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def hip_version(hipcc: str) -> tuple[int, int, int] | None:
    proc = subprocess.run([hipcc, "--version"], capture_output=True, text=True, check=False)
    return parse_hip_version(proc.stdout + proc.stderr)


def compile_flags(version: tuple[int, int, int]) -> list[str]:
    """CK's flags for the FMHA forward example at the pinned commit, for this HIP version
    (CK compares major * 1e8 + minor * 1e5 + patch against fixed thresholds)."""
    flat = version[0] * 100_000_000 + version[1] * 100_000 + version[2]
    flags = [
        "-std=c++17",
        "-O3",
        "-DNDEBUG",
        "-Wno-undefined-func-template",
        "-Wno-float-equal",
        # FMHA_FWD_FAST_EXP2 (CK's default): exp2-based softmax, denormals flushed
        "-DCK_TILE_FMHA_FWD_FAST_EXP2=1",
        "-fgpu-flush-denormals-to-zero",
        # the example is built without the split-KV and append-KV APIs
        "-DCK_TILE_FMHA_FWD_SPLITKV_API=0",
        "-DCK_TILE_FMHA_FWD_APPENDKV_API=0",
    ]
    if flat > 500723302:
        flags.append("-fno-offload-uniform-block")
    if flat > 500500000:
        flags += ["-mllvm", "--lsr-drop-solution=1"]
    if flat > 600140090:
        flags += ["-mllvm", "-enable-post-misched=0"]
    if 600241132 < flat < 600300000:
        flags += ["-mllvm", "-amdgpu-coerce-illegal-types=1"]
    if flat > 600241132:
        flags += [
            "-mllvm",
            "-amdgpu-early-inline-all=true",
            "-mllvm",
            "-amdgpu-function-calls=false",
        ]
    return flags


def compile_command(
    hipcc: str, src: Path, obj: Path, arch: str, root: Path, flags: list[str]
) -> list[str]:
    """One translation unit -> object file for one gfx target."""
    includes = [root / "include", root / "library" / "include", root / fmha_codegen.FMHA_EXAMPLE]
    inc = [arg for d in includes for arg in ("-I", str(d))]
    return [hipcc, *flags, f"--offload-arch={arch}", *inc, "-c", str(src), "-o", str(obj)]


def link_command(hipcc: str, objs: list[Path], exe: Path, arch: str) -> list[str]:
    return [hipcc, f"--offload-arch={arch}", *map(str, objs), "-o", str(exe)]


def cache_dir() -> Path:
    if env := os.environ.get("HARNESS_CK_CACHE"):
        return Path(env)
    if env := os.environ.get("HARNESS_CACHE_DIR"):
        return Path(env) / "ck"
    return Path.home() / ".cache" / "kernel-harness" / "ck"


def _codegen_hash() -> str:
    return hashlib.sha256(Path(fmha_codegen.__file__).read_bytes()).hexdigest()[:16]


def build_key(config: str, arch: str, dtypes: tuple[str, ...], flags: list[str], hip: str) -> str:
    payload = json.dumps([CK_SHA, _codegen_hash(), config, arch, dtypes, flags, hip])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def find_binary(config: str, arch: str, root: Path | None = None) -> Path | None:
    """A built binary for (config, arch) from this CK commit and codegen source, or None.

    Matched on the manifest, so a machine can use a cache built elsewhere without hipcc."""
    for manifest in sorted((root or cache_dir()).glob(f"{config}-{arch}-*/manifest.json")):
        try:
            m = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        exe = manifest.parent / EXE_NAME
        if m.get("ck_sha") == CK_SHA and m.get("codegen") == _codegen_hash() and exe.is_file():
            return exe
    return None


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-20:]
        raise BuildError(f"{what} failed (exit {proc.returncode})\n" + "\n".join(tail))


def plan(
    config: str, arch: str, dtypes: tuple[str, ...] = ("fp16", "bf16"), hipcc: str | None = None
) -> dict:
    """Everything a build does, without doing it: blobs, compile and link command lines."""
    if arch not in ARCHS:
        raise ValueError(f"arch: unknown '{arch}'; allowed: {', '.join(ARCHS)}")
    root = ck_root()
    if why := ck_missing(root):
        raise BuildError(why)
    hipcc = hipcc or find_hipcc()
    if hipcc is None:
        raise BuildError("hipcc not found (install ROCm >= 6.2 or set HIPCC)")
    version = hip_version(hipcc)
    if version is None or version[:2] < MIN_HIP:
        raise BuildError(
            f"{hipcc} is HIP {version}; CK's ck_tile needs >= {MIN_HIP[0]}.{MIN_HIP[1]}"
        )
    flags = compile_flags(version)
    out = cache_dir() / f"{config}-{arch}-{build_key(config, arch, dtypes, flags, str(version))}"
    gen = fmha_codegen.load_generator(root)
    kernels = fmha_codegen.select_kernels(gen, config, fmha_codegen.Selection(dtypes=dtypes))
    blobs = [out / "gen" / k.filename for k in kernels] + [out / "gen" / gen.FMHA_FWD_API_FILENAME]
    sources = [root / fmha_codegen.FMHA_EXAMPLE / "fmha_fwd.cpp", *blobs]
    objs = [out / "obj" / (s.stem + ".o") for s in sources]
    return {
        "out": out,
        "gen": gen,
        "kernels": kernels,
        "hip_version": version,
        "compiles": [
            compile_command(hipcc, s, o, arch, root, flags)
            for s, o in zip(sources, objs, strict=True)
        ],
        "link": link_command(hipcc, objs, out / EXE_NAME, arch),
    }


def build(
    config: str, arch: str, dtypes: tuple[str, ...] = ("fp16", "bf16"), jobs: int | None = None
) -> Path:
    """Generate, compile and link (cached); returns the path of tile_example_fmha_fwd."""
    p = plan(config, arch, dtypes)
    exe = p["out"] / EXE_NAME
    if exe.is_file() and (p["out"] / "manifest.json").is_file():
        return exe
    fmha_codegen.write_blobs(p["gen"], p["kernels"], p["out"] / "gen")
    (p["out"] / "obj").mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        list(pool.map(lambda c: _run(c, f"compile {Path(c[-3]).name}"), p["compiles"]))
    _run(p["link"], "link")
    manifest = {
        "ck_sha": CK_SHA,
        "codegen": _codegen_hash(),
        "config": config,
        "arch": arch,
        "dtypes": list(dtypes),
        "hip_version": ".".join(map(str, p["hip_version"])),
        "kernels": [fmha_codegen.kernel_traits(k) for k in p["kernels"]],
        "link": p["link"],
    }
    (p["out"] / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return exe


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=fmha_codegen.CONFIGS, default="register-trick")
    parser.add_argument("--arch", choices=ARCHS, required=True)
    parser.add_argument("--dtypes", default="fp16,bf16")
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--print-commands", action="store_true")
    args = parser.parse_args(argv)
    dtypes = tuple(args.dtypes.split(","))
    try:
        if args.print_commands:
            p = plan(args.config, args.arch, dtypes)
            for cmd in [*p["compiles"], p["link"]]:
                print(" ".join(cmd))
            return 0
        print(build(args.config, args.arch, dtypes, args.jobs))
    except (BuildError, fmha_codegen.CodegenError) as e:
        print(f"fmha_build: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
