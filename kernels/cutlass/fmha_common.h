// What the two CuTe FMHA kernels (fmha_sm80.cu: mma.sync, fmha_sm90.cu: wgmma) share: the
// kernel parameters, the online softmax over a thread's (rows, columns) view of the score and
// output accumulators, and the C ABI's problem checks. Only the MMA, its register layouts and
// the launch differ between them.
#pragma once

#include <cmath>
#include <cstdint>

#include "common.h"
#include "cute/tensor.hpp"

namespace hk::fmha {

// Kernel parameters: strides in elements; [B, H, S, D] tensors with unit stride along D.
template <class Element>
struct Params {
  const Element* q;
  const Element* k;
  const Element* v;
  Element* o;
  int64_t q_batch, q_head, q_row;
  int64_t k_batch, k_head, k_row;
  int64_t v_batch, v_head, v_row;
  int64_t o_batch, o_head, o_row;
  int q_heads;
  int group;  // q_heads / kv_heads: query heads sharing one KV head (GQA)
  int seq_q;
  int seq_k;
  int causal_offset;  // seq_k - seq_q: bottom-right aligned mask keeps key j <= i + offset
  float scale_log2;   // softmax scale * log2(e): exp(x * scale) = exp2(x * scale_log2)
};

// In both kernels a row's elements sit in one quad of lanes (fmha_layout_check.cu checks it):
// reduce over lanes ^1 and ^2.
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffff, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffff, x, 1);
  return x + __shfl_xor_sync(0xffffffff, x, 2);
}

// exp2 on the SFU with results below 2^-126 flushed to zero: ex2.approx.ftz.f32, what exp2f
// becomes under --use_fast_math (FlashAttention-3 builds with it). Plain exp2f wraps every
// MUFU.EX2 in a range check and two predicated multiplies (sm_90a SASS: FSETP -126, FMUL 0.5,
// FMUL), three more instructions per score on the softmax's critical path. What the flush
// drops is a probability under 2^-126 of its row's largest (1): nothing a bf16 or fp16 P keeps.
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// HK_EXP_EMU n > 0: one score in n (every n-th column of a thread's row) takes exp2_poly
// instead of the SFU. At head_dim 64 the SFU's 16 exp2 per clock per SM need as long as the
// two matmuls at the tensor peak (harness gaps' softmax share: 92% on an H100 or H200), so in
// ping-pong one warpgroup's softmax lasts about as long as the other's wgmmas; the FMA pipe
// (128 lanes per SM) has room. FlashAttention-4 does this on Blackwell, where the SFU is
// relatively slower still. 0 (the default): every exp2 on the SFU.
#ifndef HK_EXP_EMU
#define HK_EXP_EMU 0
#endif

// exp2 on the FMA and integer pipes, for x <= 0 (a scaled score less its row's max): round x
// to n by the 1.5 * 2^23 shifter (x + shifter keeps n in its low mantissa bits), 2^(x - n) by
// a cubic on [-0.5, 0.5] (relative error 7.5e-5, fitted for relative error; bf16 keeps 3.9e-3),
// then n added to the exponent field as an unsigned integer. Below -125 (a masked -inf among
// them) it returns 0, as the SFU does there; the clamp keeps the exponent from wrapping on the
// path not taken. A NaN score gives 2^-125 here where the SFU gives NaN.
__device__ __forceinline__ float exp2_poly(float x) {
  constexpr float kShifter = 12582912.f;  // 1.5 * 2^23
  const float xc = fmaxf(x, -125.f);
  const float shifted = xc + kShifter;
  const float f = xc - (shifted - kShifter);
  const float p = fmaf(fmaf(fmaf(0.05517132f, f, 0.24261054f), f, 0.69326097f), f, 0.99992812f);
  const float y = __uint_as_float(__float_as_uint(p) + (__float_as_uint(shifted) << 23));
  return x < -125.f ? 0.f : y;
}

// Whether column c of a thread's row takes exp2_poly: the last of every HK_EXP_EMU (a constant
// once the column loop is unrolled).
__device__ __forceinline__ constexpr bool emulated(int c) {
  return HK_EXP_EMU > 0 && c % (HK_EXP_EMU > 0 ? HK_EXP_EMU : 1) == HK_EXP_EMU - 1;
}

// The online softmax's state of a thread's rows before the first KV tile: no max, no sum.
template <int kRows>
__device__ __forceinline__ void reset_rows(float (&row_max)[kRows], float (&row_sum)[kRows]) {
  CUTE_UNROLL
  for (int r = 0; r < kRows; ++r) {
    row_max[r] = -INFINITY;
    row_sum[r] = 0.f;
  }
}

// Causal: -inf over the keys past the diagonal in KV tile n of a score accumulator. Such keys
// only exist in the tiles that reach past the query tile's first row (first_row: its first
// query's last key), so every other tile skips the test. tScS: each accumulator element's
// (row, column) in the [kBlockM, kBlockN] tile.
template <int kBlockN, class Acc, class Coords>
__device__ __forceinline__ void mask_past_diagonal(Acc& acc_s, Coords const& tScS, int n,
                                                   int first_row) {
  if ((n + 1) * kBlockN - 1 > first_row) {
    CUTE_UNROLL
    for (int i = 0; i < cute::size(acc_s); ++i) {
      if (n * kBlockN + cute::get<1>(tScS(i)) > first_row + cute::get<0>(tScS(i))) {
        acc_s(i) = -INFINITY;
      }
    }
  }
}

// One KV tile of the online softmax, the score half. s_rc: this thread's raw scores as (rows,
// columns), turned into unnormalised probabilities in place; row_max (quad-wide raw max) and
// row_sum (this thread's partial sum) carry across tiles; correction[r] is what the output rows
// accumulated so far must be multiplied by (rescale_rows), which a kernel may apply later: the
// warp-specialized kernel runs this while the previous tile's P V wgmma is still in flight.
template <class S>
__device__ __forceinline__ void softmax_scores(S& s_rc, float* row_max, float* row_sum,
                                               float* correction, float scale_log2) {
  CUTE_UNROLL
  for (int r = 0; r < cute::size<0>(s_rc); ++r) {
    float mx = row_max[r];
    CUTE_UNROLL
    for (int c = 0; c < cute::size<1>(s_rc); ++c) mx = fmaxf(mx, s_rc(r, c));
    mx = quad_max(mx);
    // A row with every key masked so far keeps max -inf: use 0 so no (-inf) - (-inf) appears.
    const float max_scaled = mx == -INFINITY ? 0.f : mx * scale_log2;
    correction[r] = exp2_ftz(row_max[r] * scale_log2 - max_scaled);
    row_max[r] = mx;
    row_sum[r] *= correction[r];
    CUTE_UNROLL
    for (int c = 0; c < cute::size<1>(s_rc); ++c) {
      const float x = fmaf(s_rc(r, c), scale_log2, -max_scaled);
      const float prob = emulated(c) ? exp2_poly(x) : exp2_ftz(x);
      s_rc(r, c) = prob;
      row_sum[r] += prob;
    }
  }
}

// The output half: o_rc (rows, columns) scaled row by row to the new running max.
template <class O>
__device__ __forceinline__ void rescale_rows(O& o_rc, const float* correction) {
  CUTE_UNROLL
  for (int r = 0; r < cute::size<0>(o_rc); ++r) {
    CUTE_UNROLL
    for (int c = 0; c < cute::size<1>(o_rc); ++c) o_rc(r, c) *= correction[r];
  }
}

// Both halves at once, for kernels with nothing in flight on the output accumulator.
template <class S, class O>
__device__ __forceinline__ void online_softmax(S& s_rc, O& o_rc, float* row_max, float* row_sum,
                                               float scale_log2) {
  float correction[decltype(cute::size<0>(s_rc))::value];
  softmax_scores(s_rc, row_max, row_sum, correction, scale_log2);
  rescale_rows(o_rc, correction);
}

// The epilogue's division of each output row by its (quad-wide) probability sum.
template <class O>
__device__ __forceinline__ void normalize_rows(O& o_rc, const float* row_sum) {
  CUTE_UNROLL
  for (int r = 0; r < cute::size<0>(o_rc); ++r) {
    const float sum = quad_sum(row_sum[r]);
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    CUTE_UNROLL
    for (int c = 0; c < cute::size<1>(o_rc); ++c) o_rc(r, c) *= inv;
  }
}

// hk_fmha_plan's checks and parameters, for tiles of kBlockM query rows and kBlockN keys (the
// cp.async kernels take no partial tiles; the TMA kernel passes 1, 1) loaded by 16-byte
// copies: 0, or the status to return.
template <class Element>
inline int make_params(Params<Element>& p, const void* q, const void* k, const void* v, void* o,
                       int B, int Hq, int Hkv, int Sq, int Skv, const int64_t* strides,
                       float scale, int causal, int kBlockM, int kBlockN) {
  if (B < 1 || Hq < 1 || Hkv < 1 || Hq % Hkv || Sq % kBlockM || Skv % kBlockN || Sq < 1 ||
      Skv < 1 || (causal && Sq > Skv)) {
    return from_cutlass(cutlass::Status::kErrorInvalidProblem);
  }
  // 16-byte cp.async: base pointers and every row/head/batch stride 16-byte aligned.
  for (const void* ptr : {q, k, v, static_cast<const void*>(o)}) {
    if (reinterpret_cast<uintptr_t>(ptr) % 16) {
      return from_cutlass(cutlass::Status::kErrorMisalignedOperand);
    }
  }
  for (int i = 0; i < 12; ++i) {
    if (strides[i] % 8) return from_cutlass(cutlass::Status::kErrorMisalignedOperand);
  }
  p = Params<Element>{static_cast<const Element*>(q), static_cast<const Element*>(k),
                      static_cast<const Element*>(v), static_cast<Element*>(o),
                      strides[0], strides[1], strides[2], strides[3], strides[4], strides[5],
                      strides[6], strides[7], strides[8], strides[9], strides[10], strides[11],
                      Hq, Hq / Hkv, Sq, Skv, Skv - Sq, float(scale * M_LOG2E)};
  return 0;
}

// ---- the C ABI's plan and launch, shared by every FMHA library -------------------------------

// What hk_fmha_plan hands to hk_fmha_run: the kernel's parameters, its grid, causal or not.
template <class P>
struct Plan {
  P params;
  dim3 grid;
  bool causal;
};

// A kernel instantiation taking P by value (the plain and the causal one of each library).
template <class P>
using Kernel = void (*)(P);

// hk_fmha_plan's last step: let both instantiations use `smem` bytes of dynamic shared memory,
// then hand back the plan. 0, or the status to return.
template <class P>
inline int finish_plan(P const& params, dim3 grid, bool causal, Kernel<P> plain,
                       Kernel<P> masked, int smem, void** plan_out) {
  for (Kernel<P> kernel : {plain, masked}) {
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             smem)) {
      return from_cuda(e);
    }
  }
  *plan_out = new Plan<P>{params, grid, causal};
  return 0;
}

// hk_fmha_run's body: the plan's instantiation on its grid, on `stream`; launch only.
template <class P>
inline int launch(void* plan, void* stream, Kernel<P> plain, Kernel<P> masked, int threads,
                  int smem) {
  auto* pl = static_cast<Plan<P>*>(plan);
  Kernel<P> kernel = pl->causal ? masked : plain;
  kernel<<<pl->grid, threads, smem, static_cast<cudaStream_t>(stream)>>>(pl->params);
  return from_cuda(cudaGetLastError());
}

template <class P>
inline void destroy(void* plan) {
  delete static_cast<Plan<P>*>(plan);
}

}  // namespace hk::fmha
