// SM80-style GEMM (the Ampere rung of the ladder): cp.async multistage shared-memory pipeline,
// ldmatrix + mma.sync (HMMA 16x8x16) per warp, one CTA per output tile, no TMA, no WGMMA, no
// warp specialization, no clusters. Built for sm_80 and sm_90, so the same kernel runs on Ampere
// and Hopper: against the SM90 libraries it shows what TMA and WGMMA add over cp.async and
// mma.sync on the same GPU.
//
//   HK_DTYPE    0 bf16, 1 fp16
//   HK_B_COL    1: B column-major (layout nt); 0: B row-major (layout nn)
//   HK_TILE_M/N/K, HK_WARP_M/N/K, HK_STAGES   CTA tile, warp tile, pipeline depth
//
// Exports the C ABI of common.h; mode / splits / swizzle are accepted and ignored.
#include "common.h"

#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/gemm/device/gemm.h"

#ifndef HK_DTYPE
#define HK_DTYPE 0
#endif
#ifndef HK_B_COL
#define HK_B_COL 1
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
#ifndef HK_WARP_M
#define HK_WARP_M 64
#endif
#ifndef HK_WARP_N
#define HK_WARP_N 64
#endif
#ifndef HK_WARP_K
#define HK_WARP_K 64
#endif
#ifndef HK_STAGES
#define HK_STAGES 3
#endif

namespace {
#if HK_DTYPE == 0
using Element = cutlass::bfloat16_t;
#define HK_DTYPE_NAME "bf16"
#elif HK_DTYPE == 1
using Element = cutlass::half_t;
#define HK_DTYPE_NAME "fp16"
#else
#error "the SM80 rung takes bf16 or fp16"
#endif
using LayoutB = std::conditional_t<HK_B_COL, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;
constexpr int kAlign = 16 / sizeof(Element);  // 16-byte cp.async and vector stores

// D = alpha * acc; beta = 0, so the epilogue never reads C (C aliases D below).
using Epilogue = cutlass::epilogue::thread::LinearCombination<
    Element, kAlign, float, float, cutlass::epilogue::thread::ScaleType::OnlyAlphaScaling>;

using Gemm = cutlass::gemm::device::Gemm<
    Element, cutlass::layout::RowMajor,  // A
    Element, LayoutB,                    // B
    Element, cutlass::layout::RowMajor,  // C, D
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<HK_TILE_M, HK_TILE_N, HK_TILE_K>,
    cutlass::gemm::GemmShape<HK_WARP_M, HK_WARP_N, HK_WARP_K>,
    cutlass::gemm::GemmShape<16, 8, 16>, Epilogue,
    // Rasterize in groups of 8 tile columns so concurrently running CTAs share B panels in L2.
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>, HK_STAGES, kAlign, kAlign>;

using GemmKernel = typename Gemm::GemmKernel;
constexpr int kSmemBytes = int(sizeof(typename GemmKernel::SharedStorage));

// Kernel parameters and grid, built once; run() is a bare launch (no attribute calls, which
// keeps it legal inside CUDA-graph capture).
struct Plan {
  typename GemmKernel::Params params;
  dim3 grid;
};

typename Gemm::Arguments make_arguments(const void* A, const void* B, void* D, int M, int N,
                                        int K, int64_t lda, int64_t ldb, int64_t ldd) {
  auto* a = static_cast<const Element*>(A);
  auto* b = static_cast<const Element*>(B);
  auto* d = static_cast<Element*>(D);
  return typename Gemm::Arguments({M, N, K}, {a, typename Gemm::LayoutA(lda)},
                                  {b, LayoutB(ldb)}, {d, typename Gemm::LayoutC(ldd)},
                                  {d, typename Gemm::LayoutC(ldd)}, {1.0f, 0.0f});
}
}  // namespace

HK_EXPORT const char* hk_describe(void) {
  return "kernel=sm80_gemm;dtype=" HK_DTYPE_NAME ";b_layout=" HK_STR(HK_B_COL)
         ";swap_ab=0;tile=" HK_STR(HK_TILE_M) "x" HK_STR(HK_TILE_N) "x" HK_STR(HK_TILE_K)
         ";warp=" HK_STR(HK_WARP_M) "x" HK_STR(HK_WARP_N) "x" HK_STR(HK_WARP_K)
         ";cluster=1x1x1;schedule=multistage;scheduler=grid;cutlass=" HK_CUTLASS_VERSION;
}

HK_EXPORT int hk_gemm_stages(void) { return HK_STAGES; }

HK_EXPORT int64_t hk_gemm_workspace(int M, int N, int K, int, int, int) {
  return static_cast<int64_t>(
      Gemm::get_workspace_size(make_arguments(nullptr, nullptr, nullptr, M, N, K, K, K, N)));
}

HK_EXPORT int hk_gemm_plan(const void* A, const void* B, void* D, const float* alpha, int M,
                           int N, int K, int64_t lda, int64_t ldb, int64_t ldd, int, int, int,
                           void*, void** plan_out) {
  *plan_out = nullptr;
  if (alpha != nullptr) return hk::from_cutlass(cutlass::Status::kErrorNotSupported);
  auto args = make_arguments(A, B, D, M, N, K, lda, ldb, ldd);
  cutlass::Status s = Gemm::can_implement(args);
  if (s != cutlass::Status::kSuccess) return hk::from_cutlass(s);
  typename Gemm::ThreadblockSwizzle swizzle;
  cutlass::gemm::GemmCoord tiles = swizzle.get_tiled_shape(
      args.problem_size, {HK_TILE_M, HK_TILE_N, HK_TILE_K}, /*split_k_slices=*/1);
  if (kSmemBytes >= (48 << 10)) {
    cudaError_t e = cudaFuncSetAttribute(cutlass::Kernel<GemmKernel>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    if (e != cudaSuccess) return hk::from_cuda(e);
  }
  auto* plan = new Plan{typename GemmKernel::Params{args.problem_size, tiles,
                                                    args.ref_A.non_const_ref(),
                                                    args.ref_B.non_const_ref(),
                                                    args.ref_C.non_const_ref(), args.ref_D,
                                                    args.epilogue, nullptr},
                        swizzle.get_grid_shape(tiles)};
  *plan_out = plan;
  return 0;
}

HK_EXPORT int hk_gemm_run(void* plan, void* stream) {
  auto* p = static_cast<Plan*>(plan);
  cutlass::Kernel<GemmKernel><<<p->grid, GemmKernel::kThreadCount, kSmemBytes,
                                static_cast<cudaStream_t>(stream)>>>(p->params);
  return hk::from_cuda(cudaGetLastError());
}

HK_EXPORT void hk_gemm_destroy(void* plan) { delete static_cast<Plan*>(plan); }

HK_EXPORT const char* hk_status_string(int code) { return hk::status_string(code); }
