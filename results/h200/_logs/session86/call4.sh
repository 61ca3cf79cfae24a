# Session 86, call 4 (nvidia-h200): why torch.compile's SiLU-and-multiply ran 1.05x faster than
# own Triton's at Qwen2.5-7B's prefill (qwen2_5_7b_prefill-s86, n 18944): the order the grid walks
# the output. own-triton (a row's column blocks on grid axis 1: consecutive programs read rows
# ~2n elements apart), own-triton-cols-first (a row's blocks first), own-triton-flat (one index
# over m x n, as Inductor's pointwise kernels), torch-compile; n 18944 (a half-empty last block a
# row) and 14336 (none). The device time left (~270 s) bounds it: stop_after_s cuts it cleanly.
# Carry `.whl` and `.cache`.
set -u
. scripts/device_env.sh >/dev/null || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $OUT/gpu.txt
G='{op: silu_mul, providers: [own-triton, own-triton-cols-first, own-triton-flat, torch-compile], product: {m: [32768, 8192], n: [18944, 14336]}, fixed: {dtype: bf16}}'
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-100} "silu_mul-order-s86 sweep=layer_ops 'sweep.groups=[$G]'"
python3 scripts/preset_ops_table.py results/_scratch/h200/silu_mul-order-s86 2>&1 | tail -30
