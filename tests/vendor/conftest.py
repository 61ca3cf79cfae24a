"""Fixtures for the CK tests: a fake CK checkout whose FMHA generator is rebuilt from the recorded
interface fixture, and a fake tile_example_fmha_fwd that prints CK's output line.

CK's source is not checked out in CI (third_party/composable_kernel is a submodule), so the
generator's interface is recorded in fixtures/ck_fmha_fwd_interface.json: the kernel-trait
tuples CK's get_fwd_blobs(None, 0, 'simplified') returns at the pinned commit (every hdim-128
kernel, plus the kernels at other head dims that differ from a selected one in head dim alone),
written by `python -m harness_kernels.ck.fmha_codegen --ck-root <CK> --record-fixture PATH`.
"""

from __future__ import annotations

import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "ck_fmha_fwd_interface.json"

# CK's codegen/ops/fmha_fwd.py reduced to its interface, its data taken from the fixture. Field
# names are CK's; names and templates are stand-ins (the real ones are tested against CK itself).
_FAKE_GENERATOR = textwrap.dedent(
    """
    import dataclasses, json
    from pathlib import Path

    FMHA_FWD_API_FILENAME = "fmha_fwd_api.cpp"
    _FIX = json.loads(Path({fixture!r}).read_text())
    FmhaFwdTileSize = dataclasses.make_dataclass("FmhaFwdTileSize", _FIX["tile_fields"])
    FmhaFwdPipeline = dataclasses.make_dataclass("FmhaFwdPipeline", _FIX["pipeline_fields"])


    @dataclasses.dataclass
    class FmhaFwdKernel:
        F_idx: int
        F_hdim: int
        F_dtype: str
        F_mode: str
        F_tile: object
        F_pipeline: object
        mask_impl: str

        @property
        def name(self):
            p = "_".join(dataclasses.astuple(self.F_pipeline))
            return f"fake_d{{self.F_hdim}}_{{self.F_dtype}}_{{self.F_mode}}_{{p}}"

        @property
        def filename(self):
            return self.name + ".cpp"

        @property
        def template(self):
            return f"// {{self.name}}\\n"

        def api_trait(self):
            return (self.F_dtype, self.F_hdim, self.F_pipeline.tag, self.F_pipeline.F_skpad)


    class FmhaFwdApiPool:
        def __init__(self, mask_impl):
            self.mask_impl, self.traits = mask_impl, []

        def register_traits(self, trait):
            self.traits.append(trait)


    CALLS = []


    def get_fwd_blobs(kernel_filter, receipt, mask_impl):
        CALLS.append((kernel_filter, receipt, mask_impl))
        kernels = [
            FmhaFwdKernel(0, hdim, dtype, mode, FmhaFwdTileSize(*_FIX["tiles"][tile]),
                          FmhaFwdPipeline(*pipe), mask_impl)
            for hdim, dtype, mode, tile, pipe in _FIX["kernels"]
        ]
        return FmhaFwdApiPool(mask_impl), kernels


    def write_single_fwd_kernel(kernel, autogen_dir):
        (Path(autogen_dir) / kernel.filename).write_text(kernel.template)


    def write_fwd_api(api_pool, autogen_dir):
        lines = [" ".join(map(str, t)) for t in api_pool.traits]
        (Path(autogen_dir) / FMHA_FWD_API_FILENAME).write_text("\\n".join(lines) + "\\n")
    """
)


def _drop_codegen_modules(monkeypatch) -> None:
    for name in [m for m in sys.modules if m == "codegen" or m.startswith("codegen.")]:
        monkeypatch.delitem(sys.modules, name)


@pytest.fixture
def fake_ck(tmp_path, monkeypatch) -> Path:
    """A CK tree with the headers' and example's marker files and the fixture-backed generator;
    HARNESS_CK_ROOT points at it."""
    root = tmp_path / "composable_kernel"
    fmha = root / "example" / "ck_tile" / "01_fmha"
    (root / "include" / "ck_tile").mkdir(parents=True)
    (root / "include" / "ck_tile" / "core.hpp").write_text("// marker\n")
    (fmha / "codegen" / "ops").mkdir(parents=True)
    (fmha / "fmha_fwd.cpp").write_text("// marker\n")
    (fmha / "codegen" / "__init__.py").write_text("")
    (fmha / "codegen" / "ops" / "__init__.py").write_text("")
    (fmha / "codegen" / "ops" / "fmha_fwd.py").write_text(
        _FAKE_GENERATOR.format(fixture=str(FIXTURE))
    )
    monkeypatch.setenv("HARNESS_CK_ROOT", str(root))
    _drop_codegen_modules(monkeypatch)
    return root


@pytest.fixture
def real_ck(monkeypatch) -> Path:
    """CK's own checkout ($HARNESS_CK_ROOT or the submodule); skipped when absent (CI)."""
    from harness_kernels.ck import fmha_build

    root = fmha_build.ck_root()
    if fmha_build.ck_missing(root) is not None:
        pytest.skip("composable_kernel not checked out (set HARNESS_CK_ROOT to run against CK)")
    _drop_codegen_modules(monkeypatch)
    return root


# A stand-in for tile_example_fmha_fwd: echoes the problem in CK's header format and prints a
# result line; FAKE_CK_MODE = ok | invalid | unsupported | other-problem | crash.
_FAKE_BINARY = textwrap.dedent(
    """
    import os, sys
    a = dict(arg[1:].split("=", 1) for arg in sys.argv[1:])
    mode = os.environ.get("FAKE_CK_MODE", "ok")
    with open(os.environ["FAKE_CK_LOG"], "a") as log:
        log.write(" ".join(sys.argv[1:]) + "\\n")
    if mode == "crash":
        sys.stderr.write("HIP error: out of memory\\n")
        sys.exit(1)
    mask = {"0": "n", "t": "t(-1:0)", "b": "b(-1:0)"}[a["mask"]]
    h = "7" if mode == "other-problem" else a["h"]
    print(f"[{a['prec']}|batch|bhsd] b:{a['b']}, h:{h}/{a['h_k']}, s:{a['s']}/{a['s_k']}, "
          f"d:{a['d']}/{a['d']}, scale_s:0.0883883, bias:n, p_drop:0, lse:0, squant:0, "
          f"mask:{mask}, v:r", end="")
    if mode == "unsupported":
        print(", not supported yet")
        sys.exit(254)
    print(f", fmha_fwd_d128_{a['prec']}_batch_shb_b128x128x32x128x32x128_r4x1x1_w32x32x16_qr_vr"
          "_psddv_mask, 3.955 ms, 69.50 TFlops, 33.94 GB/s", end="")
    if a["v"] == "1":
        print(", valid:" + ("n" if mode == "invalid" else "y"))
        sys.exit(254 if mode == "invalid" else 0)
    print()
    """
)


@pytest.fixture
def fake_ck_binary(tmp_path, monkeypatch):
    """Fake binaries for both configs on gfx942 in a fresh build cache; returns the call log."""
    from harness_kernels.ck import fmha_build

    cache = tmp_path / "ck-cache"
    log = tmp_path / "calls.log"
    log.write_text("")
    monkeypatch.setenv("HARNESS_CK_CACHE", str(cache))
    monkeypatch.setenv("FAKE_CK_LOG", str(log))
    for config in ("default", "register-trick"):
        out = cache / f"{config}-gfx942-0123456789abcdef"
        out.mkdir(parents=True)
        exe = out / fmha_build.EXE_NAME
        exe.write_text(f"#!{sys.executable}\n" + _FAKE_BINARY)
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
        (out / "manifest.json").write_text(
            f'{{"ck_sha": "{fmha_build.CK_SHA}", "codegen": "{fmha_build._codegen_hash()}"}}'
        )
    assert os.access(exe, os.X_OK)
    return log
