# Session 84, call 4 (nvidia-h200): call 3's ncu profile again (its own CUTLASS launch passed
# RunOptions positionally, and prepare_gemm takes them by keyword). Carry `.whl` and `.cache`.
C2=cl:sm90-streamk-128x144-c2x1
bash scripts/gemm_ncu_call.sh "cl256 256 2304 16384 $C2:split-kx4/sw1 $C2:split-kx4/sw1/nondet gl:128x144s6k4"
