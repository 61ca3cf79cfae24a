# Session 112's call for the H100's order item 8 (BUDGET=s SESSION=<n> bash
# results/h100/_logs/session112/call-seed.sh): is seeded tuning (kernels/tune_seed.py) worth
# what it saves, on a GPU? Own CUTLASS at M 64-512 (32 points: fp8 on an H100, bf16 on an
# H200) twice, one card,
# one call: tuned seeded (HARNESS_TUNE_SEED=3) from the other GPU's full-tune entries, then in
# full, each in a cache of its own that holds only those entries (so neither reads the
# other's decisions nor this GPU's committed ones). Runs seed3-* and seedfull-* (-s<n> on an
# H200, seeded from the H100's entries; -s<n>h on an H100, from the H200's), then
# scripts/seed_ab.py: both tune passes' seconds, both picks and both sweep medians per point.
# Budget: BUDGET (default 480) for both runs together, the second given what the first left;
# gpu_measure.sh reuses this environment (DEVICE_ENV=0). seed_ab.py exits 1 where the pair is no
# test of seeding (a tune pass cut by the budget, two cards, nothing seeded). Carry the CUTLASS
# libraries (CUTLASS=1 bash scripts/device_carry.sh): on an H200, M 64-128's bf16 ones are not
# among them and the first run builds them (outside its tune pass's seconds).
set -u
t0=$(date +%s); B=${BUDGET:-480}
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
for mode in seed3 seedfull; do
  d=/tmp/$mode-cache; rm -rf $d; mkdir -p $d
  tar xzf $seeds -C $d tune/cutlass-gemm || exit 1
  seed=3; [ $mode = seedfull ] && seed=
  left=$(( B - ($(date +%s) - t0) )); [ $mode = seed3 ] && left=$(( left / 2 ))
  HARNESS_TUNE_CACHE=$d/tune HARNESS_TUNE_SEED=$seed DEVICE_ENV=0 GPU=$gpu \
    bash scripts/gpu_measure.sh $left "$mode-$sfx $spec"
  # each run's own cache (the seeded records; the full run's fresh entries of this GPU)
  tar czf $OUT/$mode-tune-$sfx.tgz -C $d tune
done
python3 scripts/seed_ab.py results/_scratch/$gpu/seed3-$sfx results/_scratch/$gpu/seedfull-$sfx \
  > $OUT/seed-ab-$sfx.txt 2>&1
echo "seed_ab rc=$?"
tail -40 $OUT/seed-ab-$sfx.txt
