// FMHA forward on CuTe, SM80 style (cp.async, ldmatrix, mma.sync m16n8k16; runs on sm_80 and
// sm_90): O = softmax(Q K^T * scale) V with an online softmax over KV tiles, fp32 accumulation,
// GQA by head mapping, optional bottom-right aligned causal mask.
//
//   HK_DTYPE     0 bf16, 1 fp16
//   HK_HEAD_DIM  64 or 128
//
// One CTA (4 warps) owns kBlockM = 128 query rows of one (batch, head). Shapes: q_len a multiple
// of 128 and kv_len of 64 (no partial tiles, so no predicated loads), causal needs q_len <= kv_len.
//
// C ABI: hk_describe, hk_fmha_plan(q, k, v, o, B, Hq, Hkv, Sq, Skv, strides[12], scale, causal,
// &plan), hk_fmha_run(plan, stream), hk_fmha_destroy(plan), hk_status_string.
#include "common.h"
#include "fmha_cta_tiles.h"
#include "fmha_sm80.h"

#ifndef HK_DTYPE
#define HK_DTYPE 0
#endif
#ifndef HK_HEAD_DIM
#define HK_HEAD_DIM 128
#endif

// A named namespace: nvcc's generated launch stubs cannot name kernels in an anonymous one that
// also pulls in cute's own anonymous namespace.
namespace hk_fmha_sm80 {
using namespace cute;
#if HK_DTYPE == 0
using Element = cutlass::bfloat16_t;
#define HK_DTYPE_NAME "bf16"
#else
using Element = cutlass::half_t;
#define HK_DTYPE_NAME "fp16"
#endif
#ifndef HK_BLOCK_N
#define HK_BLOCK_N 64
#endif
using T = hk::fmha::Traits<Element, HK_HEAD_DIM, 128, HK_BLOCK_N>;
using Params = hk::fmha::Params<Element>;

// acc += A @ B with both operands in shared memory: ldmatrix the next k slice into registers
// while the tensor cores work on the current one.
template <class Mma, class Acc, class RA, class RB, class SA, class SB, class CA, class CB,
          class VA, class VB>
__device__ void gemm_smem(Mma& mma, Acc& acc, RA& rA, RB& rB, SA const& sA, SB const& sB,
                          CA const& copyA, CB const& copyB, VA& viewA, VB& viewB) {
  copy(copyA, sA(_, _, 0), viewA(_, _, 0));
  copy(copyB, sB(_, _, 0), viewB(_, _, 0));
  CUTE_UNROLL
  for (int k = 0; k < size<2>(rA); ++k) {
    if (k + 1 < size<2>(rA)) {
      copy(copyA, sA(_, _, k + 1), viewA(_, _, k + 1));
      copy(copyB, sB(_, _, k + 1), viewB(_, _, k + 1));
    }
    cute::gemm(mma, rA(_, _, k), rB(_, _, k), acc);
  }
}

// acc += A @ B with A already in registers (P) and B in shared memory (V^T).
template <class Mma, class Acc, class RA, class RB, class SB, class CB, class VB>
__device__ void gemm_reg_smem(Mma& mma, Acc& acc, RA const& rA, RB& rB, SB const& sB,
                              CB const& copyB, VB& viewB) {
  copy(copyB, sB(_, _, 0), viewB(_, _, 0));
  CUTE_UNROLL
  for (int k = 0; k < size<2>(rA); ++k) {
    if (k + 1 < size<2>(rA)) copy(copyB, sB(_, _, k + 1), viewB(_, _, k + 1));
    cute::gemm(mma, rA(_, _, k), rB(_, _, k), acc);
  }
}

template <bool kCausal>
__global__ void __launch_bounds__(T::kThreads) fmha_forward(const __grid_constant__ Params p) {
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN, kHeadDim = T::kHeadDim;
  extern __shared__ char smem_raw[];
  auto& smem = *reinterpret_cast<typename T::SharedStorage*>(smem_raw);
  const int tid = threadIdx.x;
  // Causal: the last query tiles see the most keys; start them first so the tail is short.
  const int m_block = kCausal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);
  const int head = blockIdx.y, batch = blockIdx.z;

  // ---- tiles of this (batch, head): global, shared, and this thread's cp.async copies ----------
  auto [gQ, gO, gK, gV] = hk::fmha::gmem_tiles<T>(p, m_block, head, batch);
  auto [sQ, sK, sV, sVt] = hk::fmha::smem_tiles<T>(smem);
  typename T::GmemCopy gmem_copy;
  auto [tQgQ, tQsQ, tKgK, tKsK, tVgV, tVsV] =
      hk::fmha::copy_partitions<T>(tid, gQ, sQ, gK, sK, gV, sV);

  typename T::TiledMma mma;
  auto thr_mma = mma.get_thread_slice(tid);
  Tensor tSrQ = thr_mma.partition_fragment_A(sQ);    // [MMA, MMA_M, MMA_D]
  Tensor tSrK = thr_mma.partition_fragment_B(sK);    // [MMA, MMA_N, MMA_D]
  Tensor tOrVt = thr_mma.partition_fragment_B(sVt);  // [MMA, MMA_D, MMA_N]
  // [MMA, MMA_M, MMA_D] fp32
  Tensor acc_o = partition_fragment_C(mma, Shape<Int<kBlockM>, Int<kHeadDim>>{});
  clear(acc_o);

  auto q_copy = make_tiled_copy_A(typename T::SmemCopyAtom{}, mma);
  auto k_copy = make_tiled_copy_B(typename T::SmemCopyAtom{}, mma);
  auto v_copy = make_tiled_copy_B(typename T::SmemCopyAtomT{}, mma);
  auto q_thr = q_copy.get_thread_slice(tid);
  auto k_thr = k_copy.get_thread_slice(tid);
  auto v_thr = v_copy.get_thread_slice(tid);
  Tensor tSsQ = q_thr.partition_S(sQ);
  Tensor tSsK = k_thr.partition_S(sK);
  Tensor tOsVt = v_thr.partition_S(sVt);
  Tensor tSrQ_view = q_thr.retile_D(tSrQ);
  Tensor tSrK_view = k_thr.retile_D(tSrK);
  Tensor tOrVt_view = v_thr.retile_D(tOrVt);

  // (row, col) inside the [kBlockM, kBlockN] score tile of each accumulator element, for the mask.
  Tensor tScS = thr_mma.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));

  const int n_end = hk::fmha::kv_tiles<kCausal, T>(p, m_block);
  const int first_row = m_block * kBlockM + p.causal_offset;  // its first query's last key

  // Softmax state per thread row (rows of the acc_rowcol view).
  Tensor o_rc = make_tensor(acc_o.data(), hk::fmha::acc_rowcol(acc_o.layout()));
  constexpr int kRows = decltype(size<0>(o_rc))::value;
  float row_max[kRows], row_sum[kRows];  // raw-score max (quad-wide); this thread's partial sum
  hk::fmha::reset_rows(row_max, row_sum);

  copy(gmem_copy, tQgQ, tQsQ);
  copy(gmem_copy, tKgK(_, _, _, 0), tKsK);
  cp_async_fence();

  for (int n = 0; n < n_end; ++n) {
    Tensor acc_s = partition_fragment_C(mma, Shape<Int<kBlockM>, Int<kBlockN>>{});
    clear(acc_s);
    cp_async_wait<0>();
    __syncthreads();  // K[n] (and Q) landed; every warp is done reading V[n-1]
    copy(gmem_copy, tVgV(_, _, _, n), tVsV);
    cp_async_fence();

    gemm_smem(mma, acc_s, tSrQ, tSrK, tSsQ, tSsK, q_copy, k_copy, tSrQ_view, tSrK_view);

    if (kCausal) hk::fmha::mask_past_diagonal<kBlockN>(acc_s, tScS, n, first_row);

    cp_async_wait<0>();
    __syncthreads();  // V[n] landed; every warp is done reading K[n]
    if (n + 1 < n_end) copy(gmem_copy, tKgK(_, _, _, n + 1), tKsK);
    cp_async_fence();

    // Online softmax: new running max, rescale what was accumulated under the old one.
    Tensor s_rc = make_tensor(acc_s.data(), hk::fmha::acc_rowcol(acc_s.layout()));
    hk::fmha::online_softmax(s_rc, o_rc, row_max, row_sum, p.scale_log2);

    // P in the input precision, reused in place as the A operand of P @ V.
    Tensor p_frag = make_fragment_like<Element>(acc_s);
    CUTE_UNROLL
    for (int i = 0; i < size(acc_s); ++i) p_frag(i) = Element(acc_s(i));
    Tensor tOrP = make_tensor(p_frag.data(), hk::fmha::acc_as_operand_a(p_frag.layout()));
    gemm_reg_smem(mma, acc_o, tOrP, tOrVt, tOsVt, v_copy, tOrVt_view);
  }

  // ---- epilogue: divide by the row sums, round, store ---------------------------------------------
  hk::fmha::normalize_rows(o_rc, row_sum);
  Tensor tOgO = thr_mma.partition_C(gO);
  CUTE_UNROLL
  for (int i = 0; i < size(acc_o); ++i) tOgO(i) = Element(acc_o(i));
}

constexpr int kSmemBytes = int(sizeof(typename T::SharedStorage));
}  // namespace hk_fmha_sm80
using namespace hk_fmha_sm80;

HK_EXPORT const char* hk_describe(void) {
  return "kernel=fmha_sm80;dtype=" HK_DTYPE_NAME ";head_dim=" HK_STR(HK_HEAD_DIM)
         ";tile=128x64;warps=4;schedule=cp.async-ldmatrix-mma.sync;cutlass=" HK_CUTLASS_VERSION;
}

HK_EXPORT int hk_fmha_plan(const void* q, const void* k, const void* v, void* o, int B, int Hq,
                           int Hkv, int Sq, int Skv, const int64_t* strides, float scale,
                           int causal, void** plan_out) {
  *plan_out = nullptr;
  Params p;
  if (int rc = hk::fmha::make_params(p, q, k, v, o, B, Hq, Hkv, Sq, Skv, strides, scale, causal,
                                     T::kBlockM, T::kBlockN)) {
    return rc;
  }
  const dim3 grid = dim3(Sq / T::kBlockM, Hq, B);
  return hk::fmha::finish_plan<Params>(p, grid, causal != 0, fmha_forward<false>, fmha_forward<true>,
                                       kSmemBytes, plan_out);
}

HK_EXPORT int hk_fmha_run(void* plan, void* stream) {
  return hk::fmha::launch<Params>(plan, stream, fmha_forward<false>, fmha_forward<true>,
                                  T::kThreads, kSmemBytes);
}

HK_EXPORT void hk_fmha_destroy(void* plan) { hk::fmha::destroy<Params>(plan); }

HK_EXPORT const char* hk_status_string(int code) { return hk::status_string(code); }
