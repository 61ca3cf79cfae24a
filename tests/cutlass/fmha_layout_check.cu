// Host-side check of the FMHA kernel's register and shared-memory layout conversions, thread by
// thread, using CuTe identity tensors (each element holds its own (row, col) coordinate).
// Built by tests/cutlass/test_fmha_layouts.py with nvcc and run on the CPU; prints "ok" or the
// first mismatch and exits non-zero.
// The warp-specialized kernel builds its 176- and 80-key tiles with CuTe's extended wgmma shapes
// (fmha_sm90_ws.cu); with them on, the selectors pick the same atoms as before at 64 and 128.
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include <cstdio>
#include <set>

#include "fmha_sm80.h"
#include "fmha_sm90.h"
#include "fmha_sm90_ws.h"

using namespace cute;

static int failures = 0;
#define CHECK(cond, ...)                      \
  do {                                        \
    if (!(cond)) {                            \
      if (++failures <= 5) {                  \
        std::printf("FAIL %s: ", #cond);      \
        std::printf(__VA_ARGS__);             \
        std::printf("\n");                    \
      }                                       \
    }                                         \
  } while (0)

template <class T>
void check() {
  constexpr int M = T::kBlockM, N = T::kBlockN, D = T::kHeadDim;
  typename T::TiledMma mma;
  // Which threads hold each row of S, and how many times each S element is held.
  std::vector<std::set<int>> row_owners(M);
  std::vector<int> s_seen(M * N, 0);
  for (int t = 0; t < T::kThreads; ++t) {
    auto thr = mma.get_thread_slice(t);
    auto tScS = thr.partition_C(make_identity_tensor(Shape<Int<M>, Int<N>>{}));  // S acc
    auto tOcO = thr.partition_C(make_identity_tensor(Shape<Int<M>, Int<D>>{}));  // O acc
    auto tPcP = thr.partition_A(make_identity_tensor(Shape<Int<M>, Int<N>>{}));  // P operand

    // 1. rows/cols view: one row coordinate per view row, and O's rows are S's rows.
    auto s_rc = make_tensor(tScS.data(), hk::fmha::acc_rowcol(tScS.layout()));
    auto o_rc = make_tensor(tOcO.data(), hk::fmha::acc_rowcol(tOcO.layout()));
    CHECK(size<0>(s_rc) == size<0>(o_rc), "row counts differ");
    for (int r = 0; r < size<0>(s_rc); ++r) {
      int row = get<0>(s_rc(r, 0));
      row_owners[row].insert(t);
      for (int c = 0; c < size<1>(s_rc); ++c) {
        CHECK(get<0>(s_rc(r, c)) == row, "t%d S row %d col %d", t, r, c);
        s_seen[row * N + get<1>(s_rc(r, c))]++;
      }
      for (int c = 0; c < size<1>(o_rc); ++c) {
        CHECK(get<0>(o_rc(r, c)) == row, "t%d O row %d col %d", t, r, c);
      }
    }
    // 2. the accumulator reinterpreted as the A operand of P @ V holds the same coordinates.
    auto p_as_a = make_tensor(tScS.data(), hk::fmha::acc_as_operand_a(tScS.layout()));
    CHECK(size(p_as_a) == size(tPcP), "t%d sizes %d vs %d", t, int(size(p_as_a)), int(size(tPcP)));
    CHECK(size<0>(p_as_a) == size<0>(tPcP) && size<1>(p_as_a) == size<1>(tPcP) &&
              size<2>(p_as_a) == size<2>(tPcP),
          "t%d mode sizes", t);
    for (int i = 0; i < size(tPcP); ++i) {
      CHECK(p_as_a(i) == tPcP(i), "t%d element %d: acc (%d,%d) vs A (%d,%d)", t, i,
            int(get<0>(p_as_a(i))), int(get<1>(p_as_a(i))), int(get<0>(tPcP(i))),
            int(get<1>(tPcP(i))));
    }
  }
  // 3. every S element held exactly once; each row held by one quad (lanes 4q..4q+3 of a warp),
  //    which is what the shfl_xor 1 / 2 row reductions assume.
  for (int i = 0; i < M * N; ++i) CHECK(s_seen[i] == 1, "S element %d held %d times", i, s_seen[i]);
  for (int row = 0; row < M; ++row) {
    CHECK(row_owners[row].size() == 4, "row %d has %d owners", row, int(row_owners[row].size()));
    int first = *row_owners[row].begin();
    for (int t : row_owners[row]) CHECK(t / 4 == first / 4, "row %d owners not one quad", row);
  }
  // 4. V^T over V's storage.
  typename T::SmemLayoutKV kv;
  typename T::SmemLayoutVt vt;
  for (int d = 0; d < D; ++d)
    for (int j = 0; j < N; ++j) CHECK(vt(d, j) == kv(j, d), "Vt(%d,%d)", d, j);
  // 5. the global->shared copy covers a K tile exactly once.
  typename T::GmemCopy gcopy;
  std::vector<int> g_seen(N * D, 0);
  for (int t = 0; t < T::kThreads; ++t) {
    auto part = gcopy.get_thread_slice(t).partition_S(make_identity_tensor(Shape<Int<N>, Int<D>>{}));
    for (int i = 0; i < size(part); ++i) g_seen[get<0>(part(i)) * D + get<1>(part(i))]++;
  }
  for (int i = 0; i < N * D; ++i) CHECK(g_seen[i] == 1, "K element %d copied %d times", i, g_seen[i]);
  std::printf("checked head_dim %d: kBlockM %d kBlockN %d threads %d\n", D, M, N, T::kThreads);
}

// The SM90 kernel: S from the SS wgmma, P reused as the RS wgmma's A operand, O's rows.
template <class T, bool kGmemCopy = true>  // kGmemCopy: the cp.async kernel's K/V copy
void check90() {
  constexpr int M = T::kBlockM, N = T::kBlockN, D = T::kHeadDim;
  typename T::TiledMmaS mma_s;
  typename T::TiledMmaO mma_o;
  CHECK(int(size(mma_s)) == T::kThreads && int(size(mma_o)) == T::kThreads, "thread counts");
  std::vector<std::set<int>> row_owners(M);
  std::vector<int> s_seen(M * N, 0), o_seen(M * D, 0);
  for (int t = 0; t < T::kThreads; ++t) {
    auto tScS = mma_s.get_thread_slice(t).partition_C(make_identity_tensor(Shape<Int<M>, Int<N>>{}));
    auto thr_o = mma_o.get_thread_slice(t);
    auto tOcO = thr_o.partition_C(make_identity_tensor(Shape<Int<M>, Int<D>>{}));
    auto tPcP = thr_o.partition_A(make_identity_tensor(Shape<Int<M>, Int<N>>{}));  // RS: per thread

    auto s_rc = make_tensor(tScS.data(), hk::fmha90::acc_rowcol(tScS.layout()));
    auto o_rc = make_tensor(tOcO.data(), hk::fmha90::acc_rowcol(tOcO.layout()));
    CHECK(size<0>(s_rc) == size<0>(o_rc), "t%d row counts differ", t);
    for (int r = 0; r < size<0>(s_rc); ++r) {
      int row = get<0>(s_rc(r, 0));
      row_owners[row].insert(t);
      for (int c = 0; c < size<1>(s_rc); ++c) {
        CHECK(get<0>(s_rc(r, c)) == row, "t%d S row %d col %d", t, r, c);
        s_seen[row * N + get<1>(s_rc(r, c))]++;
      }
      for (int c = 0; c < size<1>(o_rc); ++c) {
        CHECK(get<0>(o_rc(r, c)) == row, "t%d O row %d col %d: %d", t, r, c, int(get<0>(o_rc(r, c))));
        o_seen[row * D + get<1>(o_rc(r, c))]++;
      }
    }
    auto p_as_a = make_tensor(tScS.data(), hk::fmha90::acc_as_operand_a(tScS.layout()));
    CHECK(size(p_as_a) == size(tPcP), "t%d sizes %d vs %d", t, int(size(p_as_a)), int(size(tPcP)));
    CHECK(rank(p_as_a) == rank(tPcP) && size<1>(p_as_a) == size<1>(tPcP) &&
              size<2>(p_as_a) == size<2>(tPcP),
          "t%d mode sizes", t);
    for (int i = 0; i < size(tPcP); ++i) {
      CHECK(p_as_a(i) == tPcP(i), "t%d element %d: acc (%d,%d) vs A (%d,%d)", t, i,
            int(get<0>(p_as_a(i))), int(get<1>(p_as_a(i))), int(get<0>(tPcP(i))),
            int(get<1>(tPcP(i))));
    }
  }
  for (int i = 0; i < M * N; ++i) CHECK(s_seen[i] == 1, "S element %d held %d times", i, s_seen[i]);
  for (int i = 0; i < M * D; ++i) CHECK(o_seen[i] == 1, "O element %d held %d times", i, o_seen[i]);
  for (int row = 0; row < M; ++row) {
    CHECK(row_owners[row].size() == 4, "row %d has %d owners", row, int(row_owners[row].size()));
    int first = *row_owners[row].begin();
    for (int t : row_owners[row]) CHECK(t / 4 == first / 4, "row %d owners not one quad", row);
  }
  typename T::SmemLayoutKV kv;
  typename T::SmemLayoutVt vt;
  for (int d = 0; d < D; ++d)
    for (int j = 0; j < N; ++j) CHECK(vt(d, j) == kv(j, d), "Vt(%d,%d)", d, j);
  if constexpr (kGmemCopy) {
    typename T::GmemCopy gcopy;
    std::vector<int> g_seen(N * D, 0);
    for (int t = 0; t < T::kThreads; ++t) {
      auto part =
          gcopy.get_thread_slice(t).partition_S(make_identity_tensor(Shape<Int<N>, Int<D>>{}));
      for (int i = 0; i < size(part); ++i) g_seen[get<0>(part(i)) * D + get<1>(part(i))]++;
    }
    for (int i = 0; i < N * D; ++i) CHECK(g_seen[i] == 1, "K element %d copied %d times", i, g_seen[i]);
  }
  std::printf("checked sm90 head_dim %d: kBlockM %d kBlockN %d threads %d\n", D, M, N, T::kThreads);
}

// The warp-specialized kernel: its consumers' MMAs are fmha90's at its tile (checked above; TMA
// loads K and V, not the cp.async copy), and V^T is read per pipeline stage over the staged K/V
// buffer.
template <class T>
void check90ws() {
  check90<typename T::Base, false>();
  constexpr int N = T::kBlockN, D = T::kHeadDim;
  typename T::SmemLayoutKV kv;
  typename T::SmemLayoutVt vt;
  for (int s = 0; s < T::kStages; ++s)
    for (int d = 0; d < D; ++d)
      for (int j = 0; j < N; ++j) CHECK(vt(d, j, s) == kv(j, d, s), "Vt(%d,%d,%d)", d, j, s);
  CHECK(int(sizeof(typename T::SharedStorage)) <= 227 * 1024, "shared storage %d bytes",
        int(sizeof(typename T::SharedStorage)));
  std::printf("checked sm90 warp-specialized head_dim %d: stages %d, %d bytes of shared memory\n", D,
              T::kStages, int(sizeof(typename T::SharedStorage)));
}

int main() {
  check<hk::fmha::Traits<cutlass::bfloat16_t, 128>>();
  check<hk::fmha::Traits<cutlass::bfloat16_t, 64>>();
  check<hk::fmha::Traits<cutlass::half_t, 128>>();
  check90<hk::fmha90::Traits<cutlass::bfloat16_t, 128>>();
  check90<hk::fmha90::Traits<cutlass::bfloat16_t, 64>>();
  check90<hk::fmha90::Traits<cutlass::half_t, 128>>();
  // (head_dim, query rows, keys, stages) as fmha.py's ws_tile and stages() give them
  check90ws<hk::fmha90ws::Traits<cutlass::bfloat16_t, 128, 128, 128, 3>>();
  check90ws<hk::fmha90ws::Traits<cutlass::bfloat16_t, 64, 128, 128, 3>>();
  check90ws<hk::fmha90ws::Traits<cutlass::bfloat16_t, 256, 128, 64, 2>>();
  // FlashAttention-3's shapes (fmha.FA3_TILES): three consumer warpgroups at D 64; 176 and 80 keys
  check90ws<hk::fmha90ws::Traits<cutlass::bfloat16_t, 64, 192, 128, 3>>();
  check90ws<hk::fmha90ws::Traits<cutlass::bfloat16_t, 128, 128, 176, 2>>();
  check90ws<hk::fmha90ws::Traits<cutlass::bfloat16_t, 256, 128, 80, 2>>();
  if (failures) {
    std::printf("%d failures\n", failures);
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
