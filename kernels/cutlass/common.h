// Shared by the GEMM libraries: the C ABI they export and small host helpers.
//
// Every library built from kernels/cutlass/*.cu is one kernel configuration (chosen by -D flags)
// and exports the same plain C entry points, so one ctypes loader serves them all:
//
//   const char* hk_describe(void)              "key=value;..." of the compiled configuration
//   int64_t     hk_gemm_workspace(M, N, K, mode, splits, swizzle)   device bytes the plan needs
//   int         hk_gemm_plan(A, B, D, alpha, M, N, K, lda, ldb, ldd, mode, splits, swizzle,
//                            workspace, &plan)  all host work (params, TMA descriptors, attributes)
//   (swizzle: its low byte the raster group size, the next the raster order; gemm.py RunOptions)
//   int         hk_gemm_run(plan, stream)   launch only: what the timer measures
//   void        hk_gemm_destroy(plan)
//   const char* hk_status_string(code)
//
// D[M, N] = alpha * A[M, K] @ B[K, N]; A row-major (lda), B column-major (the "nt" layout,
// y = x W^T) or row-major ("nn") per the library, D row-major (ldd). Status codes: 0 success,
// 1..99 cutlass::Status, 1000 + cudaError_t.
#pragma once

#include <cstdint>
#include <cstdio>

#include <cuda_runtime.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/version.h"

#define HK_STR2(x) #x
#define HK_STR(x) HK_STR2(x)
#define HK_CUTLASS_VERSION HK_STR(CUTLASS_MAJOR) "." HK_STR(CUTLASS_MINOR) "." HK_STR(CUTLASS_PATCH)

#define HK_EXPORT extern "C" __attribute__((visibility("default")))

namespace hk {

constexpr int kCudaErrorBase = 1000;

inline int from_cutlass(cutlass::Status s) { return static_cast<int>(s); }
inline int from_cuda(cudaError_t e) { return e == cudaSuccess ? 0 : kCudaErrorBase + int(e); }

inline const char* status_string(int code) {
  if (code >= kCudaErrorBase) return cudaGetErrorString(cudaError_t(code - kCudaErrorBase));
  return cutlass::cutlassGetStatusString(cutlass::Status(code));
}

// The leading dimension lives in whichever of the first two stride modes is dynamic (the other
// is the static unit stride); the batch mode stays 0 because every plan has L = 1.
template <class Stride>
Stride stride_with_ld(int64_t ld) {
  Stride s{};
  if constexpr (cute::is_static_v<std::remove_cv_t<std::remove_reference_t<decltype(cute::get<0>(s))>>>) {
    cute::get<1>(s) = ld;
  } else {
    cute::get<0>(s) = ld;
  }
  return s;
}

}  // namespace hk
