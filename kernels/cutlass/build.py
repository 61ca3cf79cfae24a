"""Build the CUTLASS/CuTe sources in this folder into shared libraries with nvcc, and load them.

A library is one `KernelSpec` (a .cu file, -D defines, target archs). Builds land in a
content-keyed cache, so a sweep compiles each configuration once and a cache built on one
machine can be carried to another (set HARNESS_CUTLASS_CACHE on both):

    <cache>/<label>-<key>/lib.so + manifest.json

key = sha256(sources, flags, archs, CUTLASS version, nvcc version). A machine without CUTLASS
headers (or without nvcc) can still load a cached library: it matches on the part of the key
it can compute (sources, flags, archs) and takes the version from the manifest. A library that
fails its checksum or fails to load is deleted and rebuilt.

Headers: $HARNESS_CUTLASS_INCLUDE, else the third_party/cutlass submodule when checked out, else
the include tree bundled in the nvidia-cutlass wheel (cutlass_library/source/include).
Libraries link the CUDA runtime statically and export plain C functions (see common.h); they are
loaded with ctypes and handed raw pointers, never linked against torch.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parent
REPO_ROOT = SOURCE_DIR.parent.parent
SUBMODULE_INCLUDE = REPO_ROOT / "third_party" / "cutlass" / "include"
DEVICE_FLAGS = ("-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr")
HOST_FLAGS = (
    "-shared",
    "-Xcompiler=-fPIC,-fvisibility=hidden",
    "-cudart=static",  # the library carries its runtime: loading it needs only the driver
)
BASE_FLAGS = (*DEVICE_FLAGS, *HOST_FLAGS)
NVCC_TIMEOUT_S = 900


class BuildError(RuntimeError):
    """nvcc or the CUTLASS headers are missing, or a compile failed (message: one line first)."""


# cutlass::Status codes that mean "this kernel cannot take this problem", not a fault.
REFUSALS = {
    1: "misaligned operand",
    2: "invalid data type",
    3: "invalid layout",
    4: "invalid problem",
    5: "not supported",
}


class KernelError(RuntimeError):
    """A library call failed; `code` is its status (cutlass::Status, or 1000 + cudaError_t)."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code

    @property
    def refused(self) -> bool:
        """True when the kernel declined the problem (shape, alignment), not a runtime fault."""
        return self.code in REFUSALS


@dataclass(frozen=True)
class Headers:
    """Where the CUTLASS include tree came from and which version it is."""

    include: Path
    version: str  # e.g. "4.2.0"
    source: str  # env | submodule | wheel


@dataclass(frozen=True)
class KernelSpec:
    """One library to build: a source in this folder, its -D defines and target archs."""

    source: str  # file name, e.g. "sm90_gemm.cu"
    defines: tuple[tuple[str, int | str], ...] = ()
    archs: tuple[str, ...] = ("sm_90a",)  # sm_90a, sm_90, sm_80 ...
    label: str = ""  # readable prefix of the cache directory
    extra_flags: tuple[str, ...] = ()  # e.g. --use_fast_math

    def flags(self) -> list[str]:
        """The full nvcc flag list, minus include paths and file names."""
        gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in self.archs]
        defines = [f"-D{k}={v}" for k, v in self.defines]
        return [*BASE_FLAGS, *self.extra_flags, *gencode, *defines]

    def device_flags(self) -> list[str]:
        """flags() without the host-side ones: what compiles the device code alone."""
        return [f for f in self.flags() if f not in HOST_FLAGS]

    def partial_key(self) -> str:
        """Hash of everything knowable without headers or nvcc: sources, flags, archs."""
        h = hashlib.sha256()
        for path in _source_files(self.source):
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        h.update("\0".join(self.flags()).encode())
        return h.hexdigest()

    def source_hash(self) -> str:
        """Hash of the .cu file and the local headers it can include."""
        h = hashlib.sha256()
        for path in _source_files(self.source):
            h.update(path.read_bytes())
        return h.hexdigest()[:16]

    def dirname(self, full_key: str) -> str:
        label = re.sub(r"[^A-Za-z0-9_.-]", "_", self.label or Path(self.source).stem)
        return f"{label}-{full_key[:20]}"


def _source_files(source: str) -> list[Path]:
    """The .cu file plus the local headers it includes, transitively (the key covers them)."""
    main = SOURCE_DIR / source
    if not main.exists():
        raise BuildError(f"no CUTLASS source {main}")
    seen: dict[Path, None] = {}
    todo = [main]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = None
        for name in _LOCAL_INCLUDE.findall(path.read_text()):
            if (SOURCE_DIR / name).is_file():
                todo.append(SOURCE_DIR / name)
    return [main, *sorted(p for p in seen if p != main)]


_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


# ---- toolchain discovery -----------------------------------------------------------------------


def cache_dir() -> Path:
    """$HARNESS_CUTLASS_CACHE, else $HARNESS_CACHE_DIR/cutlass, else ~/.cache/kernel-harness/cutlass."""
    if env := os.environ.get("HARNESS_CUTLASS_CACHE"):
        return Path(env)
    if env := os.environ.get("HARNESS_CACHE_DIR"):
        return Path(env) / "cutlass"
    return Path.home() / ".cache" / "kernel-harness" / "cutlass"


def find_nvcc() -> Path | None:
    """nvcc from $HARNESS_NVCC, $PATH, $CUDA_HOME or /usr/local/cuda, or None."""
    candidates = [os.environ.get("HARNESS_NVCC"), shutil.which("nvcc")]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            candidates.append(str(Path(home) / "bin" / "nvcc"))
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c)
    return None


@cache
def nvcc_version(nvcc: Path | None = None) -> str | None:
    """'13.0.88' style release of nvcc, or None without nvcc."""
    nvcc = nvcc or find_nvcc()
    if nvcc is None:
        return None
    out = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True, check=False)
    m = re.search(r"V(\d+\.\d+\.\d+)", out.stdout)
    return m.group(1) if m else "unknown"


def _version_of(include: Path) -> str | None:
    header = include / "cutlass" / "version.h"
    if not header.is_file() or not (include / "cute").is_dir():
        return None
    text = header.read_text()
    parts = [re.search(rf"#define CUTLASS_{p}\s+(\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    found = [m.group(1) for m in parts if m is not None]
    return ".".join(found) if len(found) == len(parts) else "unknown"


def _wheel_include() -> Path | None:
    """The nvidia-cutlass wheel's bundled headers, found without importing the package."""
    from importlib import metadata

    try:
        dist = metadata.distribution("nvidia-cutlass")
    except metadata.PackageNotFoundError:
        return None
    return Path(str(dist.locate_file("cutlass_library/source/include")))


def find_headers() -> Headers | None:
    """The CUTLASS include tree to build against, or None when there is none."""
    if env := os.environ.get("HARNESS_CUTLASS_INCLUDE"):
        if version := _version_of(Path(env)):
            return Headers(Path(env), version, "env")
    if version := _version_of(SUBMODULE_INCLUDE):
        return Headers(SUBMODULE_INCLUDE, version, "submodule")
    wheel = _wheel_include()
    if wheel is not None and (version := _version_of(wheel)):
        return Headers(wheel, version, "wheel")
    return None


def toolchain_problem() -> str | None:
    """One line saying why nothing can be compiled here, or None."""
    if find_nvcc() is None:
        return "nvcc not found (set HARNESS_NVCC or CUDA_HOME, or put nvcc on PATH)"
    if find_headers() is None:
        return (
            "CUTLASS headers not found: check out third_party/cutlass, "
            "pip install nvidia-cutlass, or set HARNESS_CUTLASS_INCLUDE"
        )
    return None


# ---- the cache ----------------------------------------------------------------------------------


@dataclass
class Built:
    """A library file in the cache with the facts recorded when it was compiled."""

    path: Path  # .../lib.so
    manifest: dict = field(default_factory=dict)
    cache_hit: bool = True


def full_key(spec: KernelSpec, headers: Headers, nvcc: str | None) -> str:
    h = hashlib.sha256(spec.partial_key().encode())
    h.update(f"cutlass={headers.version};nvcc={nvcc}".encode())
    return h.hexdigest()


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _valid_entry(entry: Path) -> dict | None:
    """The manifest of a complete, uncorrupted cache entry, or None."""
    try:
        manifest = json.loads((entry / "manifest.json").read_text())
        if _sha256_file(entry / "lib.so") != manifest["lib_sha256"]:
            return None
        return manifest
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _discard(entry: Path) -> None:
    shutil.rmtree(entry, ignore_errors=True)


def lookup(spec: KernelSpec) -> Built | None:
    """A valid cached build of `spec`, or None. Corrupt entries found on the way are removed."""
    root = cache_dir()
    headers, nvcc = find_headers(), find_nvcc()
    if headers is not None and nvcc is not None:
        entry = root / spec.dirname(full_key(spec, headers, nvcc_version(nvcc)))
        if not entry.exists():
            return None
        manifest = _valid_entry(entry)
        if manifest is None:
            _discard(entry)
            return None
        return Built(entry / "lib.so", manifest)
    # No toolchain here: accept any build of the same sources, flags and archs.
    partial = spec.partial_key()
    label = spec.dirname("")
    found = []
    for entry in root.glob(f"{label}*") if root.is_dir() else ():
        manifest = _valid_entry(entry)
        if manifest is not None and manifest.get("partial_key") == partial:
            found.append((manifest.get("built_at", 0), entry, manifest))
    if not found:
        return None
    _, entry, manifest = max(found, key=lambda t: t[0])
    return Built(entry / "lib.so", manifest)


def _run_nvcc(
    nvcc: Path, headers: Headers, spec: KernelSpec, flags: list[str], output: list[str]
) -> None:
    """nvcc `flags` over spec's source with the CUTLASS and local includes, then `output` (-o
    ...); a failure raises BuildError with its first line that says "error" (or its last)."""
    cmd = [
        str(nvcc),
        *flags,
        f"-I{headers.include}",
        f"-I{SOURCE_DIR}",
        str(SOURCE_DIR / spec.source),
        *output,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=NVCC_TIMEOUT_S)
    if proc.returncode != 0:
        errors = [ln for ln in proc.stderr.splitlines() if "error" in ln.lower()]
        first = errors[0] if errors else (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise BuildError(f"nvcc failed for {spec.label or spec.source}: {first.strip()}")


def build(spec: KernelSpec, *, force: bool = False) -> Built:
    """The cached library for `spec`, compiling it first when missing or corrupt."""
    if not force and (hit := lookup(spec)) is not None:
        return hit
    if why := toolchain_problem():
        raise BuildError(f"cannot build {spec.label or spec.source}: {why}")
    headers, nvcc = find_headers(), find_nvcc()
    assert headers is not None and nvcc is not None
    key = full_key(spec, headers, nvcc_version(nvcc))
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    entry = root / spec.dirname(key)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    try:
        t0 = time.perf_counter()
        _run_nvcc(nvcc, headers, spec, spec.flags(), ["-o", str(tmp / "lib.so")])
        manifest = {
            "label": spec.label,
            "source": spec.source,
            "source_hash": spec.source_hash(),
            "partial_key": spec.partial_key(),
            "key": key,
            "flags": spec.flags(),
            "archs": list(spec.archs),
            "cutlass_version": headers.version,
            "header_source": headers.source,
            "nvcc_version": nvcc_version(nvcc),
            "compile_s": round(time.perf_counter() - t0, 1),
            "built_at": time.time(),
            "lib_sha256": _sha256_file(tmp / "lib.so"),
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        _discard(entry)  # a corrupt leftover, or a forced rebuild
        try:
            os.replace(tmp, entry)  # atomic: readers see a whole entry or none
        except OSError:  # a concurrent builder won the race; theirs is as good as ours
            if _valid_entry(entry) is None:
                raise
        return Built(entry / "lib.so", _valid_entry(entry) or manifest, cache_hit=False)
    finally:
        _discard(tmp)


def build_many(specs: Iterable[KernelSpec], max_workers: int | None = None) -> dict:
    """Build (or find) every spec, compiling the missing ones in parallel nvcc processes.

    Returns {spec: Built or BuildError}; one failed compile never stops the others. Specs
    that differ in their label alone (fa3's 128x128 tile and fa3-t128) compile once: the
    others then find it in the cache."""
    unique = list(dict.fromkeys(specs))
    key = {spec: spec.partial_key() for spec in unique}
    first: dict[str, KernelSpec] = {}
    for spec in unique:
        first.setdefault(key[spec], spec)
    workers = max_workers or max(1, min(len(first), os.cpu_count() or 1))

    def one(spec: KernelSpec):
        try:
            return build(spec)
        except BuildError as e:
            return e

    with ThreadPoolExecutor(max_workers=workers) as pool:
        done = dict(zip(first.values(), pool.map(one, first.values()), strict=True))
    out = {}
    for spec in unique:
        same = done[first[key[spec]]]
        # a twin finds its first's library in the cache, or shares its first's error
        out[spec] = same if spec in done or isinstance(same, BuildError) else one(spec)
    return out


def device_code(spec: KernelSpec, dest: Path) -> Path:
    """Compile only the device code of `spec` into the fatbin `dest` (SASS for every arch of the
    spec, no cache): for reading the SASS without the host half of a build. The host half
    (cudafe++ and the host compiler over the CUTLASS headers) is about half of a library's
    compile time, so tests that only read instructions build this instead."""
    if why := toolchain_problem():
        raise BuildError(f"cannot build {spec.label or spec.source}: {why}")
    headers, nvcc = find_headers(), find_nvcc()
    assert headers is not None and nvcc is not None
    _run_nvcc(nvcc, headers, spec, spec.device_flags(), ["-fatbin", "-o", str(dest)])
    return dest


# ---- loading ------------------------------------------------------------------------------------

_LOADED: dict[Path, ctypes.CDLL] = {}


def load(spec: KernelSpec) -> tuple[ctypes.CDLL, dict]:
    """(library handle, manifest) for `spec`: built or found in the cache, then dlopen'ed.

    A cached file that cannot be loaded counts as corrupt: it is removed and rebuilt once."""
    built = build(spec)
    try:
        lib = _LOADED.get(built.path) or ctypes.CDLL(str(built.path))
    except OSError:
        _discard(built.path.parent)
        built = build(spec, force=True)
        lib = ctypes.CDLL(str(built.path))
    _LOADED[built.path] = lib
    return lib, built.manifest


def describe(lib: ctypes.CDLL) -> dict[str, str]:
    """The library's compiled configuration, from its hk_describe() string."""
    fn = lib.hk_describe
    fn.restype = ctypes.c_char_p
    text = fn().decode()
    return dict(item.split("=", 1) for item in text.split(";") if "=" in item)
