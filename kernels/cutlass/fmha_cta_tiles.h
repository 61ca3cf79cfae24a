// What the two cp.async FMHA kernels (fmha_sm80.cu: mma.sync, fmha_sm90.cu: wgmma) set up alike
// before their MMAs: one CTA's global tiles of Q, K, V and O for its (batch, head), their homes in
// shared memory, and each thread's share of the 16-byte cp.async copies between the two. Traits T
// (fmha_sm80.h, fmha_sm90.h) name the tiles, the shared layouts and the copy; the MMAs, their
// register layouts and the pipeline's fences stay in each kernel.
#pragma once

#include "cute/tensor.hpp"
#include "fmha_common.h"

namespace hk::fmha {

// (gQ, gO, gK, gV): query tile m_block's [kBlockM, D] rows of Q and O for (batch, head), and
// every [kBlockN, D] tile of the K and V of the KV head it reads (GQA), as [kBlockN, D, n_blocks].
template <class T, class Element>
__device__ __forceinline__ auto gmem_tiles(Params<Element> const& p, int m_block, int head,
                                           int batch) {
  using namespace cute;
  constexpr int kHeadDim = T::kHeadDim;
  const int kv_head = head / p.group;
  auto rows = [](auto* base, int64_t row_stride, int len) {
    return make_tensor(make_gmem_ptr(base), make_shape(len, Int<kHeadDim>{}),
                       make_stride(row_stride, _1{}));
  };
  Tensor mQ = rows(p.q + batch * p.q_batch + head * p.q_head, p.q_row, p.seq_q);
  Tensor mK = rows(p.k + batch * p.k_batch + kv_head * p.k_head, p.k_row, p.seq_k);
  Tensor mV = rows(p.v + batch * p.v_batch + kv_head * p.v_head, p.v_row, p.seq_k);
  Tensor mO = rows(p.o + batch * p.o_batch + head * p.o_head, p.o_row, p.seq_q);
  auto q_tile = Shape<Int<T::kBlockM>, Int<kHeadDim>>{};
  auto kv_tile = Shape<Int<T::kBlockN>, Int<kHeadDim>>{};
  return make_tuple(local_tile(mQ, q_tile, make_coord(m_block, 0)),
                    local_tile(mO, q_tile, make_coord(m_block, 0)),
                    local_tile(mK, kv_tile, make_coord(_, 0)),
                    local_tile(mV, kv_tile, make_coord(_, 0)));
}

// (sQ, sK, sV, sVt): the shared tiles, V also as V^T (the B operand of P V) over the same bytes.
template <class T, class Storage>
__device__ __forceinline__ auto smem_tiles(Storage& smem) {
  using namespace cute;
  return make_tuple(make_tensor(make_smem_ptr(smem.q.data()), typename T::SmemLayoutQ{}),
                    make_tensor(make_smem_ptr(smem.k.data()), typename T::SmemLayoutKV{}),
                    make_tensor(make_smem_ptr(smem.v.data()), typename T::SmemLayoutKV{}),
                    make_tensor(make_smem_ptr(smem.v.data()), typename T::SmemLayoutVt{}));
}

// Thread tid's share of the global -> shared copies: (tQgQ, tQsQ, tKgK, tKsK, tVgV, tVsV), the K
// and V sources with the KV tile index last ([CPY, CPY_N, CPY_D, n_blocks]).
template <class T, class GQ, class SQ, class GK, class SK, class GV, class SV>
__device__ __forceinline__ auto copy_partitions(int tid, GQ const& gQ, SQ& sQ, GK const& gK,
                                                SK& sK, GV const& gV, SV& sV) {
  auto g_thr = typename T::GmemCopy{}.get_thread_slice(tid);
  return cute::make_tuple(g_thr.partition_S(gQ), g_thr.partition_D(sQ), g_thr.partition_S(gK),
                          g_thr.partition_D(sK), g_thr.partition_S(gV), g_thr.partition_D(sV));
}

// How many KV tiles query tile m_block reads: every one, or (causal) up to the one holding its
// last row's last key. seq_k is a multiple of kBlockN here (make_params checks it).
template <bool kCausal, class T, class Element>
__device__ __forceinline__ int kv_tiles(Params<Element> const& p, int m_block) {
  const int n_end = p.seq_k / T::kBlockN;
  if (!kCausal) return n_end;
  const int last_row = m_block * T::kBlockM + T::kBlockM - 1 + p.causal_offset;  // its last key
  return min(n_end, last_row / T::kBlockN + 1);
}

}  // namespace hk::fmha
