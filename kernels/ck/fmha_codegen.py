"""The project's two code-generation configs of CK's tile FMHA forward example.

No CK file is copied or patched. CK's own generator module
(example/ck_tile/01_fmha/codegen/ops/fmha_fwd.py in the pinned submodule) is imported at build
time; its default kernel list is filtered to what this project measures and, for the
register-trick config, each kept kernel's pipeline is rewritten; CK's own writers then emit the
kernel blobs and the dispatch API into a build folder.

    python -m harness_kernels.ck.fmha_codegen --config register-trick[-unpadded] --output-dir DIR [--list]

Kept (both configs): head dim 128, fp16 and bf16, batch mode, row-major V, no bias, no LSE
store, no dropout, no fp8 static quant, no mask and causal (CK's "simplified" mask, whose
runtime window also expresses bottom-right alignment). Per dtype that is CK's four default
kernels: seqlen-k padded or not x masked or not.

  default         CK's choice: `qr_async` (BlockFmhaPipelineQRKSVSAsync): Q in VGPRs, K tiles
                  copied global -> LDS by async buffer loads that bypass the registers.
  register-trick  the same four kernels per dtype with `qr` (BlockFmhaPipelineQRKSVS): Q in
                  VGPRs as in the default, and the next K tile prefetched global -> registers
                  -> LDS instead of by async copies, so its loads overlap the current tile's
                  MFMAs (the thesis's config). V goes through registers in both pipelines, so
                  K's path is the pipelines' difference. CK's default kernels are padded in the
                  head dim, which `qr` (not `qr_async`) serves with 2-byte global accesses.
  register-trick-unpadded  the same, with an unpadded `qr` kernel per dtype and mask ahead of
                  them (16-byte accesses where the shape is on the tile grid, as at S 4096):
                  default against it isolates the pipeline; it against register-trick, the
                  padding's narrowing.

Generator interface used, as of the pinned commit: get_fwd_blobs(kernel_filter, receipt,
mask_impl) -> (FmhaFwdApiPool, [FmhaFwdKernel]); the dataclasses FmhaFwdKernel (F_idx, F_hdim,
F_dtype, F_mode, F_tile, F_pipeline, mask_impl; .name, .filename, .api_trait()) and
FmhaFwdPipeline (tag, F_vlayout, F_spad, F_skpad, F_dpad, F_dvpad, F_bias, F_lse, F_dropout,
F_squant, F_mask); FmhaFwdApiPool(mask_impl).register_traits(); write_single_fwd_kernel();
write_fwd_api(); FMHA_FWD_API_FILENAME.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from . import CK_SHA

FMHA_EXAMPLE = Path("example/ck_tile/01_fmha")
CONFIGS = ("default", "register-trick", "register-trick-unpadded")
# (spad, skpad, dpad, dvpad) of the unpadded `qr` kernel: CK's `qr` pipeline drops its global
# loads and stores to one element (2 bytes) when the head dim is padded (dpad / dvpad 't'), which
# CK's default head-dim-128 set always is; `qr_async` keeps 16-byte vectors either way. Without
# this kernel the register-trick A/B also measures that narrowing, not the pipeline alone.
UNPADDED = ("f", "f", "f", "f")
DEFAULT_PIPELINE = "qr_async"
REGISTER_TRICK_PIPELINE = "qr"
RECEIPT = 0  # CK's default instance set (what CMake builds for the example)
MASK_IMPL = "simplified"
PIPELINE_FIELDS = (
    "tag",
    "F_vlayout",
    "F_spad",
    "F_skpad",
    "F_dpad",
    "F_dvpad",
    "F_bias",
    "F_lse",
    "F_dropout",
    "F_squant",
    "F_mask",
)


class CodegenError(RuntimeError):
    """CK's generator is missing, or no longer yields the kernels this config expects."""


@dataclass(frozen=True)
class Selection:
    """Which of CK's forward kernels the project builds (bias, LSE, dropout, quant always off)."""

    hdim: int = 128
    dtypes: tuple[str, ...] = ("fp16", "bf16")
    mode: str = "batch"
    vlayout: str = "row"
    masks: tuple[str, ...] = ("s_no", "s_mask")


def load_generator(ck_root: str | Path) -> ModuleType:
    """Import CK's codegen.ops.fmha_fwd from a CK checkout (its package is named `codegen`)."""
    fmha_dir = Path(ck_root) / FMHA_EXAMPLE
    if not (fmha_dir / "codegen" / "ops" / "fmha_fwd.py").is_file():
        raise CodegenError(f"CK's FMHA generator not found under {fmha_dir}")
    loaded = sys.modules.get("codegen")
    if (
        loaded is not None
        and Path(loaded.__path__[0]).resolve() != (fmha_dir / "codegen").resolve()
    ):
        raise CodegenError(f"another module named 'codegen' is already imported: {loaded}")
    sys.path.insert(0, str(fmha_dir))
    try:
        return importlib.import_module("codegen.ops.fmha_fwd")
    finally:
        sys.path.remove(str(fmha_dir))


def _wanted(kernel: Any, sel: Selection) -> bool:
    p = kernel.F_pipeline
    return (
        int(kernel.F_hdim) == sel.hdim
        and kernel.F_dtype in sel.dtypes
        and kernel.F_mode == sel.mode
        and p.F_vlayout == sel.vlayout
        and p.F_mask in sel.masks
        and (p.F_bias, p.F_lse, p.F_dropout, p.F_squant) == ("no", "f", "f", "f")
    )


def select_kernels(gen: ModuleType, config: str, sel: Selection = Selection()) -> list[Any]:
    """The FmhaFwdKernel objects of one config, in CK's dispatch order.

    Order matters: CK's dispatcher tries kernels in registration order, and a `qr` kernel whose
    seqlen-k padding is off must come before its padded twin (CK's own note in fmha_fwd.py)."""
    if config not in CONFIGS:
        raise ValueError(f"config: unknown '{config}'; allowed: {', '.join(CONFIGS)}")
    _, kernels = gen.get_fwd_blobs(None, RECEIPT, MASK_IMPL)
    kept = [k for k in kernels if _wanted(k, sel)]
    tags = sorted({k.F_pipeline.tag for k in kept})
    if tags != [DEFAULT_PIPELINE]:
        raise CodegenError(
            f"CK's default hdim-{sel.hdim} set for {sel.dtypes} uses pipelines {tags}; this "
            f"config expects only {DEFAULT_PIPELINE}: the pinned generator changed"
        )
    missing = {(d, m) for d in sel.dtypes for m in sel.masks} - {
        (k.F_dtype, k.F_pipeline.F_mask) for k in kept
    }
    if missing:
        raise CodegenError(f"CK's generator has no kernel for (dtype, mask) {sorted(missing)}")
    if config in ("register-trick", "register-trick-unpadded"):
        kept = [
            dataclasses.replace(
                k, F_pipeline=dataclasses.replace(k.F_pipeline, tag=REGISTER_TRICK_PIPELINE)
            )
            for k in kept
        ]
    if config == "register-trick-unpadded":
        kept = _unpadded_first(kept)
    return kept


def _unpadded_first(kernels: list[Any]) -> list[Any]:
    """Per (dtype, mask), a kernel with no padding at all ahead of the padded ones, which stay
    as the fallback for shapes off the tile grid (CK's own order at head dim 256: the
    dispatcher takes the first kernel whose padding the problem allows)."""
    out: list[Any] = []
    for k in kernels:
        key = (k.F_dtype, k.F_pipeline.F_mask)
        if not any((o.F_dtype, o.F_pipeline.F_mask) == key for o in out):
            fields = dict(zip(("F_spad", "F_skpad", "F_dpad", "F_dvpad"), UNPADDED, strict=True))
            out.append(
                dataclasses.replace(k, F_pipeline=dataclasses.replace(k.F_pipeline, **fields))
            )
        out.append(k)
    return out


def kernel_traits(kernel: Any) -> dict[str, Any]:
    """A kernel as plain values (name, hdim, dtype, mode and every pipeline field)."""
    p = kernel.F_pipeline
    return {
        "name": kernel.name,
        "hdim": int(kernel.F_hdim),
        "dtype": kernel.F_dtype,
        "mode": kernel.F_mode,
        **{f.removeprefix("F_"): getattr(p, f) for f in PIPELINE_FIELDS},
    }


def write_blobs(gen: ModuleType, kernels: list[Any], out_dir: str | Path) -> list[Path]:
    """Write one .cpp per kernel and the dispatch API with CK's own writers; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pool = gen.FmhaFwdApiPool(MASK_IMPL)
    for k in kernels:
        pool.register_traits(k.api_trait())
        gen.write_single_fwd_kernel(k, out)
    gen.write_fwd_api(pool, out)
    return [out / k.filename for k in kernels] + [out / gen.FMHA_FWD_API_FILENAME]


def record_interface(gen: ModuleType, sel: Selection = Selection()) -> str:
    """The generator's default kernel list as plain data, the tests' fixture format: every
    kernel at the selected head dim, plus those at other head dims that differ from a selected
    kernel in head dim alone, as recorded from CK at the pinned commit (CK_SHA; the tree
    itself cannot tell). JSON with one kernel per line: [hdim, dtype, mode, index into
    "tiles", [pipeline fields...]]."""
    _, kernels = gen.get_fwd_blobs(None, RECEIPT, MASK_IMPL)
    tiles: list[list[int]] = []
    rows = []
    for k in kernels:
        near = dataclasses.replace(sel, hdim=int(k.F_hdim))
        if int(k.F_hdim) != sel.hdim and not _wanted(k, near):
            continue
        tile = list(dataclasses.astuple(k.F_tile))
        if tile not in tiles:
            tiles.append(tile)
        p = k.F_pipeline
        row = [
            int(k.F_hdim),
            k.F_dtype,
            k.F_mode,
            tiles.index(tile),
            [getattr(p, f) for f in PIPELINE_FIELDS],
        ]
        rows.append(json.dumps(row, separators=(",", ":")))
    compact = lambda v: json.dumps(v, separators=(",", ":"))
    fields = [f.name for f in dataclasses.fields(kernels[0].F_tile)]
    return (
        f'{{"ck_sha":"{CK_SHA}",\n'
        f'"call":{compact(f"get_fwd_blobs(None, {RECEIPT}, {MASK_IMPL!r})")},\n'
        f'"tile_fields":{compact(fields)},\n"pipeline_fields":{compact(PIPELINE_FIELDS)},\n'
        f'"tiles":{compact(tiles)},\n"kernels":[\n' + ",\n".join(rows) + "\n]}\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ck-root", default=os.environ.get("HARNESS_CK_ROOT"))
    parser.add_argument("--config", choices=CONFIGS, default="register-trick")
    parser.add_argument("--dtypes", default="fp16,bf16")
    parser.add_argument("--output-dir")
    parser.add_argument("--list", action="store_true", help="print the kernel names only")
    parser.add_argument("--record-fixture", metavar="JSON", help="write record_interface()")
    args = parser.parse_args(argv)
    root = Path(
        args.ck_root or Path(__file__).resolve().parents[2] / "third_party/composable_kernel"
    )
    gen = load_generator(root)
    if args.record_fixture:
        Path(args.record_fixture).write_text(record_interface(gen))
        return 0
    kernels = select_kernels(gen, args.config, Selection(dtypes=tuple(args.dtypes.split(","))))
    if args.list or not args.output_dir:
        print("\n".join(k.name for k in kernels))
        return 0
    for path in write_blobs(gen, kernels, args.output_dir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
