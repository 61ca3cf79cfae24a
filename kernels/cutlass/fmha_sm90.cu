// FMHA forward on CuTe for Hopper's warpgroup MMA (wgmma; sm_90a only): O = softmax(Q K^T *
// scale) V with an online softmax over KV tiles, fp32 accumulation, GQA by head mapping,
// optional bottom-right aligned causal mask. The same pipeline as fmha_sm80.cu (cp.async into
// one K and one V buffer), with Q K^T as an SS wgmma and P V as an RS wgmma whose A operand is
// the softmaxed S accumulator itself (fmha_sm90.h): the rung between mma.sync and the TMA +
// warp-specialized kernels (FA3, cuDNN) that also overlap softmax with the next tile's MMAs.
//
//   HK_DTYPE     0 bf16, 1 fp16
//   HK_HEAD_DIM  64 or 128
//
// One CTA (two warpgroups, 256 threads) owns kBlockM = 128 query rows of one (batch, head).
// Shapes as fmha_sm80: q_len a multiple of 128, kv_len of 64, causal needs q_len <= kv_len.
//
// C ABI (the same as fmha_sm80): hk_describe, hk_fmha_plan(q, k, v, o, B, Hq, Hkv, Sq, Skv,
// strides[12], scale, causal, &plan), hk_fmha_run(plan, stream), hk_fmha_destroy(plan),
// hk_status_string.
#include "common.h"
#include "fmha_cta_tiles.h"
#include "cutlass/arch/barrier.h"
#include "fmha_sm90.h"

#ifndef HK_DTYPE
#define HK_DTYPE 0
#endif
#ifndef HK_HEAD_DIM
#define HK_HEAD_DIM 128
#endif

namespace hk_fmha_sm90 {
using namespace cute;
#if HK_DTYPE == 0
using Element = cutlass::bfloat16_t;
#define HK_DTYPE_NAME "bf16"
#else
using Element = cutlass::half_t;
#define HK_DTYPE_NAME "fp16"
#endif
using T = hk::fmha90::Traits<Element, HK_HEAD_DIM>;
using Params = hk::fmha::Params<Element>;

// acc (+)= A @ B over every k block, issued as one batch of wgmma and waited for. With
// kZeroInit the first k block overwrites acc (the S tile starts from nothing each KV step);
// kRegA: A is a register fragment (RS), fenced like the accumulator.
template <bool kZeroInit, bool kRegA, class Mma, class FA, class FB, class Acc>
__device__ __forceinline__ void wgmma(Mma& mma, FA const& a, FB const& b, Acc& acc) {
  if constexpr (kRegA) warpgroup_fence_operand(const_cast<FA&>(a));
  warpgroup_fence_operand(acc);
  warpgroup_arrive();
  if constexpr (kZeroInit) mma.accumulate_ = GMMA::ScaleOut::Zero;
  CUTE_UNROLL
  for (int k = 0; k < size<2>(a); ++k) {
    cute::gemm(mma, a(_, _, k), b(_, _, k), acc);
    mma.accumulate_ = GMMA::ScaleOut::One;
  }
  warpgroup_commit_batch();
  warpgroup_wait<0>();
  warpgroup_fence_operand(acc);
  if constexpr (kRegA) warpgroup_fence_operand(const_cast<FA&>(a));
}

// cp.async writes shared memory through the generic proxy; wgmma reads it through the async
// proxy. Each thread orders its own landed copies for the async proxy, then the CTA barrier.
__device__ __forceinline__ void copies_visible_to_wgmma() {
  cp_async_wait<0>();
  cutlass::arch::fence_view_async_shared();
  __syncthreads();
}

template <bool kCausal>
__global__ void __launch_bounds__(T::kThreads, 1) fmha_forward(const __grid_constant__ Params p) {
#if defined(__CUDA_ARCH__) && defined(CUTE_ARCH_MMA_SM90A_ENABLED)
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN, kHeadDim = T::kHeadDim;
  extern __shared__ __align__(1024) char smem_raw[];
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

  // ---- wgmma operands: shared-memory descriptors (Q, K, V^T), P from registers ------------------
  typename T::TiledMmaS mma_s;
  typename T::TiledMmaO mma_o;
  auto thr_s = mma_s.get_thread_slice(tid);
  auto thr_o = mma_o.get_thread_slice(tid);
  Tensor tSrQ = thr_s.make_fragment_A(thr_s.partition_A(sQ));   // [MMA, MMA_M, MMA_D]
  Tensor tSrK = thr_s.make_fragment_B(thr_s.partition_B(sK));   // [MMA, MMA_N, MMA_D]
  Tensor tOrVt = thr_o.make_fragment_B(thr_o.partition_B(sVt));  // [MMA, MMA_D, MMA_N]
  // [MMA, MMA_M, MMA_D] fp32
  Tensor acc_o = partition_fragment_C(mma_o, Shape<Int<kBlockM>, Int<kHeadDim>>{});
  clear(acc_o);

  // (row, col) inside the [kBlockM, kBlockN] score tile of each accumulator element, for the mask.
  Tensor tScS = thr_s.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));

  const int n_end = hk::fmha::kv_tiles<kCausal, T>(p, m_block);
  const int first_row = m_block * kBlockM + p.causal_offset;  // its first query's last key

  // Softmax state per thread row (rows of the acc_rowcol view).
  Tensor o_rc = make_tensor(acc_o.data(), hk::fmha90::acc_rowcol(acc_o.layout()));
  constexpr int kRows = decltype(size<0>(o_rc))::value;
  float row_max[kRows], row_sum[kRows];  // raw-score max (quad-wide); this thread's partial sum
  hk::fmha::reset_rows(row_max, row_sum);

  copy(gmem_copy, tQgQ, tQsQ);
  copy(gmem_copy, tKgK(_, _, _, 0), tKsK);
  cp_async_fence();

  for (int n = 0; n < n_end; ++n) {
    Tensor acc_s = partition_fragment_C(mma_s, Shape<Int<kBlockM>, Int<kBlockN>>{});
    copies_visible_to_wgmma();  // K[n] (and Q) landed; every warp is done reading V[n-1]
    copy(gmem_copy, tVgV(_, _, _, n), tVsV);
    cp_async_fence();

    wgmma</*kZeroInit=*/true, /*kRegA=*/false>(mma_s, tSrQ, tSrK, acc_s);

    if (kCausal) hk::fmha::mask_past_diagonal<kBlockN>(acc_s, tScS, n, first_row);

    copies_visible_to_wgmma();  // V[n] landed; every warp is done reading K[n]
    if (n + 1 < n_end) copy(gmem_copy, tKgK(_, _, _, n + 1), tKsK);
    cp_async_fence();

    // Online softmax: new running max, rescale what was accumulated under the old one.
    Tensor s_rc = make_tensor(acc_s.data(), hk::fmha90::acc_rowcol(acc_s.layout()));
    hk::fmha::online_softmax(s_rc, o_rc, row_max, row_sum, p.scale_log2);

    // P in the input precision, reused in place as the register A operand of P @ V.
    Tensor p_frag = make_fragment_like<Element>(acc_s);
    CUTE_UNROLL
    for (int i = 0; i < size(acc_s); ++i) p_frag(i) = Element(acc_s(i));
    Tensor tOrP = make_tensor(p_frag.data(), hk::fmha90::acc_as_operand_a(p_frag.layout()));
    wgmma</*kZeroInit=*/false, /*kRegA=*/true>(mma_o, tOrP, tOrVt, acc_o);
  }

  // ---- epilogue: divide by the row sums, round, store ---------------------------------------------
  hk::fmha::normalize_rows(o_rc, row_sum);
  Tensor tOgO = thr_o.partition_C(gO);
  CUTE_UNROLL
  for (int i = 0; i < size(acc_o); ++i) tOgO(i) = Element(acc_o(i));
#endif
}

constexpr int kSmemBytes = int(sizeof(typename T::SharedStorage));
}  // namespace hk_fmha_sm90
using namespace hk_fmha_sm90;

HK_EXPORT const char* hk_describe(void) {
  return "kernel=fmha_sm90;dtype=" HK_DTYPE_NAME ";head_dim=" HK_STR(HK_HEAD_DIM)
         ";tile=128x64;warps=8;schedule=cp.async-wgmma-ss-rs;cutlass=" HK_CUTLASS_VERSION;
}

HK_EXPORT int hk_fmha_plan(const void* q, const void* k, const void* v, void* o, int B, int Hq,
                           int Hkv, int Sq, int Skv, const int64_t* strides, float scale,
                           int causal, void** plan_out) {
  *plan_out = nullptr;
  int device = 0, major = 0;
  if (cudaError_t e = cudaGetDevice(&device)) return hk::from_cuda(e);
  if (cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) {
    return hk::from_cuda(e);
  }
  if (major != 9) return hk::from_cutlass(cutlass::Status::kErrorArchMismatch);  // wgmma: sm_90a
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
