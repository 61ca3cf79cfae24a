# Session 78, on the CPU box: the 144- and 80-wide Gluon tiles (N parts 128+16, 64+16) compiled
# ahead of time for sm_90 at two Qwen shapes (bf16) and one (fp8), with gemm_gluon.N_PARTS
# replaced in this process only. Run from the repository root: python3 <this file>
import re

import torch
from harness_kernels.triton import aot
from harness_kernels.triton import gemm_gluon as G
from triton.backends.compiler import GPUTarget

G.N_PARTS = ((128, 16), (64, 16))
target = GPUTarget("cuda", 90, 32)
specs = G.aot_specs(torch.bfloat16, True, shapes=((512, 4608, 3584), (256, 4608, 3584)))
specs += G.aot_specs(torch.float8_e4m3fn, True, shapes=((512, 4608, 3584),))
for spec in specs:
    c = spec["constexprs"]
    try:
        info = aot.compile_for(
            spec["fn"], target, spec["signature"], c, spec["attrs"], spec["options"]
        )
    except Exception as exc:
        print(spec["name"], "ERROR", f"{type(exc).__name__}: {exc}"[:600])
        continue
    ptx = info["asm"]["ptx"]
    print(
        spec["name"],
        "shared",
        info["shared"],
        "spills",
        info.get("n_spills"),
        "mma",
        info["mma"],
        "wgmma shapes",
        sorted(set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)", ptx))),
        "tma stores",
        ptx.count("cp.async.bulk.tensor.2d.global.shared"),
    )
