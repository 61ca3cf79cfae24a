# What a lent GPU call carries beside the tree, built here from nothing (a fresh checkout has
# none of it: all of it is git-ignored). The GPU image has Python 3.12, torch and Triton but no
# hydra, and no network, so the wheels are fetched here for cp312 manylinux.
#   bash scripts/device_carry.sh            .whl/ and .cache/gitid (every call needs them)
#   PARTS=1 bash scripts/device_carry.sh    also .whl-parts/1, 2: FA4 and FlashInfer (157 MiB of
#                                           wheels, xz-packed into two parts of <= 44 MiB, one
#                                           per back-to-back call; ~3 min on 2 cores)
#   INC=1 bash scripts/device_carry.sh      also .cache/cutlass-inc.tar.xz (CUTLASS's headers, 1 MB,
#                                           from the nvidia-cutlass wheel installed here), so the
#                                           machine's nvcc builds the own CUTLASS libraries
#   CUTLASS=1 bash scripts/device_carry.sh  also builds here the own CUTLASS libraries the owed
#                                           runs load (scripts/prebuild_owed.py: about 80 s of a
#                                           core each), into .cache/cutlass.tar.xz beside those it
#                                           holds, so no call builds them on its clock
# Every run: a run an owed list names that was committed unfinished is packed to resume
# (take_back.py --resume-owed), as a call's own would be. Both it and CUTLASS=1 need the
# project installed in $PYTHON (pyarrow, hydra): PYTHON=<the venv's python>.
# Run it again after every commit that a call should name (.cache/gitid: rows carry the sha).
# What device_env.sh then does with each on the machine: its header.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
P="--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64"
mkdir -p .whl .cache
# hydra-core and omegaconf (within pyproject's ranges, as pip resolves them for a user: hydra-core
# 1.3 takes omegaconf < 2.4, and --no-deps resolves nothing), PyYAML (omegaconf's need),
# pytest-xdist and execnet (`pytest -m gpu` runs with pyproject's `-n auto`), cuda-bench (nvbench,
# for `harness crosscheck`; it needs the image's cuda.bindings)
$PY -m pip download -q --no-deps $P -d .whl 'hydra-core>=1.3' 'omegaconf>=2.3,<2.4' 'PyYAML>=6' \
  'pytest-xdist>=3.5' execnet cuda-bench==0.3.0
# antlr4 4.9.3 (hydra's parser runtime, pinned by omegaconf) is an sdist only: build its wheel
[ -n "$(ls .whl/antlr4_python3_runtime-4.9.3-*.whl 2>/dev/null)" ] ||
  $PY -m pip wheel -q --no-deps -w .whl antlr4-python3-runtime==4.9.3
# The committed tune caches (tune_cache/, copied there by take_back.py) where .cache/ has none: a
# fresh checkout's .cache/ is empty, and without them every tuned family is tuned again on the GPU
for kept in tune_cache/tune-*.tgz; do
  [ -f "$kept" ] && [ ! -f ".cache/$(basename "$kept")" ] && cp "$kept" .cache/ && echo "tune cache from $kept"
done
# A fresh checkout's .cache/ has no resume pack either: without one, the owed call would start
# a run committed unfinished again (session 111's fp8 grid: 153 of 528 points)
$PY scripts/take_back.py --resume-owed --root . ||
  echo "warning: runs committed unfinished not packed to resume: PYTHON=<a python with pyarrow>"
echo "HARNESS_GIT_SHA=$(git rev-parse HEAD) HARNESS_GIT_DIRTY=$([ -z "$(git status --porcelain --untracked-files=no)" ] && echo 0 || echo 1)" > .cache/gitid
if [ "${PARTS:-0}" = 1 ]; then
  d=$(mktemp -d)
  # pyproject's [flash-attn-4] and [flashinfer] pins; the rest of their needs are in the image
  # (results/h200/README.md, "FlashAttention-4 and FlashInfer")
  $PY -m pip download -q --no-deps $P -d "$d" flash-attn-4==4.0.0b36 nvidia-cutlass-dsl==4.8.1 \
    nvidia-cutlass-dsl-libs-base==4.8.1 nvidia-cutlass-dsl-libs-core==4.8.1 \
    nvidia-cutlass-dsl-libs-cu13==4.8.1 quack-kernels==0.6.5 apache-tvm-ffi==0.1.15.post2 \
    torch-c-dlpack-ext==0.1.5 flashinfer-python==0.7.2.post1
  rm -rf .whl-parts
  $PY scripts/wheel_parts.py split --mib 44 "$d"/*.whl
  rm -rf "$d"
  # its sizes count results/ and reports/ in the tree: a part's call sets them aside here first
  echo "a part's call carries no committed rows or report: python3 scripts/device_slim.py aside, then back"
fi
if [ "${INC:-0}" = 1 ]; then
  src=$($PY -c "import cutlass_library, pathlib; print(pathlib.Path(cutlass_library.__file__).parent / 'source')")
  tar cJf .cache/cutlass-inc.tar.xz -C "$src" include
fi
if [ "${CUTLASS:-0}" = 1 ]; then
  # built outside .cache/ (carried whole: 42 libraries are 36 MB unpacked), from what the
  # archive holds, so only the missing ones compile; the machines' unpack markers left out
  $PY -c "import harness, harness_kernels" || {
    echo "harness: error: CUTLASS=1: $PY lacks the project; allowed: PYTHON=<the venv's python>" >&2
    exit 2
  }
  built=$(mktemp -d)
  trap 'rm -rf "$built"' EXIT
  [ -f .cache/cutlass.tar.xz ] && tar xJf .cache/cutlass.tar.xz -C "$built"
  HARNESS_CUTLASS_CACHE="$built" $PY scripts/prebuild_owed.py ||
    echo "warning: some libraries failed to build here (above): a call builds them, or says why"
  tar cJf .cache/cutlass.tar.xz.tmp --exclude='./.from-*' --exclude='./.build-*' -C "$built" .
  mv .cache/cutlass.tar.xz.tmp .cache/cutlass.tar.xz
fi
ls -l .whl; du -sh .whl .whl-parts/* .cache/cutlass-inc.tar.xz .cache/cutlass.tar.xz 2>/dev/null || true
# the tree and this carry as the device tool counts them (a tar's 512-byte blocks), against 64 MiB
$PY scripts/carry_size.py .whl .cache ||
  echo "warning: a call carrying .whl and .cache would be refused: python3 scripts/device_slim.py aside (then back)"
