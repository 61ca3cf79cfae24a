# Session 112's call for the H100's order item 8 (BUDGET=s SESSION=<n> bash
# results/h100/_logs/session112/call-seed.sh): is seeded tuning (kernels/tune_seed.py) worth
# what it saves, on a GPU? Own CUTLASS at M 64-512 (32 points: fp8 on an H100, bf16 on an
# H200) twice, one card,
# one call: tuned seeded (HARNESS_TUNE_SEED=3) from the other GPU's full-tune entries, then in
# full, each in a cache of its own that holds only those entries (so neither reads the
# other's decisions nor this GPU's committed ones). Runs seed3-* and seedfull-* (-s<n> on an
# H200, seeded from the H100's entries; -s<n>h on an H100, from the H200's), then
# scripts/seed_ab.py: both tune passes' seconds, both picks and both sweep medians per point.
set -u
B=${BUDGET:-540}
. scripts/device_env.sh > /dev/null || exit 1
# The points each GPU's seed covers with current entries: the H200's fp8 grid is whole, the H100's
# fp8 entries stop at M 32 (tune_cache/README.md), so an H200 checks the bf16 grid instead
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*)
    gpu=h200; sfx=s${SESSION:-112}; seeds=tune_cache/tune-h100.tgz
    spec="sweep=gemm_llama 'sweep.groups.0.providers=[own-cutlass]' 'sweep.groups.0.product.m=[64,128,256,512]'" ;;
  *)
    gpu=h100; sfx=s${SESSION:-112}h; seeds=tune_cache/tune-h200.tgz
    spec="sweep=gemm_llama_lowp 'sweep.groups.1.providers=[hipblaslt]' 'sweep.groups.0.providers=[own-cutlass]' 'sweep.groups.0.product.m=[64,128,256,512]'" ;;
esac
L=results/_scratch/$gpu/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee -a $L/gpu-$sfx.txt
half=$(( B / 2 ))
for mode in seed3 seedfull; do
  d=/tmp/$mode-cache; rm -rf $d; mkdir -p $d
  tar xzf $seeds -C $d tune/cutlass-gemm || exit 1
  seed=3; [ $mode = seedfull ] && seed=
  HARNESS_TUNE_CACHE=$d/tune HARNESS_TUNE_SEED=$seed GPU=$gpu bash scripts/gpu_measure.sh $half \
    "$mode-$sfx $spec"
done
python3 scripts/seed_ab.py results/_scratch/$gpu/seed3-$sfx results/_scratch/$gpu/seedfull-$sfx | tee $L/seed-ab-$sfx.txt | tail -40
