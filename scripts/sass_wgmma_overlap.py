"""What the Gluon FMHA runs under its P V wgmma, read from SASS without a GPU.

    python scripts/sass_wgmma_overlap.py                       # the causal D 128 fp16 specs
    python scripts/sass_wgmma_overlap.py --rungs full scalar-cvt --head-dim 64 --dtype bf16
    python scripts/sass_wgmma_overlap.py --match _c2_pp         # names ending so

With the overlap, a consumer issues tile i's Q K^T and tile i-1's P V, waits for the scores
(`wgmma.wait_group 1`: SASS `WARPGROUP.DEPBAR.LE gsb0, 0x1`), runs tile i's softmax and only then
waits for P V (`... 0x0`). What sits between the two waits runs under P V; what follows the
second wait until the next wgmma issue (`HGMMA`) is the consumer's critical path. ptxas, not the
source order, decides where the second wait lands: the PTX keeps it after the softmax, and ptxas
moves it up (session 105 found 36 instructions under P V where FA4 keeps about 160; session 106
found it moves up with no barrier release after it at all). This script prints, for each
`gsb0, 0x1` wait of each spec, (instructions under P V, MUFU.EX2 among them, FFMA among them,
instructions from the P V wait to the next HGMMA), so a change to the kernel's tile loop can be
read for what it does to that placement before a GPU times it. Compiles with this machine's
Triton for sm_90a (Triton 3.9 here; the lent GPUs' image has 3.6, whose ptxas may place it
elsewhere).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

WAIT_SCORES = "DEPBAR.LE gsb0, 0x1"
WAIT_PV = "DEPBAR.LE gsb0, 0x0"


def opcode(instruction: str) -> str:
    """The opcode of a SASS instruction, its predicate (`@P0`, `@!UP1`) left out."""
    words = instruction.split()
    return words[1] if words[0].startswith("@") and len(words) > 1 else words[0]


def instructions(sass: str) -> list[str]:
    """cuobjdump's SASS text as one string per instruction, in address order."""
    return [m.group(1) for m in re.finditer(r"^\s+/\*[0-9a-f]+\*/\s+(.*?)\s*;", sass, re.M)]


def overlaps(ins: list[str]) -> list[tuple[int, int, int, int]]:
    """Per scores wait: (instructions before the P V wait, MUFU.EX2 and FFMA among them,
    instructions from the P V wait to the next HGMMA or the end)."""
    out = []
    for i, x in enumerate(ins):
        if WAIT_SCORES not in x:
            continue
        j = next((k for k in range(i + 1, len(ins)) if WAIT_PV in ins[k]), None)
        if j is None:
            continue
        under = [opcode(y) for y in ins[i + 1 : j]]
        nxt = next((k for k in range(j + 1, len(ins)) if opcode(ins[k]).startswith("HGMMA")), None)
        after = (nxt if nxt is not None else len(ins)) - j - 1
        out.append(
            (
                len(under),
                sum(o.startswith("MUFU.EX2") for o in under),
                sum(o.startswith("FFMA") for o in under),
                after,
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rungs", nargs="+", default=["full"])
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16")
    ap.add_argument("--causal", choices=("true", "false"), default="true")
    ap.add_argument("--match", default="", help="only specs whose name ends with this")
    args = ap.parse_args(argv)

    # compile, never interpret; set here, not on import, so a test that imports this module
    # leaves its own process's interpreter setting alone
    os.environ["TRITON_INTERPRET"] = "0"
    import torch
    from harness_kernels.triton import aot
    from harness_kernels.triton import attention_gluon as G
    from triton.backends.compiler import GPUTarget
    from triton_same import machine_code

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    specs = G.aot_specs(dtype, args.head_dim, rungs=args.rungs, causal=(args.causal == "true",))
    specs = [s for s in specs if s["name"].endswith(args.match)]
    target = GPUTarget("cuda", 90, 32)
    print(
        "spec  regs  spills  per scores wait: (under P V, MUFU.EX2, FFMA, P V wait to next HGMMA)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for s in specs:
            info = aot.compile_for(
                s["fn"], target, s["signature"], s["constexprs"], s["attrs"], s["options"]
            )
            ins = instructions(machine_code(info["asm"], Path(tmp)))
            print(s["name"], info.get("n_regs"), info.get("n_spills"), overlaps(ins))
    return 0 if specs else 1


if __name__ == "__main__":
    sys.exit(main())
