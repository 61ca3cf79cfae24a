// An epilogue for the N-split cooperative tile (sm90_gemm.cu, HK_SPLIT_N) that stores 16 bytes
// per thread instead of CUTLASS's 2.
//
// Why: the N split cannot use the TMA epilogue (its stmatrix subtiles need every consumer thread
// in each subtile), so it ran CUTLASS's DefaultEpilogue, which stores each bf16 accumulator
// alone. ncu on an H200 at 1024x10240x8192 (results/h200/README.md, session 54) found the store
// queue full: lg_throttle 14.5% of stall samples, the tensor pipe busy 81% of active cycles
// where the TMA-epilogue tiles reached 96-97%.
//
// How: in a wgmma accumulator fragment the four lanes of a quad hold the same row, each two
// adjacent columns of every 8-column block (lane q: columns 2q, 2q+1). Four consecutive blocks
// form a 4x4 matrix of 4-byte pairs over the quad; transposing it with shuffles leaves lane q
// holding all 8 columns of one block, which it stores as one 16-byte vector. A quad then writes
// 64 contiguous bytes of a row per instruction. No shared memory is used, so the mainloop keeps
// its stages (shared memory for a staged epilogue would cost the 128x320 tile one of its four).
//
// Scope: D = alpha * acc with no C operand (sm90_gemm.cu passes ptr_C = nullptr), 16-bit D,
// row-major, N and the row stride multiples of 8 and D 16-byte aligned (can_implement checks).
#pragma once

#include <cstdint>

#include "cute/tensor.hpp"
#include "cutlass/epilogue/collective/default_epilogue.hpp"
#include "cutlass/epilogue/collective/detail.hpp"

namespace hk {

// `Base` is the DefaultEpilogue CUTLASS's builder makes for NoSmemWarpSpecialized: its
// Arguments, Params and host-side methods are kept; only the store (operator()) is replaced.
template <class Base>
class QuadStoreEpilogue : public Base {
 public:
  using Params = typename Base::Params;
  using Arguments = typename Base::Arguments;
  using SharedStorage = typename Base::SharedStorage;
  using ElementD = typename Base::ElementD;
  static_assert(sizeof(ElementD) == 2, "16-bit D only: four lanes' pairs make one 16-byte row");

  CUTLASS_HOST_DEVICE
  QuadStoreEpilogue(Params const& params, SharedStorage const& storage = SharedStorage())
      : Base(params, storage), params_(params), op_(params.thread) {}

  template <class ProblemShape>
  static bool can_implement(ProblemShape const& problem_shape, Arguments const& args) {
    auto n = cute::get<1>(problem_shape);
    auto ld = cute::get<0>(args.dD);  // row-major D: the row stride comes first
    auto addr = reinterpret_cast<uintptr_t>(args.ptr_D);
    return args.ptr_C == nullptr && n % 8 == 0 && ld % 8 == 0 && addr % 16 == 0 &&
           Base::can_implement(problem_shape, args);
  }

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine,
            class FrgLayout, class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape_mnk,
                                 BlockCoordMNKL blk_coord_mnkl,
                                 cute::Tensor<FrgEngine, FrgLayout> const& accumulators,
                                 TiledMma tiled_mma, ResidueMNK, int thread_idx, char*) {
    using namespace cute;
    // The fragment is ((2 columns, 2 row halves, N/8 blocks), MMA_M, MMA_N), as SM90 GMMA lays
    // out its accumulators; the transpose below needs whole groups of four blocks.
    static_assert(is_static<FrgLayout>::value, "accumulator layout must be static");
    using V = decltype(shape<0>(FrgLayout{}));
    static_assert(rank(V{}) == 3, "expected a GMMA accumulator fragment");
    static_assert(size<0>(V{}) == 2 && size<1>(V{}) == 2, "expected a GMMA accumulator fragment");
    constexpr int kBlocks = size<2>(V{});
    static_assert(kBlocks % 4 == 0, "each warp group's N share must be a multiple of 32");

    auto M = get<0>(problem_shape_mnkl);
    auto N = get<1>(problem_shape_mnkl);
    auto L = get<3>(problem_shape_mnkl);
    auto [m_coord, n_coord, k_coord, l_coord] = blk_coord_mnkl;
    Tensor mD = make_tensor(make_gmem_ptr(params_.ptr_D), make_shape(M, N, L), params_.dD);
    // Each accumulator's (row, column) in D: the identity tensor partitioned as the MMA's C.
    Tensor cD = local_tile(make_identity_tensor(make_shape(M, N)), take<0, 2>(blk_shape_mnk),
                           make_coord(m_coord, n_coord));
    Tensor tCcD = tiled_mma.get_thread_slice(thread_idx).partition_C(cD);

    const int lane = thread_idx % 32;
    const int q = lane % 4;
    CUTLASS_PRAGMA_UNROLL
    for (int mm = 0; mm < size<1>(accumulators); ++mm) {
      CUTLASS_PRAGMA_UNROLL
      for (int nn = 0; nn < size<2>(accumulators); ++nn) {
        CUTLASS_PRAGMA_UNROLL
        for (int r = 0; r < 2; ++r) {
          CUTLASS_PRAGMA_UNROLL
          for (int g = 0; g < kBlocks / 4; ++g) {
            uint32_t pairs[4];  // this lane's two columns of blocks 4g .. 4g+3
            CUTLASS_PRAGMA_UNROLL
            for (int b = 0; b < 4; ++b) {
              ElementD lo = op_(accumulators(make_coord(make_coord(0, r, 4 * g + b), mm, nn)));
              ElementD hi = op_(accumulators(make_coord(make_coord(1, r, 4 * g + b), mm, nn)));
              pairs[b] = uint32_t(lo.raw()) | (uint32_t(hi.raw()) << 16);
            }
            // Round s pairs lane q with lane p = q^s of its quad: q sends its pair of block p
            // (which p collects) and receives p's pair of block q, columns 2p and 2p+1 of the
            // block q ends up storing. Indices that depend on the lane are selects, not
            // dynamic register indexing (which would go through local memory).
            uint32_t row8[4] = {0, 0, 0, 0};
            CUTLASS_PRAGMA_UNROLL
            for (int s = 0; s < 4; ++s) {
              const int other = q ^ s;
              uint32_t send = pairs[0];
              CUTLASS_PRAGMA_UNROLL
              for (int b = 1; b < 4; ++b) send = other == b ? pairs[b] : send;
              const uint32_t got = s == 0 ? send : __shfl_xor_sync(0xffffffffu, send, s);
              CUTLASS_PRAGMA_UNROLL
              for (int b = 0; b < 4; ++b) row8[b] = other == b ? got : row8[b];
            }
            // This lane's own pair of block 4g+q starts 2q columns into the block.
            auto rc = tCcD(make_coord(make_coord(0, r, 4 * g + q), mm, nn));
            const int row = get<0>(rc);
            const int col = get<1>(rc) - 2 * q;
            if (row < M && col < N) {
              *reinterpret_cast<uint4*>(&mD(row, col, l_coord)) =
                  make_uint4(row8[0], row8[1], row8[2], row8[3]);
            }
          }
        }
      }
    }
  }

 private:
  Params params_;
  typename Base::ThreadEpilogueOp op_;
};

// The builder's NoSmemWarpSpecialized epilogue (an adapter around DefaultEpilogue) with the
// store above in DefaultEpilogue's place.
template <class BuilderEpilogue>
struct WithQuadStores;
template <class Default>
struct WithQuadStores<
    cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<Default>> {
  using type =
      cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<QuadStoreEpilogue<Default>>;
};

}  // namespace hk
