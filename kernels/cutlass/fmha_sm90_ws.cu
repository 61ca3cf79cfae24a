// FMHA forward on CuTe for Hopper, warp-specialized in FlashAttention-3's structure (sm_90a
// only): a producer warpgroup whose one elected thread loads Q once and K, V tile by tile with
// TMA into HK_STAGES-deep pipelines (mbarriers, cutlass::PipelineTmaAsync), and two or three
// consumer warpgroups of 64 query rows each that compute S = Q K^T (SS wgmma), the online
// softmax, and O += P V (RS wgmma, P from the S registers). Features switch on by -D, so that
// each rung of the ladder measures one of them:
//
//   HK_PINGPONG  1: the consumer warpgroups take turns issuing their wgmmas (a named-barrier
//                token passed after each issue), so one's softmax runs while another's
//                tensor-core work does (FA3's inter-warpgroup ping-pong)
//   HK_OVERLAP   1: within a warpgroup, the next tile's Q K^T and this tile's P V are issued
//                together and the softmax of the scores runs while P V is still in flight;
//                the output is rescaled after it lands (FA3's intra-warpgroup overlap)
//   HK_PERSISTENT 1: one CTA per SM loops over the tiles, so the next tile's loads overlap
//                this tile's last P V and its stores; without HK_DYNAMIC only without a causal
//                mask (a static share each); 0: one CTA per tile
//   HK_STORE16   1: the O tile leaves the registers 16 bytes per thread (quad_store.h: a quad
//                transposes its pairs with shuffles) instead of 2 bytes per element; the stores
//                sit between one work tile and the next (0: 2-byte stores)
//   HK_DYNAMIC   1 (with HK_PERSISTENT; fa3's default since session 62): persistent for
//                causal too. Causal tiles differ in
//                length, so a static share per CTA leaves SMs idle at the end; here each CTA's
//                producer takes its next tile from a global atomic counter when it starts the
//                tile before, in the order of tile_of (longest first within a head), and hands
//                it to the consumers through shared memory with Q's barrier. The next tile's
//                Q, K and V then load under this tile's last P V and its stores, which one CTA
//                per tile (the causal path without it) pays once per tile
//   HK_DTYPE     0 bf16, 1 fp16
//   HK_HEAD_DIM  64, 128 or 256
//   HK_BLOCK_M   query rows per tile: 128 (two consumer warpgroups) or 192 (three, FA3's tile at
//                head_dim 64)
//   HK_BLOCK_N   keys per KV tile, a multiple of 16 (fmha.py's ws_tile: 128 at head_dim <= 128
//                and 64 at 256, or FA3's own sizes)
//
// A tile is HK_BLOCK_M query rows of one (batch, head), worked on by one CTA of 128 threads per
// warpgroup; causal tiles start from the last query tile (it sees the most keys) and stop at
// the diagonal. Any q_len and kv_len: TMA fills rows past the end of Q, K or V with zeros, the
// scores of keys past kv_len are masked in the last KV tile, and rows past q_len are not
// stored. Causal needs q_len <= kv_len. C ABI as fmha_sm90.cu.
// wgmma N not a multiple of 64 (FA3's 176- and 80-key tiles): CuTe's op selectors offer those
// sizes only with its extended shapes (else they tile N with 16-wide wgmmas); a large header,
// so only where needed.
#if defined(HK_BLOCK_N) && HK_BLOCK_N % 64 != 0
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#endif
#include "common.h"
#include "cutlass/arch/reg_reconfig.h"
#include "fmha_common.h"
#include "fmha_sm90_ws.h"
#include "quad_store.h"

#ifndef HK_DTYPE
#define HK_DTYPE 0
#endif
#ifndef HK_HEAD_DIM
#define HK_HEAD_DIM 128
#endif
#ifndef HK_BLOCK_M
#define HK_BLOCK_M 128
#endif
#ifndef HK_BLOCK_N
#define HK_BLOCK_N 128
#endif
#if HK_BLOCK_M == 192  // warps per CTA for hk_describe: the producer's four and four per consumer
#define HK_WARPS 16
#else
#define HK_WARPS 12
#endif
#ifndef HK_PINGPONG
#define HK_PINGPONG 1
#endif
#ifndef HK_OVERLAP
#define HK_OVERLAP 1
#endif
#ifndef HK_PERSISTENT
#define HK_PERSISTENT 1
#endif
#ifndef HK_STORE16
#define HK_STORE16 0
#endif
#ifndef HK_DYNAMIC
#define HK_DYNAMIC 0
#endif

namespace hk_fmha_sm90_ws {
using namespace cute;
#if HK_DTYPE == 0
using Element = cutlass::bfloat16_t;
#define HK_DTYPE_NAME "bf16"
#else
using Element = cutlass::half_t;
#define HK_DTYPE_NAME "fp16"
#endif
#ifndef HK_STAGES
#define HK_STAGES 2
#endif
using T = hk::fmha90ws::Traits<Element, HK_HEAD_DIM, HK_BLOCK_M, HK_BLOCK_N, HK_STAGES>;
using Params = hk::fmha90ws::Params<T>;
using Pipeline = typename T::Pipeline;
using PipelineState = typename Pipeline::PipelineState;

// Issue acc (+)= A @ B over every k block as one committed wgmma batch; nothing waits here.
// kZeroInit: the first k block overwrites acc. The caller waits (warpgroup_wait<N>) and then
// fences the operands again, so the compiler keeps them live until the wgmma has read them.
template <bool kZeroInit, class Mma, class FA, class FB, class Acc>
__device__ __forceinline__ void wgmma_issue(Mma& mma, FA const& a, FB const& b, Acc& acc) {
  warpgroup_fence_operand(acc);
  warpgroup_arrive();
  if constexpr (kZeroInit) mma.accumulate_ = GMMA::ScaleOut::Zero;
  CUTE_UNROLL
  for (int k = 0; k < size<2>(a); ++k) {
    cute::gemm(mma, a(_, _, k), b(_, _, k), acc);
    mma.accumulate_ = GMMA::ScaleOut::One;
  }
  warpgroup_commit_batch();
  warpgroup_fence_operand(acc);
}

// The ping-pong token: named barrier 1 + w belongs to consumer warpgroup w; a warpgroup waits
// on its own before issuing and hands the token to the next one's after, round the two or
// three (256 threads each: the waiting warpgroup's 128 plus the passing one's 128 arrivals).
__device__ __forceinline__ void turn_wait(int wg) {
  if constexpr (HK_PINGPONG) cutlass::arch::NamedBarrier::sync(256, 1 + wg);
}
__device__ __forceinline__ void turn_pass(int wg) {
  if constexpr (HK_PINGPONG) {
    cutlass::arch::NamedBarrier::arrive(256, 1 + (wg + 1 == T::kConsumers ? 0 : wg + 1));
  }
}

// HK_DYNAMIC's tile id goes from the producer to the consumers through shared memory beside Q's
// mbarrier, whose arrive releases and whose wait acquires; CUTLASS's asm for them names no
// memory clobber, so this keeps the compiler from moving the access across them.
__device__ __forceinline__ void compiler_fence() { asm volatile("" ::: "memory"); }

// Tile t of the grid-stride loop as (query tile, head, batch). Query tiles vary fastest, so the
// CTAs working at one time read the K and V of one or two heads, which L2 then holds. With
// heads fastest, 132 CTAs read 33 KV heads' K and V at once (8 MB each at 16k tokens, D 128:
// far past L2), and the H200 measured 0.955x cuDNN at D 128, 16k tokens, where one CTA per
// tile in this order had measured 0.992x. Causal tiles run from the last query tile of a head down
// (the last sees the most keys).
struct Tile {
  int m_block, head, batch;
};
template <bool kCausal>
__device__ __forceinline__ Tile tile_of(int t, Params const& p) {
  const int m = t % p.m_blocks, rest = t / p.m_blocks;
  return {kCausal ? p.m_blocks - 1 - m : m, rest % p.q_heads, rest / p.q_heads};
}

template <bool kCausal>
__device__ __forceinline__ int kv_tiles(int m_block, Params const& p) {
  int n_end = (p.seq_k + T::kBlockN - 1) / T::kBlockN;  // the last one may be partial
  if (kCausal) {
    n_end = min(n_end, (m_block * T::kBlockM + T::kBlockM - 1 + p.causal_offset) / T::kBlockN + 1);
  }
  return n_end;
}

// Each CTA loops over tiles blockIdx.x, blockIdx.x + gridDim.x, ...: persistent when the grid
// is one CTA per SM (HK_PERSISTENT, the default), one tile per CTA otherwise. Persistent, the
// producer loads the next tile's Q, K and V while the consumers finish this tile's last P V and
// store O, so no tile pays the pipeline's fill and drain alone.
template <bool kCausal>
__global__ void __launch_bounds__(T::kThreads, 1) fmha_ws(const __grid_constant__ Params p) {
#if defined(__CUDA_ARCH__) && defined(CUTE_ARCH_MMA_SM90A_ENABLED)
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN, kHeadDim = T::kHeadDim;
  extern __shared__ __align__(1024) char smem_raw[];
  auto& smem = *reinterpret_cast<typename T::SharedStorage*>(smem_raw);
  const int warp_group = cutlass::canonical_warp_group_idx();
  const int tiles = p.m_blocks * p.q_heads * p.batch;

  // ---- barriers: Q full (the producer's expect-tx) and empty (every consumer thread); the two
  // K / V pipelines ------------------------------------------------------------------------------
  typename Pipeline::Params pp;
  pp.role = warp_group == 0 ? Pipeline::ThreadCategory::Producer
                            : Pipeline::ThreadCategory::Consumer;
  pp.is_leader = threadIdx.x == 0;
  pp.num_consumers = T::kConsumerThreads;
  pp.transaction_bytes = T::kKVBytes;
  if (threadIdx.x == 0) {
    smem.q_full.init(1);
    smem.q_empty.init(T::kConsumerThreads);
  }
  Pipeline pipe_k(smem.pipe_k, pp, Shape<_1, _1, _1>{});
  Pipeline pipe_v(smem.pipe_v, pp, Shape<_1, _1, _1>{});
  cutlass::arch::fence_barrier_init();
  __syncthreads();

  Tensor sQ = make_tensor(make_smem_ptr(smem.q.data()), typename T::SmemLayoutQ{});
  Tensor sK = make_tensor(make_smem_ptr(smem.k.data()), typename T::SmemLayoutKV{});
  Tensor sV = make_tensor(make_smem_ptr(smem.v.data()), typename T::SmemLayoutKV{});
  Tensor sVt = make_tensor(make_smem_ptr(smem.v.data()), typename T::SmemLayoutVt{});

  if (warp_group == 0) {
    // ---- producer: one thread issues every TMA load; the rest of the warpgroup idles --------
    cutlass::arch::warpgroup_reg_dealloc<T::kProducerRegs>();
    if (threadIdx.x == 0) {
      cute::prefetch_tma_descriptor(p.tma_q.get_tma_descriptor());
      cute::prefetch_tma_descriptor(p.tma_k.get_tma_descriptor());
      cute::prefetch_tma_descriptor(p.tma_v.get_tma_descriptor());
      auto tile_q = Shape<Int<kBlockM>, Int<kHeadDim>>{};
      auto tile_kv = Shape<Int<kBlockN>, Int<kHeadDim>>{};
      Tensor mQ = p.tma_q.get_tma_tensor(make_shape(p.seq_q, kHeadDim, p.q_heads, p.batch));
      Tensor mK = p.tma_k.get_tma_tensor(make_shape(p.seq_k, kHeadDim, p.kv_heads, p.batch));
      Tensor mV = p.tma_v.get_tma_tensor(make_shape(p.seq_k, kHeadDim, p.kv_heads, p.batch));
      PipelineState write = cutlass::make_producer_start_state<Pipeline>();
      int iter = 0;
#if HK_DYNAMIC
      // the first gridDim.x tiles by blockIdx, the rest in the order the CTAs come for them
      for (int t = blockIdx.x; t < tiles; t = gridDim.x + atomicAdd(p.counters, 1), ++iter) {
#else
      for (int t = blockIdx.x; t < tiles; t += gridDim.x, ++iter) {
#endif
        const Tile tile = tile_of<kCausal>(t, p);
        const int kv_head = tile.head / p.group;
        Tensor gQ = local_tile(mQ(_, _, tile.head, tile.batch), tile_q, make_coord(tile.m_block, 0));
        Tensor gK = local_tile(mK(_, _, kv_head, tile.batch), tile_kv, make_coord(_, 0));  // (N, D, n)
        Tensor gV = local_tile(mV(_, _, kv_head, tile.batch), tile_kv, make_coord(_, 0));
        auto [tQgQ, tQsQ] = tma_partition(p.tma_q, Int<0>{}, Layout<_1>{},
                                          group_modes<0, 2>(sQ), group_modes<0, 2>(gQ));
        auto [tKgK, tKsK] = tma_partition(p.tma_k, Int<0>{}, Layout<_1>{},
                                          group_modes<0, 2>(sK), group_modes<0, 2>(gK));
        auto [tVgV, tVsV] = tma_partition(p.tma_v, Int<0>{}, Layout<_1>{},
                                          group_modes<0, 2>(sV), group_modes<0, 2>(gV));
        if (iter > 0) smem.q_empty.wait((iter - 1) & 1);  // the previous tile's Q is read
#if HK_DYNAMIC
        compiler_fence();  // the store below neither rises above the wait ...
        smem.tile_id = t;  // the consumers read it when q_full completes
        compiler_fence();  // ... nor sinks below the arrive
#endif
        smem.q_full.arrive_and_expect_tx(T::kQBytes);
        copy(p.tma_q.with(reinterpret_cast<uint64_t&>(smem.q_full), 0), tQgQ, tQsQ);
        const int n_end = kv_tiles<kCausal>(tile.m_block, p);
        for (int n = 0; n < n_end; ++n) {  // K before V: the consumers need K[n] first
          pipe_k.producer_acquire(write);
          copy(p.tma_k.with(*pipe_k.producer_get_barrier(write), 0), tKgK(_, n),
               tKsK(_, write.index()));
          pipe_v.producer_acquire(write);
          copy(p.tma_v.with(*pipe_v.producer_get_barrier(write), 0), tVgV(_, n),
               tVsV(_, write.index()));
          ++write;
        }
      }
#if HK_DYNAMIC
      // None left: wake the consumers with no tile, then count this CTA out. The last one out
      // finds every CTA past its last atomicAdd, and sets the counters back for the next launch.
      if (iter > 0) smem.q_empty.wait((iter - 1) & 1);
      compiler_fence();
      smem.tile_id = tiles;
      compiler_fence();
      smem.q_full.arrive();
      __threadfence();  // this CTA's last take from counters[0] before its count in counters[1]
      if (atomicAdd(p.counters + 1, 1) == int(gridDim.x) - 1) {
        __threadfence();
        p.counters[0] = 0;
        p.counters[1] = 0;
      }
#endif
    }
    return;
  }

  // ---- consumers: two or three warpgroups, rows 64 * wg .. 64 * wg + 63 of each query tile ---
  cutlass::arch::warpgroup_reg_alloc<T::kConsumerRegs>();
  const int ctid = threadIdx.x - 128;
  const int wg = warp_group - 1;
  typename T::TiledMmaS mma_s;
  typename T::TiledMmaO mma_o;
  auto thr_s = mma_s.get_thread_slice(ctid);
  auto thr_o = mma_o.get_thread_slice(ctid);
  Tensor tSrQ = thr_s.make_fragment_A(thr_s.partition_A(sQ));    // [MMA, MMA_M, MMA_D]
  Tensor tSrK = thr_s.make_fragment_B(thr_s.partition_B(sK));    // [MMA, MMA_N, MMA_D, stage]
  Tensor tOrVt = thr_o.make_fragment_B(thr_o.partition_B(sVt));  // [MMA, MMA_D, MMA_N, stage]
  Tensor tScS = thr_s.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));

  if constexpr (HK_PINGPONG) {
    if (wg == 0) cutlass::arch::NamedBarrier::arrive(256, 1);  // warpgroup 0 issues first
  }
  PipelineState read_k, read_v;

  int iter = 0;
#if HK_DYNAMIC
  for (;; ++iter) {
    smem.q_full.wait(iter & 1);  // this tile's Q has landed, and its id is in shared memory
    compiler_fence();
    const int t = smem.tile_id;
    if (t >= tiles) break;
#else
  for (int t = blockIdx.x; t < tiles; t += gridDim.x, ++iter) {
#endif
    const Tile tile = tile_of<kCausal>(t, p);
    const int n_end = kv_tiles<kCausal>(tile.m_block, p);
    Tensor acc_o = partition_fragment_C(mma_o, Shape<Int<kBlockM>, Int<kHeadDim>>{});
    clear(acc_o);
    Tensor o_rc = make_tensor(acc_o.data(), hk::fmha90::acc_rowcol(acc_o.layout()));
    constexpr int kRows = decltype(size<0>(o_rc))::value;
    float row_max[kRows], row_sum[kRows], correction[kRows];
    hk::fmha::reset_rows(row_max, row_sum);

    // Keys past the diagonal (causal) or past kv_len (TMA's zeros) only exist in the last
    // tiles: mask those, skip the test elsewhere. Causal needs no kv_len test: for every row
    // below q_len the diagonal lies before kv_len (rows past q_len are not stored).
    const int first_row = tile.m_block * kBlockM + p.causal_offset;
    auto mask = [&](auto& acc_s, int n) {
      if constexpr (kCausal) {
        hk::fmha::mask_past_diagonal<kBlockN>(acc_s, tScS, n, first_row);
      } else if ((n + 1) * kBlockN > p.seq_k) {
        CUTE_UNROLL
        for (int i = 0; i < size(acc_s); ++i) {
          if (n * kBlockN + get<1>(tScS(i)) >= p.seq_k) acc_s(i) = -INFINITY;
        }
      }
    };

    // O += P V on the next V tile, alone: issue, wait, release the V stage.
    auto p_times_v = [&](auto& tOrP) {
      pipe_v.consumer_wait(read_v);
      turn_wait(wg);
      warpgroup_fence_operand(tOrP);
      wgmma_issue<false>(mma_o, tOrP, tOrVt(_, _, _, read_v.index()), acc_o);
      turn_pass(wg);
      warpgroup_wait<0>();
      warpgroup_fence_operand(acc_o);
      warpgroup_fence_operand(tOrP);
      pipe_v.consumer_release(read_v);
      ++read_v;
    };

#if !HK_DYNAMIC
    smem.q_full.wait(iter & 1);
#endif

#if HK_OVERLAP
    // Tile 0's scores alone, then per tile n >= 1: issue S[n] = Q K[n]^T, bring O (through
    // P[n-2]) to S[n-1]'s running max while S[n] runs, issue O += P[n-1] V[n-1]; S[n]'s softmax
    // runs while P V is in flight. FA3's order: the rescale sits under the Q K^T wgmma, not
    // between P V's landing and the next issue. What ptxas (CUDA 13.0) makes of it: the wait
    // for P V lands right after the row max (WARPGROUP.DEPBAR.LE gsb0, 0x0 before the first
    // MUFU.EX2), so only the max overlaps P V, not the exponentials; the Gluon FMHA's SASS
    // shows the same (0-2 MUFU between its two waits). Not the cause, by experiment: the V
    // release, the max's shuffles, the P conversion after the wait (each removed, the wait stayed
    // put); a double-buffered P spilled and serialized the wgmmas.
    Tensor acc_s = partition_fragment_C(mma_s, Shape<Int<kBlockM>, Int<kBlockN>>{});
    pipe_k.consumer_wait(read_k);
    turn_wait(wg);
    wgmma_issue<true>(mma_s, tSrQ, tSrK(_, _, _, read_k.index()), acc_s);
    turn_pass(wg);
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc_s);
    pipe_k.consumer_release(read_k);
    ++read_k;
    mask(acc_s, 0);
    {
      Tensor s_rc = make_tensor(acc_s.data(), hk::fmha90::acc_rowcol(acc_s.layout()));
      hk::fmha::softmax_scores(s_rc, row_max, row_sum, correction, p.scale_log2);
    }
    Tensor p_frag = make_fragment_like<Element>(acc_s);
    CUTE_UNROLL
    for (int i = 0; i < size(acc_s); ++i) p_frag(i) = Element(acc_s(i));
    Tensor tOrP = make_tensor(p_frag.data(), hk::fmha90::acc_as_operand_a(p_frag.layout()));
    for (int n = 1; n < n_end; ++n) {
      pipe_k.consumer_wait(read_k);
      turn_wait(wg);
      wgmma_issue<true>(mma_s, tSrQ, tSrK(_, _, _, read_k.index()), acc_s);
      hk::fmha::rescale_rows(o_rc, correction);  // S[n-1]'s correction (n = 1: O is 0)
      pipe_v.consumer_wait(read_v);
      warpgroup_fence_operand(tOrP);
      wgmma_issue<false>(mma_o, tOrP, tOrVt(_, _, _, read_v.index()), acc_o);
      turn_pass(wg);
      warpgroup_wait<1>();  // S[n] has landed; P V may still run
      warpgroup_fence_operand(acc_s);
      pipe_k.consumer_release(read_k);
      ++read_k;
      mask(acc_s, n);
      Tensor s_rc = make_tensor(acc_s.data(), hk::fmha90::acc_rowcol(acc_s.layout()));
      hk::fmha::softmax_scores(s_rc, row_max, row_sum, correction, p.scale_log2);
      warpgroup_wait<0>();
      warpgroup_fence_operand(acc_o);
      warpgroup_fence_operand(tOrP);
      pipe_v.consumer_release(read_v);
      ++read_v;
      CUTE_UNROLL
      for (int i = 0; i < size(acc_s); ++i) p_frag(i) = Element(acc_s(i));
    }
    smem.q_empty.arrive();  // every Q K^T of this tile has landed: the producer may load the next Q
    hk::fmha::rescale_rows(o_rc, correction);  // the last tile's correction, before its P V
    p_times_v(tOrP);
#else
    // One tile at a time: S = Q K^T, wait, softmax (O rescaled at once), O += P V, wait.
    for (int n = 0; n < n_end; ++n) {
      Tensor acc_s = partition_fragment_C(mma_s, Shape<Int<kBlockM>, Int<kBlockN>>{});
      pipe_k.consumer_wait(read_k);
      turn_wait(wg);
      wgmma_issue<true>(mma_s, tSrQ, tSrK(_, _, _, read_k.index()), acc_s);
      turn_pass(wg);
      warpgroup_wait<0>();
      warpgroup_fence_operand(acc_s);
      pipe_k.consumer_release(read_k);
      ++read_k;
      if (n + 1 == n_end) smem.q_empty.arrive();  // the tile's last Q K^T has landed
      mask(acc_s, n);
      Tensor s_rc = make_tensor(acc_s.data(), hk::fmha90::acc_rowcol(acc_s.layout()));
      hk::fmha::online_softmax(s_rc, o_rc, row_max, row_sum, p.scale_log2);
      Tensor p_frag = make_fragment_like<Element>(acc_s);
      CUTE_UNROLL
      for (int i = 0; i < size(acc_s); ++i) p_frag(i) = Element(acc_s(i));
      Tensor tOrP = make_tensor(p_frag.data(), hk::fmha90::acc_as_operand_a(p_frag.layout()));
      p_times_v(tOrP);
    }
#endif

    // ---- epilogue: divide by the row sums, round, store (the next tile's loads are in flight)
    hk::fmha::normalize_rows(o_rc, row_sum);
    Tensor mO = make_tensor(make_gmem_ptr(p.o + tile.batch * p.o_batch + tile.head * p.o_head),
                            make_shape(p.seq_q, Int<kHeadDim>{}), make_stride(p.o_row, _1{}));
#if HK_STORE16
    // the tile's (row, column) in mO per accumulator, as the MMA partitions C
    Tensor cO = local_tile(make_identity_tensor(make_shape(p.seq_q, Int<kHeadDim>{})),
                           Shape<Int<kBlockM>, Int<kHeadDim>>{}, make_coord(tile.m_block, 0));
    hk::quad_store<Element>(acc_o, thr_o.partition_C(cO), mO, p.seq_q);
#else
    Tensor gO = local_tile(mO, Shape<Int<kBlockM>, Int<kHeadDim>>{}, make_coord(tile.m_block, 0));
    Tensor tOgO = thr_o.partition_C(gO);
    Tensor tOcO = thr_o.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));
    const int rows_left = p.seq_q - tile.m_block * kBlockM;  // the last tile may be partial
    CUTE_UNROLL
    for (int i = 0; i < size(acc_o); ++i) {
      if (get<0>(tOcO(i)) < rows_left) tOgO(i) = Element(acc_o(i));
    }
#endif
  }
#endif
}

constexpr int kSmemBytes = int(sizeof(typename T::SharedStorage));

// Q, K or V as T's (row, head_dim, head, batch) global tensor.
inline auto gmem(const void* base, int rows, int heads, int batch, const int64_t* strides) {
  return make_tensor(make_gmem_ptr(static_cast<Element const*>(base)),
                     make_shape(int32_t(rows), int32_t(T::kHeadDim), int32_t(heads), int32_t(batch)),
                     make_stride(strides[2], _1{}, strides[1], strides[0]));
}
}  // namespace hk_fmha_sm90_ws
using namespace hk_fmha_sm90_ws;

HK_EXPORT const char* hk_describe(void) {
  return "kernel=fmha_sm90_ws;dtype=" HK_DTYPE_NAME ";head_dim=" HK_STR(HK_HEAD_DIM)
         ";tile=" HK_STR(HK_BLOCK_M) "x" HK_STR(HK_BLOCK_N) ";warps=" HK_STR(HK_WARPS)
         ";schedule=tma-ws"
#if HK_PINGPONG
         "-pingpong"
#endif
#if HK_OVERLAP
         "-overlap"
#endif
#if HK_PERSISTENT && HK_DYNAMIC
         "-persistent"
#elif HK_PERSISTENT
         "-persistent(non-causal)"
#endif
#if HK_STORE16
         ";epilogue=16-byte-stores"
#endif
#if HK_DYNAMIC
         ";tiles=atomic-counter"
#endif
#if HK_EXP_EMU > 0
         ";exp2=1-in-" HK_STR(HK_EXP_EMU) "-on-fma"
#endif
         ";stages=" HK_STR(HK_STAGES) ";cutlass=" HK_CUTLASS_VERSION;
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
  // The same checks as the cp.async kernels (TMA needs the same 16-byte alignment of base
  // pointers and strides) but for the tiles: TMA's zero fill and the masks take partial ones.
  // Their Params carry the strides and scale this plan uses.
  hk::fmha::Params<Element> checked;
  if (int rc = hk::fmha::make_params(checked, q, k, v, o, B, Hq, Hkv, Sq, Skv, strides, scale,
                                     causal, 1, 1)) {
    return rc;
  }
  Params p;
  p.tma_q = make_tma_copy(SM90_TMA_LOAD{}, gmem(q, Sq, Hq, B, strides + 0),
                          typename T::SmemLayoutQ{}, Shape<Int<T::kBlockM>, Int<T::kHeadDim>>{},
                          _1{});
  p.tma_k = make_tma_copy(SM90_TMA_LOAD{}, gmem(k, Skv, Hkv, B, strides + 3),
                          take<0, 2>(typename T::SmemLayoutKV{}),
                          Shape<Int<T::kBlockN>, Int<T::kHeadDim>>{}, _1{});
  p.tma_v = make_tma_copy(SM90_TMA_LOAD{}, gmem(v, Skv, Hkv, B, strides + 6),
                          take<0, 2>(typename T::SmemLayoutKV{}),
                          Shape<Int<T::kBlockN>, Int<T::kHeadDim>>{}, _1{});
  p.o = static_cast<Element*>(o);
  p.o_batch = strides[9];
  p.o_head = strides[10];
  p.o_row = strides[11];
  p.batch = B;
  p.q_heads = Hq;
  p.kv_heads = Hkv;
  p.group = checked.group;
  p.seq_q = Sq;
  p.seq_k = Skv;
  p.m_blocks = (Sq + T::kBlockM - 1) / T::kBlockM;
  p.causal_offset = checked.causal_offset;
  p.scale_log2 = checked.scale_log2;
  int tiles = p.m_blocks * Hq * B, sms = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) {
    return hk::from_cuda(e);
  }
  // Causal tiles differ in length (1 to all KV tiles): a static share per persistent CTA leaves
  // some SMs idle at the end, where the hardware's block scheduler hands the next tile to
  // whichever SM frees first (H100, head_dim 256, 16k tokens causal: 526 TFLOP/s persistent,
  // 596 one CTA per tile). So causal launches one CTA per tile, the loop then running once,
  // unless HK_DYNAMIC hands the tiles out as the CTAs free up.
  const bool persistent = HK_PERSISTENT && (!causal || HK_DYNAMIC);
  const dim3 grid = dim3(persistent ? std::min(tiles, sms) : tiles);
  p.counters = nullptr;  // HK_DYNAMIC: hk_fmha_bind_workspace sets it before the first run
  return hk::fmha::finish_plan<Params>(p, grid, causal != 0, fmha_ws<false>, fmha_ws<true>,
                                       kSmemBytes, plan_out);
}

// HK_DYNAMIC's two int counters, zeroed, owned by the caller (torch's allocator: freeing them
// does not synchronize the device as cudaFree would) and alive as long as the plan. Bytes
// needed: hk_fmha_workspace_bytes(); 0 for a library without the tile counter.
HK_EXPORT int hk_fmha_workspace_bytes(void) { return HK_DYNAMIC ? int(2 * sizeof(int)) : 0; }

HK_EXPORT int hk_fmha_bind_workspace(void* plan, void* workspace) {
  if (reinterpret_cast<uintptr_t>(workspace) % alignof(int)) {
    return hk::from_cutlass(cutlass::Status::kErrorMisalignedOperand);
  }
  static_cast<hk::fmha::Plan<Params>*>(plan)->params.counters = static_cast<int*>(workspace);
  return 0;
}

HK_EXPORT int hk_fmha_run(void* plan, void* stream) {
  if (HK_DYNAMIC && !static_cast<hk::fmha::Plan<Params>*>(plan)->params.counters) {
    return hk::from_cutlass(cutlass::Status::kErrorWorkspaceNull);  // bind the counters first
  }
  return hk::fmha::launch<Params>(plan, stream, fmha_ws<false>, fmha_ws<true>,
                                  T::kThreads, kSmemBytes);
}

HK_EXPORT void hk_fmha_destroy(void* plan) { hk::fmha::destroy<Params>(plan); }

HK_EXPORT const char* hk_status_string(int code) { return hk::status_string(code); }
