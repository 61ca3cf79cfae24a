// Tile shapes, shared-memory layouts and register-layout conversions of the CuTe FMHA forward
// kernel (fmha_sm80.cu). Everything here is layout algebra, usable on the host: the CPU tests
// compile it into a host program that checks the conversions thread by thread.
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/numeric_types.h"

namespace hk::fmha {
using namespace cute;

// Q tile of kBlockM rows stays in shared memory for the whole KV sweep; K and V tiles of
// kBlockN rows stream through one buffer each (V's load overlaps Q K^T, the next K's load
// overlaps P V). Four warps stack along M: a warp owns 16 rows of each 64-row slab, so the
// softmax row reductions never leave the warp (each row lives in one quad of lanes).
template <class Element_, int kHeadDim_, int kBlockM_ = 128, int kBlockN_ = 64, int kWarps_ = 4>
struct Traits {
  using Element = Element_;
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kWarps = kWarps_;
  static constexpr int kThreads = 32 * kWarps;
  static_assert(kHeadDim % 64 == 0, "head_dim must be a multiple of 64");
  static_assert(kBlockM % (16 * kWarps) == 0 && kBlockN % 16 == 0);

  // mma.sync m16n8k16, fp32 accumulation. The N tile of 16 (two n8 atoms) lets one ldmatrix.x4
  // feed a whole 16x16 B slice.
  using MmaOp = std::conditional_t<std::is_same_v<Element, cutlass::half_t>,
                                   SM80_16x8x16_F32F16F16F32_TN, SM80_16x8x16_F32BF16BF16F32_TN>;
  using TiledMma = TiledMMA<MMA_Atom<MmaOp>, Layout<Shape<Int<kWarps>, _1, _1>>,
                            Tile<Int<16 * kWarps>, _16, _16>>;

  // Shared memory: 8 rows x 64 elements (8 x 128 B) atoms, 16-byte chunks XOR-swizzled by row,
  // so the 8 row addresses of one ldmatrix phase land in 8 different bank groups.
  using SmemAtom = decltype(composition(Swizzle<3, 3, 3>{},
                                        Layout<Shape<_8, _64>, Stride<_64, _1>>{}));
  using SmemLayoutQ = decltype(tile_to_shape(SmemAtom{}, Shape<Int<kBlockM>, Int<kHeadDim>>{}));
  using SmemLayoutKV = decltype(tile_to_shape(SmemAtom{}, Shape<Int<kBlockN>, Int<kHeadDim>>{}));
  // V^T as (head_dim, kBlockN) over V's storage: Vt(d, j) = V(j, d). P @ V takes it as the
  // B operand, read with the transposing ldmatrix.
  using SmemLayoutVt = decltype(composition(
      SmemLayoutKV{}, make_layout(Shape<Int<kHeadDim>, Int<kBlockN>>{}, GenRowMajor{})));

  // Global -> shared: 16-byte cp.async per thread, 8 threads per 64-element row segment.
  using GmemCopy = decltype(make_tiled_copy(
      Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>, Element>{},
      Layout<Shape<Int<kThreads / 8>, _8>, Stride<_8, _1>>{}, Layout<Shape<_1, _8>>{}));
  using SmemCopyAtom = Copy_Atom<SM75_U32x4_LDSM_N, Element>;   // Q (A) and K (B), K-major
  using SmemCopyAtomT = Copy_Atom<SM75_U16x8_LDSM_T, Element>;  // V^T (B), N-major in smem

  struct SharedStorage {
    cute::array_aligned<Element, cosize_v<SmemLayoutQ>, 128> q;
    cute::array_aligned<Element, cosize_v<SmemLayoutKV>, 128> k;
    cute::array_aligned<Element, cosize_v<SmemLayoutKV>, 128> v;
  };
};

// An m16n8k16 accumulator fragment ((2, 2), MMA_M, MMA_N) seen as (rows, columns) of the thread:
// value mode 0 steps a column (c0, c1), value mode 1 steps 8 rows (c0 -> c2).
template <class Layout>
CUTE_HOST_DEVICE constexpr auto acc_rowcol(Layout const& acc) {
  static_assert(rank(Layout{}) == 3 && size<0>(Layout{}) == 4);
  return make_layout(make_layout(get<0, 1>(acc), get<1>(acc)),
                     make_layout(get<0, 0>(acc), get<2>(acc)));
}

// The same accumulator fragment reused as the A operand of the next MMA (P of P @ V): the two
// n8 accumulators (n, n + 1) of a thread hold exactly the k16 A fragment of columns 16(n/2)..,
// so ((2, 2), MMA_M, MMA_N) -> (((2, 2), 2), MMA_M, MMA_N / 2) without moving a register.
template <class Layout>
CUTE_HOST_DEVICE constexpr auto acc_as_operand_a(Layout const& acc) {
  static_assert(rank(Layout{}) == 3 && size<0>(Layout{}) == 4);
  auto split = logical_divide(acc, Shape<Underscore, Underscore, _2>{});  // (4, M, (2, N/2))
  return make_layout(make_layout(get<0>(split), get<2, 0>(split)), get<1>(split),
                     get<2, 1>(split));
}

}  // namespace hk::fmha
