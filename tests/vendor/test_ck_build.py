"""Building tile_example_fmha_fwd, on the CPU: CK's flags per HIP version, the hipcc argument
lists, and the whole build (codegen -> parallel compiles -> link -> manifest -> cache lookup)
driven against a stand-in hipcc and the fixture-backed CK generator (conftest.py). No ROCm
compiler runs here: whether CK's sources compile is only provable with ROCm >= 6.2."""

from __future__ import annotations

import json
import stat
import sys

import pytest
from harness_kernels.ck import fmha_build as fb

FAKE_HIPCC = """
import json, os, sys
from pathlib import Path
argv = sys.argv[1:]
if argv == ["--version"]:
    print("HIP version: {version}\\nAMD clang version 18.0.0git")
    sys.exit(0)
with open(os.environ["FAKE_HIPCC_LOG"], "a") as log:
    log.write(json.dumps(argv) + "\\n")
out = Path(argv[argv.index("-o") + 1])
out.write_text("object\\n" if "-c" in argv else "#!/bin/sh\\necho linked\\n")
"""


def _hipcc(tmp_path, monkeypatch, version: str) -> str:
    exe = tmp_path / "hipcc"
    exe.write_text(f"#!{sys.executable}\n" + FAKE_HIPCC.format(version=version))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("HIPCC", str(exe))
    monkeypatch.setenv("FAKE_HIPCC_LOG", str(tmp_path / "hipcc.log"))
    monkeypatch.setenv("HARNESS_CK_CACHE", str(tmp_path / "cache"))
    return str(exe)


def test_parse_hip_version():
    assert fb.parse_hip_version("HIP version: 6.2.41133-dd7f95766\n") == (6, 2, 41133)
    assert fb.parse_hip_version("HIP version: 5.2.21153-0\n") == (5, 2, 21153)
    assert fb.parse_hip_version("clang version 17") is None


def test_flags_follow_cks_cmake_per_hip_version():
    rocm62 = fb.compile_flags((6, 2, 41133))
    assert "-DCK_TILE_FMHA_FWD_FAST_EXP2=1" in rocm62 and "-fgpu-flush-denormals-to-zero" in rocm62
    assert "-DCK_TILE_FMHA_FWD_SPLITKV_API=0" in rocm62 and "-std=c++17" in rocm62
    assert "-amdgpu-early-inline-all=true" in rocm62 and "-amdgpu-coerce-illegal-types=1" in rocm62
    rocm61 = fb.compile_flags((6, 1, 40091))
    assert "-enable-post-misched=0" in rocm61 and "-amdgpu-early-inline-all=true" not in rocm61
    rocm63 = fb.compile_flags((6, 3, 42131))
    assert "-amdgpu-coerce-illegal-types=1" not in rocm63
    for flags in (rocm61, rocm62, rocm63):  # every -mllvm is followed by its own argument
        assert all(
            not flags[i + 1].startswith("-mllvm") for i, f in enumerate(flags) if f == "-mllvm"
        )


def test_compile_and_link_commands(tmp_path):
    cmd = fb.compile_command(
        "/opt/rocm/bin/hipcc",
        tmp_path / "k.cpp",
        tmp_path / "k.o",
        "gfx942",
        tmp_path / "ck",
        ["-O3"],
    )
    assert cmd[:3] == ["/opt/rocm/bin/hipcc", "-O3", "--offload-arch=gfx942"]
    assert cmd[-4:] == ["-c", str(tmp_path / "k.cpp"), "-o", str(tmp_path / "k.o")]
    assert ["-I", str(tmp_path / "ck" / "include")] == cmd[3:5]
    assert str(tmp_path / "ck" / "example" / "ck_tile" / "01_fmha") in cmd
    link = fb.link_command("hipcc", [tmp_path / "a.o"], tmp_path / "exe", "gfx90a")
    assert link == [
        "hipcc",
        "--offload-arch=gfx90a",
        str(tmp_path / "a.o"),
        "-o",
        str(tmp_path / "exe"),
    ]


def test_debian_hipcc_is_refused(fake_ck, tmp_path, monkeypatch):
    _hipcc(tmp_path, monkeypatch, "5.2.21153-0")
    with pytest.raises(fb.BuildError, match=r"HIP \(5, 2, 21153\); CK's ck_tile needs >= 6.2"):
        fb.plan("register-trick", "gfx90a")
    with pytest.raises(ValueError, match="allowed: gfx90a, gfx942"):
        fb.plan("register-trick", "sm_90")


def test_build_end_to_end_with_stand_in_compiler(fake_ck, tmp_path, monkeypatch):
    _hipcc(tmp_path, monkeypatch, "6.2.41133-dd7f95766")
    assert fb.find_binary("register-trick", "gfx942") is None
    exe = fb.build("register-trick", "gfx942", jobs=2)
    calls = [json.loads(line) for line in (tmp_path / "hipcc.log").read_text().splitlines()]
    compiles, link = calls[:-1], calls[-1]
    sources = sorted(c[c.index("-c") + 1].rsplit("/", 1)[-1] for c in compiles)
    assert len(compiles) == 1 + 8 + 1  # CK's fmha_fwd.cpp, 8 kernels, the dispatch API
    assert "fmha_fwd.cpp" in sources and "fmha_fwd_api.cpp" in sources
    assert sum(s.startswith("fake_d128_") and "_qr_row_" in s for s in sources) == 8
    assert all("--offload-arch=gfx942" in c for c in calls) and "-c" not in link
    assert str(fake_ck / "example" / "ck_tile" / "01_fmha" / "fmha_fwd.cpp") in sum(compiles, [])
    manifest = json.loads((exe.parent / "manifest.json").read_text())
    assert manifest["ck_sha"] == fb.CK_SHA and manifest["config"] == "register-trick"
    assert [k["tag"] for k in manifest["kernels"]] == ["qr"] * 8
    assert fb.find_binary("register-trick", "gfx942") == exe
    assert (
        fb.find_binary("default", "gfx942") is None
        and fb.find_binary("register-trick", "gfx90a") is None
    )
    fb.build("register-trick", "gfx942")  # cached: nothing recompiled
    assert len((tmp_path / "hipcc.log").read_text().splitlines()) == len(calls)


def test_failed_compile_names_the_file(fake_ck, tmp_path, monkeypatch):
    hipcc = _hipcc(tmp_path, monkeypatch, "6.2.41133")
    with open(hipcc, "a") as f:
        f.write(
            "if '-c' in argv:\n    sys.stderr.write('error: no matching function\\n')\n"
            "    sys.exit(1)\n"
        )
    with pytest.raises(fb.BuildError, match=r"compile .*\.cpp failed \(exit 1\)"):
        fb.build("default", "gfx90a", dtypes=("fp16",), jobs=1)
