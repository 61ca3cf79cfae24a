# The FA3-class CuTe FMHA on a lent Hopper GPU in one call: build the FMHA libraries from the
# carried include tree, run every CuTe FMHA GPU test (the fp32 reference; the atomic tile
# counter's repeated launches), then the ladder's FA3 group (D 128, B 4, 4k: each rung switches
# one feature off fa3-t128, fa3 on 128x128 tiles), fmha_prefill with cuDNN, fa3 and fa3-t128
# (D 64, 128, 256; S 1k-16k; causal and not), and fa3-tiles (FA3's non-causal tile shapes at
# every point) beside cuDNN and fa3 on the same grid; each a resumable run (stop_after_s at the
# budget).
#   GPU=h100 BUDGET=540 bash scripts/fa3_prefill_call.sh        (carry .whl, .cache)
# Again with results/_scratch/<gpu> carried resumes what the budget cut. STEPS picks the runs
# (default 'ladder grid tiles'; 'emu' runs fa3-exp-emu beside fa3 at D 64); TAG names them
# (fa3-ladder-<tag>, fmha_prefill-fa3-<tag>, fa3-tiles-<tag>, fa3-exp-emu-<tag>; TAG defaults
# to the date); GRID_PROVIDERS names the grid's providers (default cuDNN, fa3 and fa3-t128);
# LADDER_D='[64,128,256]' runs the ladder at every head_dim (60 points, not 20).
set -u
: "${GPU:?GPU=h100|h200}"
t0=$(date +%s)
export TRITON_INTERPRET=0 TRITON_CACHE_DIR=/tmp/tcache
[ -f .cache/gitid ] && export $(cat .cache/gitid)
. scripts/device_env.sh || exit 1
TAG=${TAG:-$(date +%Y%m%d)}
R=results/_scratch/$GPU; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee -a $L/fa3-$TAG-gpu.txt
timeout 240 python3 -m harness_kernels.cutlass.prebuild --fmha bf16:128 --fmha bf16:64 --fmha bf16:256 > $L/fmha-prebuild-$TAG.txt 2>&1
echo "prebuild rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/fmha-prebuild-$TAG.txt)"
timeout 150 python3 -m pytest -q -m gpu tests/cutlass -k fmha -p no:cacheprovider > $L/cutlass_fmha_gpu_tests-$TAG.txt 2>&1
rc=$?; echo "tests rc=$rc t=$(( $(date +%s) - t0 )): $(tail -1 $L/cutlass_fmha_gpu_tests-$TAG.txt)"
[ $rc -eq 0 ] || { grep -E "^(FAILED|ERROR)" $L/cutlass_fmha_gpu_tests-$TAG.txt | head; exit 1; }
RUNGS="own-cutlass-fa3,own-cutlass-fa3-t128,own-cutlass-fa3-no-pingpong,own-cutlass-fa3-no-overlap,own-cutlass-fa3-no-pingpong-no-overlap,own-cutlass-fa3-no-st16,own-cutlass-fa3-static,own-cutlass-fa3-not-persistent,own-cutlass-fa3-exp-emu,own-cutlass-fa3-tiles,own-cutlass-sm90,sdpa-cudnn"
run() {  # run_id, overrides...: one resumable harness run within what is left of the budget
  local id=$1; shift
  local left=$(( ${BUDGET:-540} - ($(date +%s) - t0) ))
  [ $left -gt 30 ] || { echo "$id: out of time"; return; }
  timeout -k 15 -s INT $((left + 60)) python3 -m harness.cli run "$@" results_dir=$R run_id=$id \
    progress=false stop_after_s=$left > $L/$id.txt 2>&1
  echo "$id rc=$? (75: stopped at the budget) t=$(( $(date +%s) - t0 )): $(tail -1 $L/$id.txt)"
}
STEPS=" ${STEPS:-ladder grid tiles} "
step() { [[ $STEPS == *" $1 "* ]]; }
step ladder && run fa3-ladder-$TAG sweep=fmha_prefill "sweep.groups.0.providers=[$RUNGS]" \
  "sweep.groups.0.product.head_dim=${LADDER_D:-[128]}" 'sweep.groups.0.zip.batch=[4]' \
  'sweep.groups.0.zip.q_len=[4096]' 'sweep.groups.0.zip.kv_len=[4096]'
step grid && run fmha_prefill-fa3-$TAG sweep=fmha_prefill \
  "sweep.groups.0.providers=[${GRID_PROVIDERS:-sdpa-cudnn,own-cutlass-fa3,own-cutlass-fa3-t128}]"
step tiles && run fa3-tiles-$TAG sweep=fmha_prefill \
  'sweep.groups.0.providers=[sdpa-cudnn,own-cutlass-fa3,own-cutlass-fa3-tiles]'
# fa3-exp-emu (a quarter of the exp2 on the FMA pipe), where the SFU should bind: head_dim 64
step emu && run fa3-exp-emu-$TAG sweep=fmha_prefill 'sweep.groups.0.providers=[sdpa-cudnn,own-cutlass-fa3,own-cutlass-fa3-exp-emu]' \
  'sweep.groups.0.product.head_dim=[64]'
tar czf $OUT/results.tgz $R
bash scripts/pack_built_cutlass.sh  # only where this machine built a library
for id in fmha_prefill-fa3-$TAG fa3-tiles-$TAG; do
  [ -d $R/$id ] && python3 scripts/attention_ratio_table.py $R/$id 2>&1 | tail -7
done
exit 0
