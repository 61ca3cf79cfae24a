// Tile shapes, shared-memory layouts and register-layout conversions of the CuTe SM90 FMHA
// forward kernel (fmha_sm90.cu). Layout algebra only, usable on the host: the CPU tests compile
// it into a host program that checks the conversions thread by thread (fmha_layout_check.cu).
#pragma once

#include "cute/atom/mma_traits_sm90_gmma.hpp"
#include "cute/tensor.hpp"
#include "cutlass/numeric_types.h"

namespace hk::fmha90 {
using namespace cute;

// Two consumer warpgroups stack along M, 64 query rows each (wgmma's M): S = Q K^T runs with
// both operands in shared memory (SS), O += P V with P straight from the S accumulator
// registers (RS), so P never touches shared memory. K and V stream through one buffer each
// with cp.async, in the same order as the SM80 kernel (V's load overlaps Q K^T, the next K's
// load overlaps P V): this rung differs from fmha_sm80 in the tensor-core instruction alone
// (warpgroup wgmma reading shared memory through descriptors, instead of per-warp ldmatrix +
// mma.sync), so the pair measures what wgmma is worth on one pipeline.
template <class Element_, int kHeadDim_, int kBlockM_ = 128, int kBlockN_ = 64>
struct Traits {
  using Element = Element_;
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kBlockM_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kWarpgroups = kBlockM / 64;
  static constexpr int kThreads = 128 * kWarpgroups;
  static_assert(kHeadDim % 64 == 0, "head_dim must be a multiple of 64");
  // wgmma's M is 64 per warpgroup; kBlockN is Q K^T's N (steps of 8) and P V's K (steps of 16)
  static_assert(kBlockM % 64 == 0 && kBlockN % 16 == 0);

  using AtomLayout = Layout<Shape<Int<kWarpgroups>, _1, _1>>;
  // S[kBlockM, kBlockN] = Q[kBlockM, D] K[kBlockN, D]^T: both K-major in shared memory.
  using TiledMmaS = decltype(make_tiled_mma(
      GMMA::ss_op_selector<Element, Element, float,
                           Shape<_64, Int<kBlockN>, Int<kHeadDim>>>(),
      AtomLayout{}));
  // O[kBlockM, D] += P[kBlockM, kBlockN] V[kBlockN, D]: P in registers (K-major by
  // construction), V read as the MN-major B operand (D is its contiguous dimension).
  using TiledMmaO = decltype(make_tiled_mma(
      GMMA::rs_op_selector<Element, Element, float, Shape<_64, Int<kHeadDim>, Int<kBlockN>>,
                           GMMA::Major::K, GMMA::Major::MN>(),
      AtomLayout{}));

  // 128-byte swizzled K-major atoms (8 rows x 64 elements): what wgmma descriptors read
  // without bank conflicts, and what a 16-byte cp.async per thread writes.
  using SmemAtom = GMMA::Layout_K_SW128_Atom<Element>;
  using SmemLayoutQ = decltype(tile_to_shape(SmemAtom{}, Shape<Int<kBlockM>, Int<kHeadDim>>{}));
  using SmemLayoutKV = decltype(tile_to_shape(SmemAtom{}, Shape<Int<kBlockN>, Int<kHeadDim>>{}));
  // V^T as (head_dim, kBlockN) over V's storage: Vt(d, j) = V(j, d), an MN-major operand.
  using SmemLayoutVt = decltype(composition(
      SmemLayoutKV{}, make_layout(Shape<Int<kHeadDim>, Int<kBlockN>>{}, GenRowMajor{})));

  // Global -> shared: 16-byte cp.async per thread, 8 threads per 64-element row segment.
  using GmemCopy = decltype(make_tiled_copy(
      Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>, Element>{},
      Layout<Shape<Int<kThreads / 8>, _8>, Stride<_8, _1>>{}, Layout<Shape<_1, _8>>{}));

  struct SharedStorage {
    cute::array_aligned<Element, cosize_v<SmemLayoutQ>, 1024> q;
    cute::array_aligned<Element, cosize_v<SmemLayoutKV>, 1024> k;
    cute::array_aligned<Element, cosize_v<SmemLayoutKV>, 1024> v;
  };
};

// A wgmma accumulator fragment ((2, 2, N/8), MMA_M, MMA_N) seen as (rows, columns) of the
// thread: value mode 0.0 steps a column, 0.1 steps 8 rows, 0.2 steps 8 columns.
template <class Layout>
CUTE_HOST_DEVICE constexpr auto acc_rowcol(Layout const& acc) {
  static_assert(rank(Layout{}) == 3 && rank<0>(Layout{}) == 3);
  return make_layout(make_layout(get<0, 1>(acc), get<1>(acc)),
                     make_layout(get<0, 0>(acc), get<0, 2>(acc), get<2>(acc)));
}

// The same accumulator reused as the register A operand of the next wgmma (P of P @ V). A k16
// slice of a 16-bit A fragment is ((2 columns, 2 row halves, 2 column halves 8 apart)), which
// is exactly two neighbouring n8 groups of the accumulator: split mode 0.2 into (2, N/16) and
// move the N/16 part out as the K mode. No register moves.
template <class Layout>
CUTE_HOST_DEVICE constexpr auto acc_as_operand_a(Layout const& acc) {
  static_assert(rank(Layout{}) == 3 && rank<0>(Layout{}) == 3);
  auto groups = logical_divide(get<0, 2>(acc), Tile<_2>{});  // ((2, N/16))
  return make_layout(make_layout(get<0, 0>(acc), get<0, 1>(acc), get<0, 0>(groups)),
                     get<1>(acc), coalesce(make_layout(get<0, 1>(groups), get<2>(acc))));
}

}  // namespace hk::fmha90
