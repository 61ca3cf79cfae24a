// Store a 16-bit copy of a wgmma accumulator fragment 16 bytes per thread instead of 2.
//
// How: in a wgmma accumulator fragment the four lanes of a quad hold the same row, each two
// adjacent columns of every 8-column block (lane q: columns 2q, 2q+1). Four consecutive blocks
// form a 4x4 matrix of 4-byte pairs over the quad; transposing it with shuffles leaves lane q
// holding all 8 columns of one block, which it stores as one 16-byte vector, and a quad writes 64
// contiguous bytes of a row per instruction. No shared memory is used.
//
// Why: the GEMM's N-split tile filled its store queue with 2-byte stores (ncu on an H200,
// results/h200/README.md, session 54) and ran 1.11x faster with 16-byte ones (session 55;
// sm90_quad_store_epilogue.h, the same transpose inside CUTLASS's epilogue interface). The FMHA
// (fmha_sm90_ws.cu, HK_STORE16) stores its O tile the 2-byte way on the path from one work tile
// to the next. sm90_quad_store_epilogue.h keeps its own copy of the loop for now: editing it
// changes a source hash of the own CUTLASS GEMM tuner (gemm_tune.TUNE_SOURCES), which voids both
// GPUs' tune caches; it should call this function the next time that file changes anyway.
//
// Scope: 16-bit Element, `out` row-major with 16-byte-aligned rows and base (its column count a
// multiple of 8), the fragment's N share a multiple of 32 columns.
#pragma once

#include <cstdint>

#include "cute/tensor.hpp"

namespace hk {

// acc: the thread's accumulator fragment, ((2 columns, 2 row halves, N/8 blocks), MMA_M, MMA_N)
// as SM90 GMMA lays it out; coords: the identity tensor of out's (row, column) partitioned as the
// MMA's C for this thread; out: the global (rows, columns) tensor. Rows at or past `rows` are
// skipped. Every lane of the warp must call it (the shuffles).
template <class Element, class Acc, class Coords, class Out>
__device__ __forceinline__ void quad_store(Acc const& acc, Coords const& coords, Out& out,
                                           int rows) {
  using namespace cute;
  static_assert(sizeof(Element) == 2, "16-bit elements only: four lanes' pairs make 16 bytes");
  using Layout = typename Acc::layout_type;
  static_assert(is_static<Layout>::value, "accumulator layout must be static");
  using V = decltype(shape<0>(Layout{}));
  static_assert(rank(V{}) == 3, "expected a GMMA accumulator fragment");
  static_assert(size<0>(V{}) == 2 && size<1>(V{}) == 2, "expected a GMMA accumulator fragment");
  constexpr int kBlocks = size<2>(V{});
  static_assert(kBlocks % 4 == 0, "each warp group's N share must be a multiple of 32");
  const int q = threadIdx.x % 4;  // warps start at multiples of 32 threads: the lane's quad slot
  CUTE_UNROLL
  for (int mm = 0; mm < size<1>(acc); ++mm) {
    CUTE_UNROLL
    for (int nn = 0; nn < size<2>(acc); ++nn) {
      CUTE_UNROLL
      for (int r = 0; r < 2; ++r) {
        CUTE_UNROLL
        for (int g = 0; g < kBlocks / 4; ++g) {
          uint32_t pairs[4];  // this lane's two columns of blocks 4g .. 4g+3
          CUTE_UNROLL
          for (int b = 0; b < 4; ++b) {
            Element lo = Element(acc(make_coord(make_coord(0, r, 4 * g + b), mm, nn)));
            Element hi = Element(acc(make_coord(make_coord(1, r, 4 * g + b), mm, nn)));
            pairs[b] = uint32_t(lo.raw()) | (uint32_t(hi.raw()) << 16);
          }
          // Round s pairs lane q with lane p = q^s of its quad: q sends its pair of block p and
          // receives p's pair of block q. Lane-dependent indices are selects, not dynamic
          // register indexing (which would go through local memory).
          uint32_t row8[4] = {0, 0, 0, 0};
          CUTE_UNROLL
          for (int s = 0; s < 4; ++s) {
            const int other = q ^ s;
            uint32_t send = pairs[0];
            CUTE_UNROLL
            for (int b = 1; b < 4; ++b) send = other == b ? pairs[b] : send;
            const uint32_t got = s == 0 ? send : __shfl_xor_sync(0xffffffffu, send, s);
            CUTE_UNROLL
            for (int b = 0; b < 4; ++b) row8[b] = other == b ? got : row8[b];
          }
          // This lane's own pair of block 4g+q starts 2q columns into the block.
          auto rc = coords(make_coord(make_coord(0, r, 4 * g + q), mm, nn));
          const int row = get<0>(rc);
          const int col = get<1>(rc) - 2 * q;
          if (row < rows) {
            *reinterpret_cast<uint4*>(&out(row, col)) =
                make_uint4(row8[0], row8[1], row8[2], row8[3]);
          }
        }
      }
    }
  }
}

}  // namespace hk
