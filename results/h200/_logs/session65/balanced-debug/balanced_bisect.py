"""Debug bisect (session 65): variants of the Gluon decode kernel's balanced path, each in its
own process, checked segment by segment against fp32 partials (scripts/balanced_debug2.py)."""

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

SRC = Path("kernels/triton/attention_decode_gluon_kernel.py").read_text()


def variant(name: str) -> str:
    s = SRC
    if name == "no_fill":
        s = s.replace("            if last:\n", "            if last and False:\n")
    if name == "regs24":
        s = s.replace("PRODUCER_REGS = gl.constexpr(48)", "PRODUCER_REGS = gl.constexpr(24)")
    if name == "prologue_late":
        pro = re.search(
            r"    if BALANCED:\n        x0, x1, per, b0, base0 = .*?base0 = 0\n", s, re.S
        ).group(0)
        s = s.replace(pro, "")
        s = s.replace(
            "    fence_async_shared()  # the initialised barriers",
            pro + "    fence_async_shared()  # the initialised barriers",
        )
    if name == "dbgwait":
        s = s.replace(
            """    q = q_smem.index(qb)
    for i in range(0, n_full):""",
            """    q = q_smem.index(qb)
    mbarrier.wait(k_ready.index(t % STAGES), (t // STAGES) & 1)
    mbarrier.wait(v_ready.index(t % STAGES), (t // STAGES) & 1)
    for i in range(0, n_full):""",
        )
    if name == "nozero":
        s = s.replace(
            "            _zero_rows_from(v_smem.index(stage), kv_len - start, BLOCK_N, HEAD_DIM)\n",
            "            pass\n",
        )
    if name == "fence":
        s = s.replace(
            """    q = q_smem.index(qb)
    for i in range(0, n_full):""",
            """    q = q_smem.index(qb)
    fence_async_shared()
    _thread_barrier()
    for i in range(0, n_full):""",
        )
    if name == "scalar":
        # no prologue: each partition finds its run with scalar loops over the batch
        s = s.replace(
            """        x0, x1, per, b0, base0 = _balanced_run(Seqlens, batch, per_min, H_KV * M_BLOCKS,
                                               BLOCK_N, BLOCK_B)""",
            """        x0 = batch
        x1 = per_min
        per = 1
        b0 = 0
        base0 = 0""",
        )
        helper = """
@gluon.jit
def _scalar_run(Seqlens, batch, per_min, UNITS_B: gl.constexpr, BLOCK_N: gl.constexpr):
    total = 0
    for bb in range(0, batch):
        total += gl.maximum(gl.cdiv(gl.load(Seqlens + bb), BLOCK_N), 1) * UNITS_B
    per = gl.maximum(per_min, gl.cdiv(total, gl.num_programs(0)))
    x0 = gl.program_id(0) * per
    x1 = gl.minimum(x0 + per, total)
    b0 = 0
    base0 = 0
    for bb in range(0, batch):
        end = base0 + gl.maximum(gl.cdiv(gl.load(Seqlens + bb), BLOCK_N), 1) * UNITS_B
        inc = (end <= x0).to(gl.int32)
        b0 += inc
        base0 += inc * (end - base0)
    return x0, x1, per, b0, base0

"""
        s = s.replace("@gluon.jit\ndef _segment(", helper + "@gluon.jit\ndef _segment(")
        # x0 carries batch, x1 carries per_min into the partitions
        s = s.replace(
            """    if BALANCED:
        x = x0
        b = b0
        base = base0
        while x < x1:""",
            """    if BALANCED:
        x0, x1, per, b, base = _scalar_run(Seqlens, x0, x1, H_KV * M_BLOCKS, BLOCK_N)
        x = x0
        while x < x1:""",
        )
    if name == "for_loop":
        s = s.replace(
            "        while x < x1:\n",
            "        for _unused in range(0, x1 - x0):\n          if x < x1:\n",
        )
        # indent the while bodies by two spaces: the lines after each `if x < x1:` up to the else
        out, inside = [], False
        for line in s.splitlines():
            if line.startswith("          if x < x1:"):
                inside = True
                out.append(line)
                continue
            if inside and line.startswith("    else:"):
                inside = False
            out.append(("  " + line) if inside and line.strip() else line)
        s = "\n".join(out) + "\n"
    return s


def child(name: str) -> None:
    path = Path(f"kernels/triton/_bisect_{name}.py")
    path.write_text(variant(name))
    mod = importlib.import_module(f"harness_kernels.triton._bisect_{name}")
    sys.modules["harness_kernels.triton.attention_decode_gluon_kernel"] = mod
    sys.path.insert(0, "scripts")
    import balanced_debug2 as D

    for case in (
        [[1000, 17], 2, 1, 16, 0, False],
        [[17, 1000], 2, 2, 16, 0, False],
        [[1000, 17], 2, 1],
        [[17, 1000], 2, 2],
    ):
        D.partials(*case)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] != "all":
        child(sys.argv[1])
    else:
        for name in sys.argv[2:] if len(sys.argv) > 2 else ("scalar",):
            r = subprocess.run(
                [sys.executable, __file__, name],
                capture_output=True,
                text=True,
                timeout=120,
                env=dict(os.environ),
            )
            lines = [
                l
                for l in (r.stdout + r.stderr).splitlines()
                if "partials" in l or "pid" in l or "Error" in l
            ]
            lines = [l[:160] for l in lines]
            print(f"== {name} rc {r.returncode}")
            print("\n".join(lines[:12]))
