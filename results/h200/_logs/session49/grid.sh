# Session 49 (CALL=callN ID=<run>): the whole gemm_llama grid (120 shapes) on an H200 with cuBLAS,
# own CUTLASS and own Triton in one run, by the H100's session-49 grid script (the tune pass on;
# device_env.sh restores the carried tune cache of the machine's GPU). An H100 that comes instead
# runs nothing: calls 4 and 9 of session 49 got H100s and stopped here. The same command resumes
# the run on a warm machine.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) exec bash results/h100/_logs/session49/grid.sh ;;
  *) nvidia-smi -L; echo "not an H200: nothing run"; exit 0 ;;
esac
