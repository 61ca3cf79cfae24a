# Session 78's owed call (nvidia-h200; not run: no device time was left to start a machine).
# (a) The Qwen2.5-7B decode preset's last 7 points (silu_mul at batch 256 and 512, eager at 128),
#     resumed from the committed run (a compacted run resumes: store.finished_keys reads its
#     rows.parquet). Only on a tree whose kernels/ is 2bff592's: a resume on changed kernel
#     sources is refused (exit 2).
# (b) The one-wave 144- and 80-wide Gluon tiles (N parts 128+16, 64+16; not offered by the
#     tuner) pinned beside cuBLAS at Qwen's fused QKV weight, at the power cap, bf16 then fp8.
# Carry `.whl` and `.cache` (bash scripts/device_carry.sh first). About 150 s + 250 s.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
mkdir -p results/_scratch/h200 && cp -r results/h200/qwen2_5_7b_decode-s78 results/_scratch/h200/
GPU=h200 bash scripts/gpu_measure.sh 150 "qwen2_5_7b_decode-s78 sweep=qwen2_5_7b_decode"
. scripts/device_env.sh > /dev/null || exit 1
S="512x4608x3584 256x4608x3584"
timeout 200 python3 scripts/gluon_tile_probe.py $S --top 3 --extra-parts 128+16,64+16 --capped \
  2>&1 | tee $OUT/probe-waveparts-capped.txt
timeout 100 python3 scripts/gluon_tile_probe.py 512x4608x3584 --fp8 --top 3 --extra-parts 128+16,64+16 \
  --capped 2>&1 | tee $OUT/probe-waveparts-fp8-capped.txt
