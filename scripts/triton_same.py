"""Whether a change to the own Triton kernels left their machine code as it was, without a GPU.

    python scripts/triton_same.py                          # every kernel, sm_90, against HEAD
    python scripts/triton_same.py --base HEAD~2 'attention:*decode*' gluon-gemm
    python scripts/triton_same.py --target gfx942          # AMD: the amdgcn text

scripts/sass_same.py's twin for kernels/triton. Each side (the sources at `--base`, in a temporary
git worktree, and this checkout) compiles ahead of time, in its own child process that imports
that side's `harness` and `harness_kernels`, every kernel `harness inspect` lists for the target
(the GEMM cases, the prefill and decode attention specs, the microbenchmarks) and, on sm_90, the
Gluon FMHA's, Gluon decode's and Gluon GEMM's specs; then compares, per kernel, the SASS that
ptxas makes of its PTX (cuobjdump's text: no line table, so moving code between lines of a file
changes nothing) or, on AMD, its amdgcn with the line and debug directives left out. Patterns
(inspect's `kernels=` globs, or the groups gemm, attention, microbench, gluon-attention,
gluon-decode, gluon-gemm) narrow the list. Both sides compile with this machine's Triton, so
what is compared is the change's, not a Triton upgrade's. Exit status as sass_same.py's: 0 every
one identical; 1 some differ; 2 a compile failed on either side or the sides list different
kernels.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sass_same import CUOBJDUMP, REPO, report, worktree

MARK = "TRITON_SAME "


def machine_code(asm: dict[str, str], tmp: Path) -> str:
    """SASS of the PTX (through the ptxas this Triton ships), else the amdgcn less its line,
    file and debug directives."""
    if "ptx" in asm:
        ptx = asm["ptx"]
        arch = re.search(r"^\s*\.target\s+(sm_\w+)", ptx, re.MULTILINE)
        assert arch is not None, "PTX without a .target line"
        bin_dir = CUOBJDUMP.parent  # Triton's wheel ships ptxas beside it
        ptxas = next(p for p in (bin_dir / "ptxas-blackwell", bin_dir / "ptxas") if p.exists())
        src = tmp / "k.ptx"
        src.write_text(ptx)
        subprocess.run(
            [str(ptxas), f"-arch={arch.group(1)}", str(src), "-o", str(tmp / "k.cubin")],
            check=True,
            capture_output=True,
        )
        dump = subprocess.run(
            [str(CUOBJDUMP), "-sass", str(tmp / "k.cubin")],
            check=True,
            capture_output=True,
            text=True,
        )
        return dump.stdout
    code = asm["amdgcn"].split("\t.section\t.debug", 1)[0]
    keep = [ln for ln in code.splitlines() if not re.match(r"\s*(\.loc|\.file|;)", ln)]
    return "\n".join(keep)


def _gluon_specs() -> list[tuple[str, dict[str, Any]]]:
    """(group, spec) of the Gluon kernels' ahead-of-time specs (sm_90 only)."""
    import torch
    from harness_kernels.triton import attention_decode_gluon, attention_gluon, gemm_gluon

    out = [
        ("gluon-attention", s)
        for d in (64, 128, 256)
        for s in attention_gluon.aot_specs(torch.bfloat16, d)
    ]
    out += [("gluon-decode", s) for s in attention_decode_gluon.aot_specs()]
    out += [("gluon-gemm", s) for s in gemm_gluon.aot_specs()]
    return out


def child(target_name: str, patterns: list[str]) -> None:
    """One side: a MARK line per matching kernel, {name, sha} or {name, error}."""
    from harness_kernels.triton import aot

    from harness import inspect

    target = aot.TARGETS[target_name][0]
    entries: list[tuple[str, Any]] = []
    for entry in inspect._catalog(target_name):
        if entry["name"].startswith("gemm:"):  # the catalog's GEMM compile drops the asm
            case = aot.gemm_cases()[entry["name"].removeprefix("gemm:")]
            entries.append((entry["name"], lambda c=case: aot.compile_gemm_case(c, target_name)))
        else:
            entries.append((entry["name"], entry["compile"]))
    if target_name == "sm_90":
        for group, spec in _gluon_specs():
            entries.append(
                (
                    f"{group}:{spec['name']}",
                    lambda s=spec: aot.compile_for(
                        s["fn"], target, s["signature"], s["constexprs"], s["attrs"], s["options"]
                    ),
                )
            )
    with tempfile.TemporaryDirectory() as tmp:
        for name, compile_ in entries:
            if patterns and not inspect.matches(name, patterns):
                continue
            try:
                info = compile_()
                code = machine_code(info["asm"], Path(tmp))
                if "sum" in info:  # split-K's second kernel
                    code += machine_code(info["sum"]["asm"], Path(tmp))
                row = {"name": name, "sha": hashlib.sha256(code.encode()).hexdigest()}
            except Exception as e:  # one kernel failing must not hide the others
                if isinstance(e, ValueError):
                    continue  # the launcher refuses this target (inspect's 'skipped')
                row = {"name": name, "error": f"{type(e).__name__}: {e}"[:300]}
            print(MARK + json.dumps(row), flush=True)


def side(root: Path, target: str, patterns: list[str], tmp: Path) -> dict[str, str]:
    """{kernel: sha or 'error: ...'} from a child that imports `root`'s harness and kernels."""
    shim = tmp / f"shim-{abs(hash(str(root)))}"
    shim.mkdir()
    (shim / "harness").symlink_to(root / "harness")
    (shim / "harness_kernels").symlink_to(root / "kernels")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(shim), str(Path(__file__).parent)])
    proc = subprocess.run(
        [sys.executable, __file__, "--child", "--target", target, *patterns],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp,
    )
    rows = [json.loads(ln[len(MARK) :]) for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"(child)": f"error: the {root.name} side's compile child failed: {last}"}
    return {r["name"]: r.get("sha") or f"error: {r['error']}" for r in rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("patterns", nargs="*", help="kernel globs or groups (default: all)")
    parser.add_argument("--base", default="HEAD", help="the git revision to compare against")
    parser.add_argument("--target", default="sm_90", help="sm_80, sm_90, gfx90a or gfx942")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout compared")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.target, args.patterns)
        return 0
    with tempfile.TemporaryDirectory() as tmp, worktree(args.repo, args.base, Path(tmp)) as base:
        with ThreadPoolExecutor(2) as pool:
            then, now = pool.map(
                lambda root: side(root, args.target, args.patterns, Path(tmp)), (base, args.repo)
            )
    if not then and not now:
        print(
            f"harness: error: patterns: {args.patterns}; allowed: globs or groups that name "
            "a kernel (harness inspect's names)",
            file=sys.stderr,
        )
        return 2
    results: list[tuple[str, bool | str]] = []
    for name in sorted(set(then) | set(now)):
        a, b = then.get(name), now.get(name)
        if a is None or b is None:
            where = "this checkout" if a is None else args.base
            results.append((name, f"listed only by {where}"))
        elif a.startswith("error") or b.startswith("error"):
            results.append((name, a if a.startswith("error") else b))
        else:
            results.append((name, a == b))
    return report(results, args.base)


if __name__ == "__main__":
    raise SystemExit(main())
