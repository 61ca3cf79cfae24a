// Tile shapes, shared-memory layouts, TMA types and the pipeline of the warp-specialized CuTe
// SM90 FMHA forward (fmha_sm90_ws.cu): the FlashAttention-3 structure. One producer warpgroup
// (one thread issues TMA loads of Q once and of K and V through a pipeline each) and two or
// three consumer warpgroups (64 query rows each of a 128- or 192-row tile) that run Q K^T as an
// SS wgmma and P V as an RS wgmma with P straight from the S accumulator (fmha_sm90.h's
// conversions).
#pragma once

#include "cute/atom/copy_traits_sm90_tma.hpp"
#include "cute/tensor.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/pipeline/pipeline.hpp"
#include "fmha_sm90.h"

namespace hk::fmha90ws {
using namespace cute;

// Global Q, K, V as (row, head_dim, head, batch): TMA walks rows of one (batch, head) with
// the head and batch as extra coordinates, so one descriptor serves every CTA.
using GmemShape = Shape<int32_t, int32_t, int32_t, int32_t>;
using GmemStride = Stride<int64_t, _1, int64_t, int64_t>;

template <class Element_, int kHeadDim_, int kBlockM_, int kBlockN_, int kStages_ = 2>
struct Traits {
  using Element = Element_;
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;  // 64 query rows (wgmma's M) per consumer warpgroup
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kStages = kStages_;
  static constexpr int kConsumers = kBlockM / 64;  // two, or three (FA3's 192-row tiles at D 64)
  static constexpr int kConsumerThreads = 128 * kConsumers;
  static constexpr int kThreads = 128 + kConsumerThreads;  // producer warpgroup first
  // setmaxnreg: the producer needs few registers, the consumers' accumulators many; the
  // warpgroups' totals must fit the SM's 64K (24 * 128 + 240 * 256 = 64,512 with two consumers,
  // 24 * 128 + 160 * 384 = 64,512 with three; setmaxnreg takes multiples of 8).
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = kConsumers == 2 ? 240 : 160;
  static_assert(kHeadDim % 64 == 0 && kHeadDim <= 256);
  static_assert(kConsumers == 2 || kConsumers == 3);
  // three consumers at 160 registers hold a 64-row O accumulator of head_dim 64 only
  static_assert(kConsumers == 2 || kHeadDim == 64);
  static_assert(kStages >= 2);  // one stage leaves the producer nothing to load ahead
  // Q K^T's N steps by 8 and P V's K by 16; the swizzle atom is 8 rows: 16 covers all three.
  static_assert(kBlockN % 16 == 0 && kBlockN <= 256);

  using Base = hk::fmha90::Traits<Element, kHeadDim, kBlockM, kBlockN>;
  using TiledMmaS = typename Base::TiledMmaS;
  using TiledMmaO = typename Base::TiledMmaO;

  using SmemAtom = GMMA::Layout_K_SW128_Atom<Element>;
  using SmemLayoutQ = decltype(tile_to_shape(SmemAtom{}, Shape<Int<kBlockM>, Int<kHeadDim>>{}));
  using SmemLayoutKV = decltype(tile_to_shape(
      SmemAtom{}, Shape<Int<kBlockN>, Int<kHeadDim>, Int<kStages>>{}));
  // V^T per stage over V's storage: Vt(d, j, s) = V(j, d, s), the MN-major B operand of P V.
  using SmemLayoutVt = decltype(composition(
      SmemLayoutKV{}, make_ordered_layout(Shape<Int<kHeadDim>, Int<kBlockN>, Int<kStages>>{},
                                          Step<_2, _1, _3>{})));

  using GmemTensor = decltype(make_tensor(make_gmem_ptr(static_cast<Element const*>(nullptr)),
                                          GmemShape{}, GmemStride{}));
  using TmaQ = decltype(make_tma_copy(SM90_TMA_LOAD{}, GmemTensor{}, SmemLayoutQ{},
                                      Shape<Int<kBlockM>, Int<kHeadDim>>{}, _1{}));
  using TmaKV = decltype(make_tma_copy(SM90_TMA_LOAD{}, GmemTensor{},
                                       take<0, 2>(SmemLayoutKV{}),
                                       Shape<Int<kBlockN>, Int<kHeadDim>>{}, _1{}));
  static constexpr uint32_t kQBytes = kBlockM * kHeadDim * sizeof(Element);
  static constexpr uint32_t kKVBytes = kBlockN * kHeadDim * sizeof(Element);

  using Pipeline = cutlass::PipelineTmaAsync<kStages>;

  struct SharedStorage {
    cute::array_aligned<Element, cosize_v<SmemLayoutQ>, 1024> q;
    cute::array_aligned<Element, cosize_v<SmemLayoutKV>, 1024> k;
    cute::array_aligned<Element, cosize_v<SmemLayoutKV>, 1024> v;
    typename Pipeline::SharedStorage pipe_k;
    typename Pipeline::SharedStorage pipe_v;
    cutlass::arch::ClusterTransactionBarrier q_full;  // Q of this tile landed (TMA bytes)
    cutlass::arch::ClusterBarrier q_empty;  // every consumer thread is done reading Q
    int tile_id;  // HK_DYNAMIC: the tile whose Q q_full announces (>= tiles: none left)
  };
};

// The kernel's parameters: TMA descriptors for Q, K, V (built on the host), O by pointer.
template <class T>
struct Params {
  typename T::TmaQ tma_q;
  typename T::TmaKV tma_k;
  typename T::TmaKV tma_v;
  typename T::Element* o;
  int64_t o_batch, o_head, o_row;
  int batch, q_heads, kv_heads, group, seq_q, seq_k;
  int m_blocks;  // query tiles per (batch, head); tiles = m_blocks * q_heads * batch
  int causal_offset;  // seq_k - seq_q: bottom-right aligned mask keeps key j <= i + offset
  float scale_log2;   // softmax scale * log2(e)
  // HK_DYNAMIC: [0] tiles handed out past the first gridDim.x, [1] CTAs done; the last CTA
  // out sets both back to 0, so each launch finds them at 0 (one launch at a time per plan).
  // The caller's zeroed memory (hk_fmha_bind_workspace), not the library's.
  int* counters;
};

}  // namespace hk::fmha90ws
