# Session 83, call 3 (nvidia-h200): the ladder whole, its CuTe FMHA group (own-cutlass-fa3 and its
# rungs) included for the first time since session 63: CUTLASS's headers carried
# (`INC=1 bash scripts/device_carry.sh`), so the machine's nvcc builds the FMHA libraries.
# Carry `.whl` and `.cache`.
set -u
nvidia-smi --query-gpu=uuid,power.limit,clocks.max.sm --format=csv,noheader
GPU=h200 bash scripts/gpu_measure.sh ${BUDGET:-480} "ladder-s83 sweep=ladder"
