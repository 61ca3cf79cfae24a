# Session 84, call 3 (nvidia-h200): (1) Nsight Compute at Llama-3.1-405B's fused QKV (256x2304x16384)
# over cuBLAS, own CUTLASS's 2x1-cluster split-K (peers adding in turn, and at once) and the Gluon
# split twin at cuBLAS's decomposition: is own CUTLASS's main loop, which multicasts the weight
# tile as nvjet does, at nvjet's 29 us, or is the time in its in-kernel reduction? (2) RMSNorm and
# add-RMSNorm at N 4096-16384 with the new width rule (the weight loaded after the row's sum from
# 16384), beside the rung that always loads it late and torch.compile: the rule's check on a
# second card. Carry `.whl` and `.cache`.
set -u
t0=$(date +%s)
C2=cl:sm90-streamk-128x144-c2x1
bash scripts/gemm_ncu_call.sh "cl256 256 2304 16384 $C2:split-kx4/sw1 $C2:split-kx4/sw1/nondet gl:128x144s6k4"
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - t0) )); }
G='{product: {m: [1, 16, 64, 256, 512, 2048, 8192], n: [4096, 8192, 16384]}, fixed: {dtype: bf16}, providers: [own-triton, own-triton-weight-late, torch-compile]'
GPU=h200 bash scripts/gpu_measure.sh $(left) "rmsnorm-weight-s84 sweep=layer_ops 'sweep.groups=[$G, op: rmsnorm}, $G, op: add_rmsnorm}]'"
