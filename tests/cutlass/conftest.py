"""Fixtures for the own-CUTLASS tests: nvcc (skip without it), a session-wide build cache, and
one build of each .cu file per session, compiled in parallel.

The headers come from the installed nvidia-cutlass wheel (the `cutlass` extra), the
third_party/cutlass submodule, or $HARNESS_CUTLASS_INCLUDE. Without nvcc the tests skip; without
the headers they skip with the install hint, except where HARNESS_REQUIRE_CUTLASS=1 (CI sets it
and installs the headers), where a missing tree is a failure.
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from harness_kernels.cutlass import build

TEST_DIR = Path(__file__).resolve().parent


def _cuobjdump() -> Path:
    # triton is imported here, not at the top: pytest loads this conftest before the root one's
    # pytest_configure sets TRITON_INTERPRET, and `import triton` decorates triton.language's own
    # @jit helpers then, so the interpreter tests that ran later in the same process failed
    # ("Cannot call @triton.jit'd outside of the scope of a kernel").
    import triton

    return Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"


def _need_nvcc() -> None:
    if build.find_nvcc() is None:
        pytest.skip("nvcc not found: the own-CUTLASS build tests need the CUDA compiler")


def _need_headers() -> build.Headers:
    headers = build.find_headers()
    if headers is None:
        missing = pytest.fail if os.environ.get("HARNESS_REQUIRE_CUTLASS") == "1" else pytest.skip
        missing(
            "CUTLASS headers not found: pip install -e '.[cutlass]' (nvidia-cutlass), "
            "check out third_party/cutlass, or set HARNESS_CUTLASS_INCLUDE"
        )
    return headers


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    """A cache directory shared by every compile in this test session."""
    return tmp_path_factory.mktemp("cutlass-cache")


@pytest.fixture(scope="session")
def kernel_builds(session_cache: Path) -> dict:
    """One configuration of each .cu file, built once, in parallel: {"sass": {name: the file
    cuobjdump reads}, "libraries": {name: Built}, "layout_check": (output, return code) of the
    host program fmha_layout_check.cu}.

    Two are whole libraries (a .so: the ABI test loads them, one GEMM and one FMHA); the rest are
    device code alone (a fatbin: the SASS tests read nothing else). Skipping their host half
    (cudafe++ and g++ over the CUTLASS headers, about half of a build) keeps CI's two cores under
    its time limit."""
    _need_nvcc()
    headers = _need_headers()
    exe = session_cache / "fmha_layout_check"
    # The host-only layout program compiles alongside the libraries.
    layout_build = subprocess.Popen(
        [
            str(build.find_nvcc()),
            "-std=c++17",
            "--expt-relaxed-constexpr",
            f"-I{headers.include}",
            f"-I{build.SOURCE_DIR}",
            str(TEST_DIR / "fmha_layout_check.cu"),
            "-o",
            str(exe),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    from harness_kernels.cutlass.fmha import fmha_spec
    from harness_kernels.cutlass.gemm import CONFIGS

    libraries = {
        # The N split with its 16-byte-store epilogue (sm90_quad_store_epilogue.h), in a
        # multicast pair: each consumer warpgroup one 64x160 wgmma per K step. (It took the
        # place of a 128x160 wave-fill build with the same wgmma: one sm90_gemm build fewer
        # keeps CI's two cores in time; the TMA epilogue's store is read in the tf32 build.)
        "sm90_gemm": CONFIGS["sm90-coopn-128x320-c2x1-st16"].spec("bf16", b_col=True),
        "fmha_sm90": fmha_spec("bf16", 128, "sm90"),
    }
    # The sm80 path's libraries carry sm_80 and sm_90 code; here only sm_90's, the code the lent
    # Hopper GPUs run (a second cicc pass each; the builds on those GPUs compile both).
    hopper = ("sm_90",)
    device_only = {
        # FA3's structure with every feature on: TMA producer, ping-pong, intra-warpgroup
        # overlap, the O tile stored 16 bytes per thread (quad_store.h), persistent CTAs taking
        # their tiles from an atomic counter; on 128x128 tiles (fa3-t128, the rungs' base)
        "fmha_sm90_ws": fmha_spec("bf16", 128, "fa3-t128"),
        # fa3 at D 64: FA3's 192-row tile, three consumer warpgroups
        "fmha_sm90_ws_192": fmha_spec("bf16", 64, "fa3"),
        # fa3 at D 256: FA3's 80-key tile, a wgmma N CuTe offers only among its extended shapes
        "fmha_sm90_ws_80": fmha_spec("bf16", 256, "fa3"),
        # the same with a static share of tiles per CTA (causal: one CTA per tile)
        "fmha_sm90_ws_static": fmha_spec("bf16", 128, "fa3-static"),
        # the same as fa3 with a quarter of the exp2 on the FMA pipe (HK_EXP_EMU 4)
        "fmha_sm90_ws_exp_emu": fmha_spec("bf16", 128, "fa3-exp-emu"),
        "fmha_sm80": replace(fmha_spec("bf16", 128), archs=hopper),
        "sm80_gemm": replace(CONFIGS["sm80-multistage"].spec("bf16", b_col=True), archs=hopper),
        # tf32 with a row-major B: built swapped, B^T through CUTLASS's register-A mainloop
        "sm90_gemm_tf32_nn": CONFIGS["sm90-coop-128x256"].spec("tf32", b_col=False),
    }

    def one(name: str):
        try:
            if name in libraries:
                return build.build(libraries[name])
            return build.device_code(device_only[name], session_cache / f"{name}.fatbin")
        except build.BuildError as e:
            return e

    mp = pytest.MonkeyPatch()
    mp.setenv("HARNESS_CUTLASS_CACHE", str(session_cache))
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            # Longest first: two nvcc processes on two cores finish about together.
            names = ["sm90_gemm", "fmha_sm90_ws", "fmha_sm80", "sm80_gemm", "fmha_sm90"]
            names += ["sm90_gemm_tf32_nn", "fmha_sm90_ws_static", "fmha_sm90_ws_exp_emu"]
            names += ["fmha_sm90_ws_192", "fmha_sm90_ws_80"]
            results = dict(zip(names, pool.map(one, names), strict=True))
    finally:
        mp.undo()
    for name, result in results.items():
        if isinstance(result, Exception):
            pytest.fail(f"{name}: {result}")
    out: dict = {
        "sass": {name: getattr(r, "path", r) for name, r in results.items()},
        "libraries": {name: results[name] for name in libraries},
    }
    log, _ = layout_build.communicate()
    if layout_build.returncode != 0:
        pytest.fail(f"fmha_layout_check.cu did not compile: {log[-2000:]}")
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    out["layout_check"] = (run.stdout + run.stderr, run.returncode)
    return out


@pytest.fixture(scope="session")
def sass_of():
    """sass_of(lib) -> {'sm_90a': sass text, ...}, disassembled once per library."""
    seen: dict[Path, dict[str, str]] = {}

    def get(lib: Path) -> dict[str, str]:
        if lib not in seen:
            seen[lib] = sass_by_arch(lib)
        return seen[lib]

    return get


def sass_by_arch(lib: Path) -> dict[str, str]:
    """{'sm_90a': sass text, ...} from cuobjdump on a built library."""
    text = subprocess.run(
        [str(_cuobjdump()), "-sass", str(lib)], capture_output=True, text=True, check=True
    ).stdout
    sections: dict[str, str] = {}
    arch = None
    for line in text.splitlines():
        if m := re.search(r"arch = (sm_\w+)", line):
            arch = m.group(1)
        if arch:
            sections[arch] = sections.get(arch, "") + line + "\n"
    return sections
