# Session 40, call 1 on nvidia-h100-x2: the 2-GPU points (issues 22.4, 23.4), CUTLASS built for call 2 meanwhile.
set -u
t0=$(date +%s)
. scripts/device_env.sh || exit 1
export NVSHMEM_DISABLE_NVLS=1 TRITON_INTERPRET=0 HARNESS_CACHE_DIR=/tmp/hcache TRITON_CACHE_DIR=/tmp/tcache
export $(cat .cache/gitid)
R=results/_scratch/h100x2; L=$R/_logs; mkdir -p $L
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=index,name,uuid,driver_version,power.limit,clocks.max.sm --format=csv; } > $L/gpus.txt 2>&1
( python3 -m harness_kernels.cutlass.prebuild --jobs 20 --gemm bf16:nt --fmha bf16:128 > $L/prebuild.txt 2>&1
  tar cJf /tmp/cutlass.tar.xz -C /tmp/cutlass-cache . ; echo "prebuild done $(( $(date +%s) - t0 )) s" >> $L/prebuild.txt ) &
h() { local b=$1; shift; local id=$1; shift
  timeout -s INT $b python3 -m harness.cli run "$@" results_dir=$R run_id=$id progress=false > $L/$id.txt 2>&1
  echo "$id rc=$? t=$(( $(date +%s) - t0 )) s: $(tail -1 $L/$id.txt)"; }
h 80 collectives_graph sweep=collectives_graph 'providers=[nccl]'
h 70 collectives-all_reduce sweep=collectives 'providers=[nccl]' 'sweep.groups.0.product.collective=[all_reduce]'
h 190 decoder_layer_tp2 sweep=decoder_layer_tp2 'sweep.groups.0.product.batch=[1,64,512]'
h 85 gemm_llama-sharded-x2 sweep=gemm_llama 'sweep.groups.0.providers=[cublas]' devices=all
h 85 gemm_llama-sharded-x2-swapped sweep=gemm_llama 'sweep.groups.0.providers=[cublas]' 'devices=[1,0]'
wait
cp /tmp/cutlass.tar.xz $OUT/ 2>/dev/null
tar czf $OUT/results.tgz $R
python3 - <<'PY'
from harness.store import read_rows
import pandas as pd
R = "results/_scratch/h100x2"
for run in ("collectives_graph", "collectives-all_reduce"):
    try:
        df = read_rows(f"{R}/{run}")
        print(run, df[["message_bytes", "status", "latency_ms_median", "calls_per_sample"]].sort_values("message_bytes").to_string(index=False))
    except Exception as e:
        print(run, e)
try:
    df = read_rows(f"{R}/decoder_layer_tp2")
    print(df[["provider", "batch", "world_size", "status", "latency_ms_median", "rel_err"]].to_string(index=False))
except Exception as e:
    print("decoder_layer_tp2", e)
for run in ("gemm_llama-sharded-x2", "gemm_llama-sharded-x2-swapped"):
    try:
        df = read_rows(f"{R}/{run}")
        print(run, df.groupby(["device_index", "status"]).size().to_dict())
    except Exception as e:
        print(run, e)
PY
