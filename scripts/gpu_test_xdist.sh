# Sourced by scripts/device_env.sh on a lent GPU machine: sets and exports GPU_TEST_XDIST.
# A kernel family's GPU correctness tests are compile-bound on a cold Triton cache (session 66:
# 21 decode tests in 284 s; session 108: 9 of 16 prefill tests in its 200 s), and `-n auto`
# gives `pytest -m gpu` one worker (tests/conftest.py), so they compiled one at a time on one of
# the machine's 16 cores. A call script's correctness tests take $GPU_TEST_XDIST instead: 8
# workers, each test to whichever is free, each compiling on its own core while the GPU runs the
# others' small launches. Tests that time something keep the one worker. A card in an exclusive
# compute mode takes one process's context only, so there they keep it too (empty).
GPU_TEST_XDIST=""
if [ "$(nvidia-smi --query-gpu=compute_mode --format=csv,noheader 2>/dev/null | head -1)" = Default ]; then
  GPU_TEST_XDIST="-n ${GPU_TEST_WORKERS:-8} --dist load"
fi
export GPU_TEST_XDIST
