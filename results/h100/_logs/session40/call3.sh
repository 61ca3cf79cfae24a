# Session 40, call 3 on nvidia-h200: issue 20's decode GEMMs (bf16, then fp8 at M 1/16/64), issue 21's CuTe FMHA ladder and prefill.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/h200; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=index,name,uuid,driver_version,power.limit,clocks.max.sm --format=csv > $L/gpu-session40.txt 2>&1
( python3 - > $L/prebuild-fp8.txt 2>&1 <<'PY'
# Only the fp8 decode candidates of M 1, 16, 64 (the sweep below), on the CPUs while the GPU times bf16.
from harness_kernels.cutlass import build
from harness_kernels.cutlass.gemm_tune import sm90_candidates
shapes = [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336), (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)]
specs = {c.spec("fp8_e4m3", True) for m in (1, 16, 64) for n, k in shapes for c, _ in sm90_candidates(m, n, k, "fp8_e4m3")}
res = build.build_many(specs, 12)
print(len(specs), "specs;", sum(isinstance(r, Exception) for r in res.values()), "failed")
PY
  echo "fp8 prebuild done t=$(( $(date +%s) - t0 ))" ) &
h() { local b=$1; shift; local id=$1; shift
  timeout -s INT $b python3 -m harness.cli run "$@" results_dir=$R run_id=$id progress=false > $L/$id.txt 2>&1
  echo "$id rc=$? t=$(( $(date +%s) - t0 )) s: $(tail -1 $L/$id.txt)"; }
h 200 gemm_llama-decode-dp sweep=gemm_llama 'sweep.groups.0.providers=[cublas,own-cutlass]' 'sweep.groups.0.product.m=[1,2,4,8,16,32,64]'
h 60 fa3-ladder-r5 sweep=ladder 'providers=[own-cutlass-fa3,own-cutlass-fa3-no-overlap,own-cutlass-fa3-no-pingpong-no-overlap,own-cutlass-sm90,sdpa-cudnn]'
wait
h 130 gemm_llama_lowp-decode-dp sweep=gemm_llama_lowp 'sweep.groups.0.providers=[cublaslt-fp8,cublaslt-fp8-fastaccum,own-cutlass]' 'sweep.groups.0.product.m=[1,16,64]' 'sweep.groups.1.providers=[hipblaslt]'
left=$(( 490 - ($(date +%s) - t0) ))
[ $left -gt 30 ] && h $left fmha_prefill-fa3-r5 sweep=fmha_prefill 'providers=[sdpa-cudnn,own-cutlass-fa3]'
tar czf $OUT/results.tgz $R
python3 scripts/gemm_ratio_table.py $R/gemm_llama-decode-dp $R/gemm_llama_lowp-decode-dp 2>&1 | grep -v "^[0-9]"
python3 - <<'PY'
from harness.store import read_rows
R = "results/_scratch/h200"
for run in ("fa3-ladder-r5", "fmha_prefill-fa3-r5"):
    try:
        df = read_rows(f"{R}/{run}")
        df = df[(df.op == "attention") & (df.q_len >= 4096)]
        print(run, df.groupby(["status"]).size().to_dict())
        print(df[["provider", "problem", "status", "tflops"]].sort_values(["problem", "provider"]).to_string(index=False)[:2500])
    except Exception as e:
        print(run, e)
PY
