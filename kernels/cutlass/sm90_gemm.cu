// SM90 GEMM: TMA loads into a shared-memory ring, WGMMA from shared memory, warp-specialized
// (one producer warp group issues TMA, consumer warp groups issue WGMMA), persistent CTAs.
//
// One library = one configuration, chosen at compile time:
//   HK_DTYPE      0 bf16, 1 fp16, 2 fp8 e4m3 (bf16 output, fast accumulation), 3 tf32 (fp32 in
//                 and out, TF32 tensor cores)
//   HK_B_COL      1: B column-major (layout nt, y = x W^T); 0: B row-major (layout nn). wgmma
//                 reads 32-bit operands from shared memory K-major only, so
//                 tf32 nn is built swapped (HK_SWAP_AB=1): A' = B^T is then the MN-major operand,
//                 which CUTLASS's register-A mainloop reads into registers through a
//                 transposing shared-memory copy
//   HK_SWAP_AB    1: compute D^T = B^T A^T, so the small M of decode lands on WGMMA's N (which
//                 may be 8..256) and the large N on the 64-row granularity of the M side
//   HK_TILE_M/N/K CTA tile (of the swapped problem when HK_SWAP_AB)
//   HK_CLUSTER_M/N thread-block cluster; TMA multicasts A along N and B along M in the cluster
//   HK_SCHEDULE   0 cooperative (two consumer warp groups split one 128+ row tile),
//                 1 ping-pong (two consumer warp groups alternate whole tiles, so one group's
//                 epilogue overlaps the other's mainloop)
//   HK_STREAMK    1: stream-K / split-K tile scheduler (cooperative only), for shapes with
//                 fewer output tiles than SMs; 0: data-parallel persistent scheduler
//   HK_SPLIT_N    1: the cooperative tile's two consumer warp groups split it along N, each
//                 owning all TILE_M rows and half the columns (CUTLASS's builder splits along
//                 M only). This is what makes a 128x320 tile legal: each group issues 64x160
//                 wgmmas, where an M split would need a 64x320 one (N is at most 256). bf16 /
//                 fp16, not swapped.
//   HK_QUAD_STORES 1 (with HK_SPLIT_N): the N split's register epilogue stores 16 bytes per
//                 thread, four lanes' column pairs gathered by shuffles
//                 (sm90_quad_store_epilogue.h), where CUTLASS's DefaultEpilogue stores 2.
// WGMMA takes N in steps of 8, but CuTe's atom selector offers only N = 256, 192, 128, 96, 64,
// 32, ... unless this is defined (before any CuTe header, common.h's included): a 128x160 tile
// then issued five 64x32x16 wgmmas per K step instead of one 64x160x16 (the A tile re-read from
// shared memory five times), and on the H200 ran 47% slower per tile than its width predicts
// (gemm_llama_mid-cutlass, 256x10240x8192).
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include "common.h"

#include "cute/tensor.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"
#include "cutlass/kernel_hardware_info.h"
#include "sm90_quad_store_epilogue.h"

#ifndef HK_DTYPE
#define HK_DTYPE 0
#endif
#ifndef HK_B_COL
#define HK_B_COL 1
#endif
#ifndef HK_SWAP_AB
#define HK_SWAP_AB 0
#endif
#ifndef HK_TILE_M
#define HK_TILE_M 128
#endif
#ifndef HK_TILE_N
#define HK_TILE_N 256
#endif
#ifndef HK_TILE_K
#define HK_TILE_K 64
#endif
#ifndef HK_CLUSTER_M
#define HK_CLUSTER_M 2
#endif
#ifndef HK_CLUSTER_N
#define HK_CLUSTER_N 1
#endif
#ifndef HK_SCHEDULE
#define HK_SCHEDULE 0
#endif
#ifndef HK_STREAMK
#define HK_STREAMK 0
#endif
#ifndef HK_SPLIT_N
#define HK_SPLIT_N 0
#endif
#ifndef HK_QUAD_STORES
#define HK_QUAD_STORES 0
#endif
#if HK_QUAD_STORES && !HK_SPLIT_N
#error "HK_QUAD_STORES replaces the N split's register epilogue only"
#endif

#if HK_STREAMK && HK_SCHEDULE != 0
#error "the stream-K scheduler needs the cooperative schedule"
#endif
#if HK_DTYPE == 2 && !HK_B_COL
#error "fp8 WGMMA reads both operands K-major: B must be column-major (layout nt)"
#endif

namespace {
using namespace cute;

// ---- element types -------------------------------------------------------------------------
#if HK_DTYPE == 0
using ElementIn = cutlass::bfloat16_t;
using ElementOut = cutlass::bfloat16_t;
#define HK_DTYPE_NAME "bf16"
#elif HK_DTYPE == 1
using ElementIn = cutlass::half_t;
using ElementOut = cutlass::half_t;
#define HK_DTYPE_NAME "fp16"
#elif HK_DTYPE == 2
using ElementIn = cutlass::float_e4m3_t;
using ElementOut = cutlass::bfloat16_t;
#define HK_DTYPE_NAME "fp8_e4m3"
#else
// float operands: the collective builder maps them to tf32 wgmma (inputs rounded by the MMA).
using ElementIn = float;
using ElementOut = float;
#define HK_DTYPE_NAME "tf32"
#endif
using ElementAcc = float;

// ---- layouts of the problem the kernel sees ------------------------------------------------
// Not swapped: A' = A (row-major), B' = B, D' = D (row-major).
// Swapped:     A' = B^T (row-major when B is column-major), B' = A^T (K-major, "column-major"
//              in CUTLASS's [K, N] naming), D' = D^T (column-major).
using RowMajor = cutlass::layout::RowMajor;
using ColMajor = cutlass::layout::ColumnMajor;
using LayoutBIn = std::conditional_t<HK_B_COL, ColMajor, RowMajor>;
#if HK_SWAP_AB
using LayoutA = std::conditional_t<HK_B_COL, RowMajor, ColMajor>;
using LayoutB = ColMajor;
using LayoutD = ColMajor;
#else
using LayoutA = RowMajor;
using LayoutB = LayoutBIn;
using LayoutD = RowMajor;
#endif
// TMA needs 16-byte aligned global strides and boxes.
constexpr int kAlignIn = 16 / sizeof(ElementIn);
constexpr int kAlignOut = 16 / sizeof(ElementOut);

// ---- schedule ----------------------------------------------------------------------------------
using TileShape = Shape<Int<HK_TILE_M>, Int<HK_TILE_N>, Int<HK_TILE_K>>;
using ClusterShape = Shape<Int<HK_CLUSTER_M>, Int<HK_CLUSTER_N>, _1>;
#if HK_SCHEDULE == 0
#define HK_SCHEDULE_NAME "cooperative"
#if HK_SPLIT_N
// The TMA epilogue's register-to-shared copy (stmatrix over 128-row subtiles) assumes every
// consumer thread holds part of each subtile, which an N split breaks ("Ambiguous scatter
// detected in copy"): the N-split tile stores straight from registers to global memory.
using EpilogueSchedule = cutlass::epilogue::NoSmemWarpSpecialized;
#else
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative;
#endif
#if HK_DTYPE == 2
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum;
#else
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
#endif
#else
#define HK_SCHEDULE_NAME "pingpong"
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;
#if HK_DTYPE == 2
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum;
#else
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
#endif
#endif
#if HK_STREAMK
using TileScheduler = cutlass::gemm::StreamKScheduler;
#define HK_SCHEDULER_NAME "stream-k"
#else
using TileScheduler = cutlass::gemm::PersistentScheduler;
#define HK_SCHEDULER_NAME "persistent"
#endif

// No C operand (ElementC = void): D = alpha * acc, and the epilogue never reads C.
using BuilderEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAcc, float,  //
    void, LayoutD, kAlignOut,                                           // C
    ElementOut, LayoutD, kAlignOut,                                     // D
    EpilogueSchedule>::CollectiveOp;
#if HK_QUAD_STORES
using CollectiveEpilogue = typename hk::WithQuadStores<BuilderEpilogue>::type;
#else
using CollectiveEpilogue = BuilderEpilogue;
#endif

// Stages: as many as fit in shared memory after the epilogue's staging buffer.
using StageCount = cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
    sizeof(typename CollectiveEpilogue::SharedStorage))>;
#if HK_SPLIT_N
#if HK_SCHEDULE != 0 || HK_DTYPE > 1 || HK_SWAP_AB
#error "HK_SPLIT_N: cooperative bf16 / fp16, not swapped"
#endif
// The builder's mainloop, assembled by hand with an N-split TiledMma: the same TMA atoms,
// shared-memory layouts and stage count the builder derives (sm90_gmma_builder.inl), only the
// warp groups laid out 1x2 over (M, N) instead of 2x1.
namespace split_n {
namespace cgd = cutlass::gemm::collective::detail;
constexpr auto kMajorA = cgd::gmma_ss_tag_to_major_A<ElementIn, LayoutA>();
constexpr auto kMajorB = cgd::gmma_ss_tag_to_major_B<ElementIn, LayoutB>();
using Atom = decltype(cute::GMMA::ss_op_selector<ElementIn, ElementIn, ElementAcc,
                                                 Shape<_64, Int<HK_TILE_N / 2>, Int<HK_TILE_K>>,
                                                 kMajorA, kMajorB>());
using TiledMma = decltype(cute::make_tiled_mma(Atom{}, Layout<Shape<_1, _2, _1>>{}));
constexpr int kStages =
    cgd::compute_stage_count_or_override<cgd::sm90_smem_capacity_bytes, ElementIn, ElementIn,
                                         TileShape>(StageCount{});
}  // namespace split_n
using CollectiveMainloop = cutlass::gemm::collective::CollectiveMma<
    cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<split_n::kStages, ClusterShape,
                                                      MainloopSchedule>,
    TileShape, ElementIn, cutlass::gemm::TagToStrideA_t<LayoutA>, ElementIn,
    cutlass::gemm::TagToStrideB_t<LayoutB>, split_n::TiledMma,
    decltype(split_n::cgd::sm90_cluster_shape_to_tma_atom(shape<1>(ClusterShape{}))),
    decltype(split_n::cgd::ss_smem_selector<split_n::kMajorA, ElementIn, Int<HK_TILE_M>,
                                            Int<HK_TILE_K>>()),
    void, cute::identity,
    decltype(split_n::cgd::sm90_cluster_shape_to_tma_atom(shape<0>(ClusterShape{}))),
    decltype(split_n::cgd::ss_smem_selector<split_n::kMajorB, ElementIn, Int<HK_TILE_N>,
                                            Int<HK_TILE_K>>()),
    void, cute::identity>;
#else
using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,  //
    ElementIn, LayoutA, kAlignIn,                         // A'
    ElementIn, LayoutB, kAlignIn,                         // B'
    ElementAcc, TileShape, ClusterShape, StageCount, MainloopSchedule>::CollectiveOp;
#endif

// For tf32 with A K-major and B MN-major CUTLASS's builder would swap A and B itself, but its
// kernel then hands the epilogue the unswapped problem shape while storing tiles of the swapped
// one (every output came out transposed on the H200, and with D described column-major TMA
// stores ran out of bounds). gemm.py builds tf32 nn with HK_SWAP_AB instead, so A' is the
// MN-major operand and the builder reads it into registers without a swap of its own.
static_assert(!cutlass::gemm::kernel::detail::Has_SwapAB_v<CollectiveMainloop>,
              "tf32 nn must be built with HK_SWAP_AB=1 (see above)");

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>,
                                                        CollectiveMainloop, CollectiveEpilogue,
                                                        TileScheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
using Arguments = typename Gemm::Arguments;

struct Memset {
  void* dst;
  size_t bytes;
};

struct Plan {
  typename Gemm::Params params;
  Memset clears[4];  // workspace ranges each launch must find zeroed (stream-K arrival flags)
  int n_clears;
};

// Which workspace ranges does CUTLASS zero before a launch? Capture its initialize_workspace on
// a scratch stream and read the memset nodes, so run() repeats exactly those memsets and nothing
// else (no host-side scheduler arithmetic, no occupancy queries inside the timed launch).
int record_clears(Arguments const& args, void* workspace, Plan* plan) {
  plan->n_clears = 0;
  cudaStream_t s;
  if (cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) return hk::from_cuda(e);
  cudaGraph_t graph = nullptr;
  int rc = hk::from_cuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  cutlass::Status st = cutlass::Status::kSuccess;
  if (rc == 0) {
    st = GemmKernel::initialize_workspace(args, workspace, s);
    rc = hk::from_cuda(cudaStreamEndCapture(s, &graph));
  }
  if (rc == 0 && st != cutlass::Status::kSuccess) rc = hk::from_cutlass(st);
  size_t n = 0;
  if (rc == 0) rc = hk::from_cuda(cudaGraphGetNodes(graph, nullptr, &n));
  if (rc == 0 && n > 0) {
    cudaGraphNode_t nodes[16];
    n = n < 16 ? n : 16;
    rc = hk::from_cuda(cudaGraphGetNodes(graph, nodes, &n));
    for (size_t i = 0; rc == 0 && i < n; ++i) {
      cudaGraphNodeType type;
      cudaGraphNodeGetType(nodes[i], &type);
      cudaMemsetParams m{};
      if (type != cudaGraphNodeTypeMemset || cudaGraphMemsetNodeGetParams(nodes[i], &m)) {
        rc = hk::from_cutlass(cutlass::Status::kErrorInternal);  // not the plain memset we expect
      } else if (m.value != 0 || m.height != 1 || plan->n_clears == 4) {
        rc = hk::from_cutlass(cutlass::Status::kErrorInternal);
      } else {
        plan->clears[plan->n_clears++] = {m.dst, m.width * m.elementSize};
      }
    }
  }
  if (graph) cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  return rc;
}

// Runtime scheduler options: mode 0 heuristic, 1 data-parallel, 2 split-K, 3 stream-K.
Arguments make_arguments(const void* A, const void* B, void* D, const float* alpha, int M, int N,
                         int K, int64_t lda, int64_t ldb, int64_t ldd, int mode, int splits,
                         int swizzle) {
#if HK_SWAP_AB
  const void* a_ptr = B;
  const void* b_ptr = A;
  const int64_t ld_a = ldb, ld_b = lda;
  const int m = N, n = M;
#else
  const void* a_ptr = A;
  const void* b_ptr = B;
  const int64_t ld_a = lda, ld_b = ldb;
  const int m = M, n = N;
#endif
  using StrideA = typename GemmKernel::StrideA;
  using StrideB = typename GemmKernel::StrideB;
  using StrideD = typename GemmKernel::StrideD;
  using StrideC = typename GemmKernel::StrideC;

  Arguments args{};
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = {m, n, K, 1};
  args.mainloop.ptr_A = static_cast<const ElementIn*>(a_ptr);
  args.mainloop.dA = hk::stride_with_ld<StrideA>(ld_a);
  args.mainloop.ptr_B = static_cast<const ElementIn*>(b_ptr);
  args.mainloop.dB = hk::stride_with_ld<StrideB>(ld_b);
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  args.epilogue.thread.alpha_ptr = alpha;  // nullptr: use the scalar 1
  args.epilogue.ptr_C = nullptr;
  args.epilogue.dC = hk::stride_with_ld<StrideC>(ldd);
  args.epilogue.ptr_D = static_cast<ElementOut*>(D);
  args.epilogue.dD = hk::stride_with_ld<StrideD>(ldd);
  // SM count and how many clusters fit at once (a cluster must sit inside one GPC, so with
  // clusters > 1 fewer than sm_count / cluster_size may be co-resident): the persistent grid is
  // sized from these, and a grid larger than what fits would run a straggling second wave.
  int device = 0;
  cudaGetDevice(&device);
  args.hw_info = cutlass::KernelHardwareInfo::make_kernel_hardware_info<GemmKernel>(device);
  // `swizzle` carries the raster order above its low byte (gemm.py, RunOptions.packed_swizzle):
  // 0 CUTLASS's heuristic, 1 along M, 2 along N, in the kernel's own M / N (swapped under
  // HK_SWAP_AB). Which operand's panels stay in L2 between neighbouring tiles follows from it.
  using RasterOrder = cutlass::gemm::kernel::detail::RasterOrderOptions;
  const RasterOrder rasters[] = {RasterOrder::Heuristic, RasterOrder::AlongM, RasterOrder::AlongN};
  const int raster = (swizzle >> 8) & 0xff;
  args.scheduler.raster_order = rasters[raster < 3 ? raster : 0];
  // The third byte: how split-K / stream-K peers add their partials (gemm.py, REDUCTIONS):
  // 0 in turn (deterministic, CUTLASS's default), 1 at once by atomic adds.
  const int reduction = (swizzle >> 16) & 0xff;
  swizzle &= 0xff;
  // Grouping up to `swizzle` tiles along the raster keeps neighbouring CTAs on shared A/B
  // panels, which then hit in L2.
  args.scheduler.max_swizzle_size = swizzle > 0 ? swizzle : 1;
#if HK_STREAMK
  using Decomposition = cutlass::gemm::kernel::detail::DecompositionMode;
  const Decomposition modes[] = {Decomposition::Heuristic, Decomposition::DataParallel,
                                 Decomposition::SplitK, Decomposition::StreamK};
  args.scheduler.decomposition_mode = modes[(mode >= 0 && mode < 4) ? mode : 0];
  args.scheduler.splits = splits > 0 ? splits : 1;
  using Reduction = cutlass::gemm::kernel::detail::ReductionMode;
  args.scheduler.reduction_mode =
      reduction == 1 ? Reduction::Nondeterministic : Reduction::Deterministic;
#else
  (void)mode;
  (void)splits;
  (void)reduction;
#endif
  return args;
}
}  // namespace

HK_EXPORT const char* hk_describe(void) {
  return "kernel=sm90_gemm;dtype=" HK_DTYPE_NAME ";b_layout=" HK_STR(HK_B_COL)
         ";swap_ab=" HK_STR(HK_SWAP_AB) ";tile=" HK_STR(HK_TILE_M) "x" HK_STR(HK_TILE_N) "x"
         HK_STR(HK_TILE_K) ";cluster=" HK_STR(HK_CLUSTER_M) "x" HK_STR(HK_CLUSTER_N)
         "x1;schedule=" HK_SCHEDULE_NAME ";split_n=" HK_STR(HK_SPLIT_N) ";quad_stores=" HK_STR(HK_QUAD_STORES)
         ";scheduler=" HK_SCHEDULER_NAME
         ";cutlass=" HK_CUTLASS_VERSION;
}

HK_EXPORT int hk_gemm_stages(void) { return CollectiveMainloop::DispatchPolicy::Stages; }

HK_EXPORT int64_t hk_gemm_workspace(int M, int N, int K, int mode, int splits, int swizzle) {
  Arguments args = make_arguments(nullptr, nullptr, nullptr, nullptr, M, N, K, K, K, N, mode,
                                  splits, swizzle);
  return static_cast<int64_t>(Gemm::get_workspace_size(args));
}

HK_EXPORT int hk_gemm_plan(const void* A, const void* B, void* D, const float* alpha, int M,
                           int N, int K, int64_t lda, int64_t ldb, int64_t ldd, int mode,
                           int splits, int swizzle, void* workspace, void** plan_out) {
  *plan_out = nullptr;
  Arguments args =
      make_arguments(A, B, D, alpha, M, N, K, lda, ldb, ldd, mode, splits, swizzle);
  cutlass::Status s = Gemm::can_implement(args);
  if (s != cutlass::Status::kSuccess) return hk::from_cutlass(s);
  size_t ws = Gemm::get_workspace_size(args);
  if (ws > 0 && workspace == nullptr) return hk::from_cutlass(cutlass::Status::kErrorWorkspaceNull);
  Gemm gemm;
  // Builds the TMA descriptors and sets the kernel's dynamic shared-memory attribute once.
  s = gemm.initialize(args, workspace, nullptr);
  if (s != cutlass::Status::kSuccess) return hk::from_cutlass(s);
  auto* plan = new Plan{gemm.params(), {}, 0};
  if (int rc = ws > 0 ? record_clears(args, workspace, plan) : 0) {
    delete plan;
    return rc;
  }
  *plan_out = plan;
  return hk::from_cuda(cudaDeviceSynchronize());
}

HK_EXPORT int hk_gemm_run(void* plan, void* stream) {
  auto* p = static_cast<Plan*>(plan);
  auto st = static_cast<cudaStream_t>(stream);
  // Split-K / stream-K peers count arrivals in workspace flags, which must start at zero.
  for (int i = 0; i < p->n_clears; ++i) {
    if (cudaError_t e = cudaMemsetAsync(p->clears[i].dst, 0, p->clears[i].bytes, st)) {
      return hk::from_cuda(e);
    }
  }
  return hk::from_cutlass(Gemm::run(p->params, st));
}

HK_EXPORT void hk_gemm_destroy(void* plan) { delete static_cast<Plan*>(plan); }

HK_EXPORT const char* hk_status_string(int code) { return hk::status_string(code); }
