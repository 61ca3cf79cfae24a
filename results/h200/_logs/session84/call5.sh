# Session 84, call 5 (nvidia-h200): RMSNorm's two-pass persistent kernel (a 4096-wide chunk of the
# row at a time, the row read twice, the second time from L2; four programs of 8 warps per SM),
# which prepare_rmsnorm takes for rows of 16384 past two waves (LOOPED_MIN_N, LOOPED_MIN_WAVES),
# where call 3 had torch.compile's looped reduction at 0.89-0.96x own's one-pass time. Both
# kernels pinned as rungs beside the headline and torch.compile, RMSNorm and add-RMSNorm at N 8192
# and 16384, m 64-32768. Carry `.whl` and `.cache`.
set -u
G='{product: {m: [64, 256, 512, 1024, 2048, 8192, 32768], n: [8192, 16384]}, fixed: {dtype: bf16}, providers: [own-triton, own-triton-looped, own-triton-one-pass, torch-compile]'
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-400} "rmsnorm-looped-s84 sweep=layer_ops 'sweep.groups=[$G, op: rmsnorm}, $G, op: add_rmsnorm}]'"
