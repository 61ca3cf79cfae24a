# Source on a lent GPU machine whose image lacks hydra/omegaconf (see README "Running on a lent GPU").
# Installs the carried wheels to /tmp/site and maps kernels/ to the import name harness_kernels.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || return 1
ln -sfn "$PWD/kernels" /tmp/site/harness_kernels
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
harness() { python3 -m harness.cli "$@"; }
