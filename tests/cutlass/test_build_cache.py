"""The nvcc build cache and the ctypes loader, on a tiny source (seconds per compile; no CUTLASS):
miss then hit, what the key covers, corrupt entries rebuilt, loading without a toolchain, the
one-line errors when nvcc or the headers are missing."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import pytest
from harness_kernels.cutlass import build

TINY = """
#include <cuda_runtime.h>
__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }
extern "C" __attribute__((visibility("default"))) const char* hk_describe(void) {
  return "kernel=tiny;value=" VALUE_TEXT;
}
"""


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A private cache, fake CUTLASS headers of a chosen version, and a tiny .cu source."""
    if build.find_nvcc() is None:
        pytest.skip("nvcc not found: the build-cache tests compile a tiny .cu file")
    monkeypatch.setenv("HARNESS_CUTLASS_CACHE", str(tmp_path / "cache"))
    include = tmp_path / "include"
    (include / "cute").mkdir(parents=True)
    (include / "cutlass").mkdir()
    (include / "cutlass" / "version.h").write_text(
        "#define CUTLASS_MAJOR 9\n#define CUTLASS_MINOR 8\n#define CUTLASS_PATCH 7\n"
    )
    monkeypatch.setenv("HARNESS_CUTLASS_INCLUDE", str(include))
    source = tmp_path / "tiny.cu"
    source.write_text(TINY)
    return tmp_path, source


def spec(source: Path, value: int = 1, archs=("sm_80",)) -> build.KernelSpec:
    # An absolute source path joins onto SOURCE_DIR as itself.
    return build.KernelSpec(str(source), (("VALUE_TEXT", f'"{value}"'),), archs, "tiny")


def test_headers_found_with_version_and_source(env):
    headers = build.find_headers()
    assert (headers.version, headers.source) == ("9.8.7", "env")


def test_miss_then_hit_in_the_same_entry(env):
    _, source = env
    first = build.build(spec(source))
    assert not first.cache_hit and first.path.is_file()
    again = build.build(spec(source))
    assert again.cache_hit and again.path == first.path
    manifest = again.manifest
    assert manifest["cutlass_version"] == "9.8.7" and manifest["header_source"] == "env"
    assert manifest["archs"] == ["sm_80"] and '-DVALUE_TEXT="1"' in manifest["flags"]
    lib, _ = build.load(spec(source))
    assert build.describe(lib) == {"kernel": "tiny", "value": "1"}


def test_key_covers_defines_archs_source_and_cutlass_version(env, monkeypatch):
    tmp, source = env
    base = build.build(spec(source)).path.parent
    assert build.build(spec(source, value=2)).path.parent != base
    assert build.build(spec(source, archs=("sm_90",))).path.parent != base
    source.write_text(TINY + "\n// edited\n")
    edited = build.build(spec(source))
    assert not edited.cache_hit and edited.path.parent != base
    (tmp / "include" / "cutlass" / "version.h").write_text(
        "#define CUTLASS_MAJOR 9\n#define CUTLASS_MINOR 8\n#define CUTLASS_PATCH 8\n"
    )
    bumped = build.build(spec(source))
    assert not bumped.cache_hit and bumped.path.parent != edited.path.parent


def test_corrupt_library_is_rebuilt(env):
    _, source = env
    first = build.build(spec(source))
    first.path.write_bytes(b"\x7fELF truncated")
    rebuilt = build.build(spec(source))
    assert not rebuilt.cache_hit and rebuilt.path == first.path
    lib, _ = build.load(spec(source))
    assert build.describe(lib)["kernel"] == "tiny"


def test_corrupt_manifest_is_rebuilt(env):
    _, source = env
    first = build.build(spec(source))
    (first.path.parent / "manifest.json").write_text("{not json")
    assert not build.build(spec(source)).cache_hit


def test_library_that_cannot_load_is_rebuilt_by_the_loader(env):
    _, source = env
    first = build.build(spec(source))
    # Checksum consistent, yet not a loadable library: only dlopen can tell.
    first.path.write_bytes(b"not an ELF file")
    manifest_path = first.path.parent / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["lib_sha256"] = build._sha256_file(first.path)
    manifest_path.write_text(json.dumps(manifest))
    lib, manifest = build.load(spec(source))
    assert build.describe(lib)["value"] == "1"


def test_cached_library_loads_without_nvcc_or_headers(env, monkeypatch):
    _, source = env
    built = build.build(spec(source))
    monkeypatch.setattr(build, "find_nvcc", lambda: None)
    monkeypatch.delenv("HARNESS_CUTLASS_INCLUDE")
    monkeypatch.setattr(build, "SUBMODULE_INCLUDE", Path("/nonexistent"))
    monkeypatch.setattr(build, "_wheel_include", lambda: None)
    assert build.toolchain_problem() is not None
    hit = build.lookup(spec(source))
    assert hit is not None and hit.path == built.path
    assert hit.manifest["cutlass_version"] == "9.8.7"
    lib, _ = build.load(spec(source))
    assert build.describe(lib)["kernel"] == "tiny"
    # ... but a spec that was never built cannot be.
    with pytest.raises(build.BuildError) as err:
        build.build(spec(source, value=3))
    assert "nvcc not found" in str(err.value) and "\n" not in str(err.value)


def test_missing_nvcc_and_missing_headers_are_one_line(env, monkeypatch):
    monkeypatch.setattr(build, "find_nvcc", lambda: None)
    why = build.toolchain_problem()
    assert why.startswith("nvcc not found") and "\n" not in why
    monkeypatch.undo()
    monkeypatch.setenv("HARNESS_CUTLASS_INCLUDE", "/nonexistent")
    monkeypatch.setattr(build, "SUBMODULE_INCLUDE", Path("/nonexistent"))
    monkeypatch.setattr(build, "_wheel_include", lambda: None)
    if build.find_nvcc() is not None:
        why = build.toolchain_problem()
        assert why.startswith("CUTLASS headers not found") and "\n" not in why


def test_compile_error_is_one_line_first(env):
    tmp, _ = env
    bad = tmp / "bad.cu"
    bad.write_text("this is not C++;\n")
    with pytest.raises(build.BuildError) as err:
        build.build(build.KernelSpec(str(bad), (), ("sm_80",), "bad"))
    assert str(err.value).startswith("nvcc failed for bad:")
    assert not list((tmp / "cache").glob("bad-*"))  # nothing half-written left behind


def test_build_many_runs_in_parallel_and_reports_each(env):
    _, source = env
    specs = [spec(source, value=v) for v in (10, 11)]
    results = build.build_many(specs, max_workers=2)
    assert all(isinstance(r, build.Built) and not r.cache_hit for r in results.values())
    values = {build.describe(ctypes.CDLL(str(r.path)))["value"] for r in results.values()}
    assert values == {"10", "11"}
