# Session 55 (CALL=callN ID=<run>): the N-split 128x320 tile with its 16-byte-store epilogue
# (sm90_quad_store_epilogue.h, config sm90-coopn-128x320-c2x1-st16) beside the 2-byte-store one
# it replaces, ping-pong 128x128 and cuBLAS, in one run (issue 20; session 54's ncu found the
# 2-byte stores filling the store queue). First the GPU correctness tests of both N-split configs
# (residue shapes, raster orders), then the run at the shapes the tile was written for (M 1024, or
# $MS; N 10240, 57344, 8192; K 8192), then ncu of the new tile at 1024x10240x8192 with session
# 54's probe and settings, so its tensor-pipe share and stall reasons compare with
# _logs/session54/coopn-ncu.txt. sm90_gemm.cu changed, so the libraries build here from the
# carried include tree (.cache/cutlass-inc.tar.xz): three libraries.
set -u
t0=$(date +%s); C=${CALL:-call1}; ID=${ID:-gemm_coopn_st16}
. scripts/device_env.sh || exit 1
export TRITON_INTERPRET=0
export $(cat .cache/gitid)
R=results/_scratch/gpu; L=$R/_logs; mkdir -p $L
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,driver_version --format=csv,noheader | tee $L/$C-gpu.txt
# The one point of issue 21.3's H200 re-run left unmeasured (fmha_decode_serving-r2: call 1's
# tune pass was cut inside it, and the next run wrote it as an error row). Only own Triton's row
# is pending, so FA4 and FlashInfer need not be carried; its run folder is.
if [ -d results/_scratch/gpu/fmha_decode_serving-r2 ]; then
  timeout -s INT 90 python3 -m harness.cli run sweep=fmha_decode_serving results_dir=$R \
    run_id=fmha_decode_serving-r2 rerun_failed=true progress=false > $L/fmha_decode_serving-r2-$C.txt 2>&1
  echo "serving rerun_failed rc=$? t=$(( $(date +%s) - t0 ))"; tail -2 $L/fmha_decode_serving-r2-$C.txt | cut -c1-160
fi
python3 -m harness_kernels.cutlass.prebuild --gemm bf16:nt --config sm90-coopn-128x320-c2x1 \
  --config sm90-coopn-128x320-c2x1-st16 --config sm90-pingpong-128x128 > $L/$C-prebuild.txt 2>&1
echo "prebuild rc=$? t=$(( $(date +%s) - t0 ))"; tail -4 $L/$C-prebuild.txt | cut -c1-160
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/cutlass/test_gpu_cutlass.py \
  -k "test_gemm_config_matches_fp32 and coopn" > $L/$C-coopn_gpu_tests.txt 2>&1
echo "gpu tests rc=$? t=$(( $(date +%s) - t0 )): $(tail -1 $L/$C-coopn_gpu_tests.txt)"
P=own-cutlass-sm90
left=$(( ${BUDGET:-270} - ($(date +%s) - t0) ))
timeout -s INT $left python3 -m harness.cli run sweep=gemm_llama \
  "sweep.groups.0.providers=[cublas,$P-coopn-128x320-c2x1,$P-coopn-128x320-c2x1-st16,$P-pingpong-128x128]" \
  "sweep.groups.0.product.m=${MS:-[1024]}" 'sweep.groups.0.zip.n=[10240,57344,8192]' \
  'sweep.groups.0.zip.k=[8192,8192,8192]' results_dir=$R run_id=$ID progress=false > $L/$ID-$C.txt 2>&1
echo "$ID rc=$? t=$(( $(date +%s) - t0 ))"; tail -4 $L/$ID-$C.txt | cut -c1-160
S=results/h200/_logs/session54
c=sm90-coopn-128x320-c2x1-st16
[ $(( $(date +%s) - t0 )) -lt ${NCU_BY:-300} ] && timeout 60 ncu --clock-control none --nvtx --nvtx-include "probe/" --set full -f -o $OUT/$c \
  python3 $S/coopn_probe.py $c > $L/$C-ncu-$c.txt 2>&1
echo "ncu rc=$? t=$(( $(date +%s) - t0 ))"; grep "max abs" $L/$C-ncu-$c.txt
ncu --import $OUT/$c.ncu-rep --page details --csv > $L/$c-details.csv 2>/dev/null
ncu --import $OUT/$c.ncu-rep --page raw --csv > $L/$c-raw.csv 2>/dev/null
grep -E '"(Duration|SM Frequency|Compute \(SM\) Throughput|Memory Throughput|Registers Per Thread)"' \
  $L/$c-details.csv | awk -F'","' '{print $(NF-2)" = "$NF}' | tr -d '"' | sort -u | head -8
tar czf $OUT/results.tgz $R
echo "t=$(( $(date +%s) - t0 ))"
exit 0
