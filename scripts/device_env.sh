# Source on a lent GPU machine whose image lacks hydra/omegaconf (see README "Running on a lent GPU").
# Installs the carried wheels (.whl/, plus those scripts/wheel_parts.py joined from parts carried
# over earlier calls) to /tmp/site, maps kernels/ to the import name harness_kernels and
# puts on PYTHONPATH what the wheels' .pth files add (nvidia-cutlass-dsl's dsl_packages: a
# --target install is not a site directory, so Python would not read them).
# gather's exit 3 (parts still to carry) installs what is whole so far; 1 (a bad sum) stops.
# A carried .cache/cutlass.tar.xz (own CUTLASS libraries: `tar cJf .cache/cutlass.tar.xz -C
# <cache> .`; 33 libraries of 36 MB pack into 1.5 MB, as each links the CUDA runtime statically,
# and uncompressed they no longer fit one call beside the tree) is
# unpacked once to /tmp/cutlass-cache, which HARNESS_CUTLASS_CACHE then names.
if [ -d .whl-parts ]; then python3 scripts/wheel_parts.py gather; [ $? -ne 1 ] || return 1; fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .whl/*.whl $(ls /tmp/wheel-parts/whole/*.whl 2>/dev/null) || return 1
ln -sfn "$PWD/kernels" /tmp/site/harness_kernels
pth=$(PYTHONPATH=/tmp/site python3 -c "import site, sys; before = set(sys.path); site.addsitedir('/tmp/site'); print(':'.join(p for p in sys.path if p not in before))")
export PYTHONPATH="/tmp/site${pth:+:$pth}:$PWD" PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
if [ -f .cache/cutlass.tar.xz ]; then
  if [ ! -f /tmp/cutlass-cache/.from-"$(cksum < .cache/cutlass.tar.xz | cut -d' ' -f1)" ]; then
    rm -rf /tmp/cutlass-cache && mkdir -p /tmp/cutlass-cache && tar xJf .cache/cutlass.tar.xz -C /tmp/cutlass-cache || return 1
    touch /tmp/cutlass-cache/.from-"$(cksum < .cache/cutlass.tar.xz | cut -d' ' -f1)"
  fi
  export HARNESS_CUTLASS_CACHE=/tmp/cutlass-cache
fi
# A carried .cache/cutlass-inc.tar.xz (the CUTLASS include tree: `tar cJf .cache/cutlass-inc.tar.xz
# -C <site-packages>/cutlass_library/source include`, 1 MB) lets the machine's nvcc build the own
# CUTLASS libraries itself (16 cores: minutes, where this CPU box needs an hour for all of them):
# the runner's prebuild compiles what a sweep needs before its first point.
if [ -f .cache/cutlass-inc.tar.xz ]; then
  [ -d /tmp/cutlass-inc/include ] || { mkdir -p /tmp/cutlass-inc && tar xJf .cache/cutlass-inc.tar.xz -C /tmp/cutlass-inc; } || return 1
  export HARNESS_CUTLASS_INCLUDE=/tmp/cutlass-inc/include HARNESS_CUTLASS_CACHE=/tmp/cutlass-cache
  mkdir -p /tmp/cutlass-cache
fi
# Carried tune caches (.cache/tune-h100.tgz, .cache/tune-h200.tgz: `tar czf ... -C
# $HARNESS_CACHE_DIR tune`) are keyed inside by GPU name, so only this machine's GPU's helps: it
# is picked by nvidia-smi's name and unpacked, unless a cache is already there (a warm machine),
# into $HARNESS_CACHE_DIR (default /tmp/hcache, which a warm machine keeps). Session 48 carried an
# H200's cache to an H100 by hand and spent a whole call tuning again.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
  *H100*) tune_tgz=.cache/tune-h100.tgz ;;
  *H200*) tune_tgz=.cache/tune-h200.tgz ;;
  *) tune_tgz= ;;
esac
export HARNESS_CACHE_DIR=${HARNESS_CACHE_DIR:-/tmp/hcache}
if [ -n "$tune_tgz" ] && [ -f "$tune_tgz" ] && [ ! -d "$HARNESS_CACHE_DIR/tune" ]; then
  mkdir -p "$HARNESS_CACHE_DIR" && tar xzf "$tune_tgz" -C "$HARNESS_CACHE_DIR" || return 1
  echo "tune cache restored from $tune_tgz"
fi
# Runs an earlier call left unfinished, packed by take_back.py (.cache/resume/<folder>+<run>.tar.xz,
# paths from the root): unpacked so that gpu_measure.sh resumes them. A file the tree already has
# (a warm machine's copy, a carried folder) is kept.
for pack in .cache/resume/*.tar.xz; do
  [ -f "$pack" ] || continue
  tar xJf "$pack" --skip-old-files || return 1
  echo "resumable run unpacked from $pack"
done
# GPU_TEST_XDIST: the pytest workers of a call script's GPU correctness tests
. scripts/gpu_test_xdist.sh
harness() { python3 -m harness.cli "$@"; }
