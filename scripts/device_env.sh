# Source on a lent GPU machine whose image lacks hydra/omegaconf (see README "Running on a lent GPU").
# Installs the carried wheels (.whl/, plus those scripts/wheel_parts.py joined from parts carried
# over earlier calls) to /tmp/site, maps kernels/ to the import name harness_kernels and
# puts on PYTHONPATH what the wheels' .pth files add (nvidia-cutlass-dsl's dsl_packages: a
# --target install is not a site directory, so Python would not read them).
# gather's exit 3 (parts still to carry) installs what is whole so far; 1 (a bad sum) stops.
if [ -d .whl-parts ]; then python3 scripts/wheel_parts.py gather; [ $? -ne 1 ] || return 1; fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .whl/*.whl $(ls /tmp/wheel-parts/whole/*.whl 2>/dev/null) || return 1
ln -sfn "$PWD/kernels" /tmp/site/harness_kernels
pth=$(PYTHONPATH=/tmp/site python3 -c "import site, sys; before = set(sys.path); site.addsitedir('/tmp/site'); print(':'.join(p for p in sys.path if p not in before))")
export PYTHONPATH="/tmp/site${pth:+:$pth}:$PWD" PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
harness() { python3 -m harness.cli "$@"; }
