# Session 84, call 7 (nvidia-h200): call 6's ncu put the two-pass kernel's loss in its latency, not
# its bytes (DRAM reads 277 MB against the one-pass kernel's 268: the second read hits L2), at 47%
# achieved occupancy (4 programs of 8 warps per SM), where torch.compile's looped reduction ran
# 1024-thread programs at 89%. The two-pass kernel again with 16 warps and up to 16 programs per
# SM in the grid (34 registers: three resident), at N 16384, m 512-32768. Carry `.whl`, `.cache`.
set -u
G='{product: {m: [512, 1024, 2048, 8192, 32768], n: [16384]}, fixed: {dtype: bf16}, providers: [own-triton, own-triton-looped, own-triton-one-pass, torch-compile]'
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-170} "rmsnorm-looped16-s84 sweep=layer_ops 'sweep.groups=[$G, op: rmsnorm}, $G, op: add_rmsnorm}]'"
