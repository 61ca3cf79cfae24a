"""Problems: exact FLOPs and bytes against hand-computed values, validation, inputs, references."""

import math

import pytest
import torch

from harness.problems import AttentionProblem, GemmProblem
from harness.problems.attention import attention_reference, causal_pairs, gather_pages

CPU = torch.device("cpu")


def test_gemm_flops_and_bytes_by_hand():
    p = GemmProblem(2, 3, 4, "bf16", "nn")
    assert p.flops() == 2 * 2 * 3 * 4  # 48
    assert p.min_bytes() == (2 * 4 + 4 * 3) * 2 + 2 * 3 * 2  # 52
    assert GemmProblem(2, 3, 4, "bf16", "nn", batch=3).flops() == 3 * 48
    assert GemmProblem(2, 3, 4, "bf16", "nn", batch=3).min_bytes() == 3 * 52


def test_gemm_fp8_reads_one_byte_writes_bf16():
    p = GemmProblem(16, 32, 64, "fp8_e4m3", "nt")
    assert p.min_bytes() == 16 * 64 + 64 * 32 + 16 * 32 * 2  # 4096
    assert p.flops() == 65536
    assert p.intensity() == pytest.approx(16.0)


@pytest.mark.parametrize(
    ("q_len", "kv_len", "pairs"),
    [(4, 4, 1 + 2 + 3 + 4), (2, 5, 4 + 5), (1, 100, 100), (3, 3, 6), (1, 1, 1)],
)
def test_causal_pairs_bottom_right(q_len, kv_len, pairs):
    assert causal_pairs(q_len, kv_len) == pairs


def test_attention_flops_causal_counts_computed_half_with_diagonal():
    full = AttentionProblem(2, 8, 2, 16, 16, 64, causal=False)
    causal = AttentionProblem(2, 8, 2, 16, 16, 64, causal=True)
    assert full.flops() == 4 * 2 * 8 * 64 * 16 * 16  # 262144
    assert causal.flops() == 4 * 2 * 8 * 64 * (16 * 17 // 2)
    # chunked prefill: 2 new queries after 3 cached keys
    chunk = AttentionProblem(1, 1, 1, 2, 5, 64, causal=True)
    assert chunk.flops() == 4 * 64 * 9


def test_attention_bytes_read_each_kv_head_once():
    p = AttentionProblem(2, 8, 2, 16, 16, 64, dtype="bf16")
    q_elems = 2 * 8 * 16 * 64
    kv_elems = 2 * 2 * 2 * 16 * 64  # K and V, kv_heads (not q_heads)
    assert p.min_bytes() == (2 * q_elems + kv_elems) * 2  # 81920
    mha = AttentionProblem(2, 8, 8, 16, 16, 64, dtype="bf16")
    assert mha.min_bytes() > p.min_bytes()


def test_paged_bytes_include_block_table():
    p = AttentionProblem(2, 4, 1, 1, 50, 64, True, "bf16", "paged", 16)
    assert p.pages_per_seq == 4
    assert p.min_bytes() == (2 * (2 * 4 * 1 * 64) + 2 * 2 * 1 * 50 * 64) * 2 + 2 * 4 * 4  # 27680
    assert p.phase == "decode"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        (dict(batch=1, q_heads=6, kv_heads=4, q_len=8, kv_len=8), "q_heads"),
        (dict(batch=1, q_heads=4, kv_heads=4, q_len=8, kv_len=8, head_dim=100), "head_dim"),
        (dict(batch=0, q_heads=4, kv_heads=4, q_len=8, kv_len=8), "batch"),
        (dict(batch=1, q_heads=4, kv_heads=4, q_len=9, kv_len=8, causal=True), "q_len"),
        (
            dict(batch=1, q_heads=4, kv_heads=4, q_len=1, kv_len=8, kv_layout="paged", page_size=7),
            "page_size",
        ),
        (dict(batch=1, q_heads=4, kv_heads=4, q_len=8, kv_len=8, dtype="int8"), "dtype"),
    ],
)
def test_attention_validation_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=rf"^{field}:"):
        AttentionProblem(**kwargs).validate()


@pytest.mark.parametrize(
    ("p", "field"),
    [
        (GemmProblem(0, 4, 4), "m"),
        (GemmProblem(4, -1, 4), "n"),
        (GemmProblem(4, 4, 4, "fp64"), "dtype"),
        (GemmProblem(4, 4, 4, layout="tt"), "layout"),
    ],
)
def test_gemm_validation_names_the_field(p, field):
    with pytest.raises(ValueError, match=rf"^{field}:"):
        p.validate()


def test_inputs_are_seeded_and_fills_differ():
    p = GemmProblem(5, 6, 7, "fp32")
    a1, a2 = p.make_inputs(3, "randn", CPU), p.make_inputs(3, "randn", CPU)
    assert torch.equal(a1["a"], a2["a"])
    assert not torch.equal(a1["a"], p.make_inputs(4, "randn", CPU)["a"])
    u = p.make_inputs(3, "uniform", CPU)["a"]
    assert u.abs().max() <= 1 and u.std() > 0.3
    assert p.make_inputs(3, "zeros", CPU)["a"].abs().sum() == 0


def test_nt_layout_hands_a_column_major_view():
    b = GemmProblem(5, 6, 7, "fp32", "nt").make_inputs(0, "randn", CPU)["b"]
    assert b.shape == (7, 6) and b.stride() == (1, 7)


def test_gemm_reference_and_check():
    p = GemmProblem(9, 10, 11, "bf16", "nt")
    x = p.make_inputs(0, "randn", CPU)
    ref = p.reference(x)
    good = (x["a"] @ x["b"]).to(torch.bfloat16)
    assert p.check(good, ref).ok
    bad = good.clone()
    bad[0, 0] += 100
    chk = p.check(bad, ref)
    assert not chk.ok and "rel_err" in chk.reason
    nan = good.clone()
    nan[1, 1] = float("nan")
    assert not p.check(nan, ref).ok


def test_fp8_reference_applies_scales():
    p = GemmProblem(16, 16, 32, "fp8_e4m3", "nt")
    x = p.make_inputs(0, "randn", CPU)
    assert x["a"].dtype == torch.float8_e4m3fn and x["a_scale"].numel() == 1
    ref = p.reference(x)
    approx = (x["a"].float() * x["a_scale"]) @ (x["b"].float() * x["b_scale"])
    torch.testing.assert_close(ref, approx)


def test_attention_reference_matches_naive_with_bottom_right_mask():
    torch.manual_seed(0)
    q = torch.randn(1, 4, 3, 8)
    k = torch.randn(1, 2, 5, 8)
    v = torch.randn(1, 2, 5, 8)
    out = attention_reference(q, k, v, causal=True)
    kk, vv = k.repeat_interleave(2, 1), v.repeat_interleave(2, 1)
    s = q @ kk.transpose(-1, -2) / math.sqrt(8)
    mask = torch.tensor([[j > i + 2 for j in range(5)] for i in range(3)])
    naive = torch.softmax(s.masked_fill(mask, float("-inf")), -1) @ vv
    torch.testing.assert_close(out, naive)


def test_paged_inputs_gather_to_the_dense_reference():
    p = AttentionProblem(2, 4, 2, 1, 37, 64, True, "fp32", "paged", 16)
    x = p.make_inputs(0, "randn", CPU)
    table = x["block_table"]
    assert table.shape == (2, 3) and sorted(table.flatten().tolist()) == list(range(6))
    k = gather_pages(x["k_cache"], table, 37)
    assert k.shape == (2, 2, 37, 64)
    page, slot = table[1, 2].item(), 37 - 32 - 1  # last token of sequence 1
    torch.testing.assert_close(k[1, :, 36], x["k_cache"][page, slot])


@pytest.mark.parametrize("chunk_bytes", [1 << 30, 2 * (2 * 2 * 37 * 64 * 4), 1])
def test_paged_reference_gathers_a_slice_of_the_batch_at_a_time(chunk_bytes, monkeypatch):
    """The paged reference gathers pages per slice of the batch (whole, two sequences of three,
    one) and gives what the whole gather gives: batch 256 x KV 32768 ran the H100 out of memory
    in the reference when it gathered every page at once."""
    from harness.problems import attention

    p = AttentionProblem(3, 4, 2, 2, 37, 64, True, "fp32", "paged", 16)
    x = p.make_inputs(0, "randn", CPU)
    whole = attention_reference(
        x["q"],
        gather_pages(x["k_cache"], x["block_table"], 37),
        gather_pages(x["v_cache"], x["block_table"], 37),
        causal=True,
    )
    gathered: list[int] = []
    real_gather = attention.gather_pages

    def counting_gather(cache, table, kv_len):
        gathered.append(table.shape[0])
        return real_gather(cache, table, kv_len)

    monkeypatch.setattr(attention, "_REF_CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(attention, "gather_pages", counting_gather)
    torch.testing.assert_close(p.reference(x), whole, rtol=1e-6, atol=1e-6)
    per_call = {1 << 30: [3, 3], 2 * (2 * 2 * 37 * 64 * 4): [2, 2, 1, 1], 1: [1] * 6}[chunk_bytes]
    assert gathered == per_call  # K then V per slice


@pytest.mark.parametrize("chunk_bytes", [1 << 30, 3000, 1])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_reference_chunks_agree_with_the_plain_formula(chunk_bytes, causal, monkeypatch):
    """GQA heads stacked on the query axis and batch/row chunking (so a decode batch of 512 fits
    an 80 GB GPU) give the textbook per-head result, whatever the chunk size."""
    from harness.problems import attention

    monkeypatch.setattr(attention, "_REF_CHUNK_BYTES", chunk_bytes)
    gen = torch.Generator().manual_seed(0)
    B, Hq, Hkv, Sq, Skv, D = 3, 8, 2, 5, 17, 32
    q = torch.randn(B, Hq, Sq, D, generator=gen).bfloat16()
    k = torch.randn(B, Hkv, Skv, D, generator=gen).bfloat16()
    v = torch.randn(B, Hkv, Skv, D, generator=gen).bfloat16()
    kf = k.float().repeat_interleave(Hq // Hkv, dim=1)
    vf = v.float().repeat_interleave(Hq // Hkv, dim=1)
    s = q.float() @ kf.transpose(-1, -2) / math.sqrt(D)
    if causal:
        rows = torch.arange(Sq)[:, None] + (Skv - Sq)
        s.masked_fill_(torch.arange(Skv)[None, :] > rows, float("-inf"))
    expected = torch.softmax(s, dim=-1) @ vf
    got = attention.attention_reference(q, k, v, causal)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_ragged_lengths_follow_from_the_problem_alone():
    """Issue 21.3's ragged batch: lengths spread from kv_len down to half of it, shuffled by a
    fixed seed, so FLOPs, bytes, inputs and every provider agree without seeing the inputs."""
    p = AttentionProblem(16, 32, 8, 4, 4096, 128, True, "bf16", "paged", 16, ragged=True)
    lens = p.seq_lens()
    assert lens == p.seq_lens() and len(lens) == 16
    assert max(lens) == 4096 and min(lens) == 2048
    assert lens != sorted(lens) and lens != sorted(lens, reverse=True)  # mixed, not ordered
    assert sorted(lens) == sorted(4096 - b * 2048 // 15 for b in range(16))
    one = AttentionProblem(1, 4, 1, 1, 100, 64, True, "bf16", "paged", 16, ragged=True)
    assert one.seq_lens() == [100]  # one sequence: its length is kv_len
    short = AttentionProblem(4, 4, 1, 8, 10, 64, True, "bf16", "paged", 16, ragged=True)
    assert min(short.seq_lens()) == 8  # never below q_len (causal needs kv >= q)
    wide = AttentionProblem(4, 4, 1, 12, 10, 64, False, "bf16", "paged", 16, ragged=True)
    assert wide.seq_lens() == [10] * 4  # nor above kv_len, which the pages were sized for
    same = AttentionProblem(16, 32, 8, 4, 4096, 128, True, "bf16", "paged", 16)
    assert same.seq_lens() == [4096] * 16


def test_ragged_flops_and_bytes_count_each_sequence_by_its_own_length():
    p = AttentionProblem(3, 4, 2, 2, 40, 64, True, "bf16", "paged", 16, ragged=True)
    lens = p.seq_lens()
    assert sorted(lens) == [20, 30, 40]
    assert p.flops() == 4 * 4 * 64 * sum(causal_pairs(2, n) for n in lens)
    pages = sum(-(-n // 16) for n in lens)  # 2 + 2 + 3 table entries read
    assert p.min_bytes() == (2 * (3 * 4 * 2 * 64) + 2 * 2 * sum(lens) * 64) * 2 + pages * 4
    flat = AttentionProblem(3, 4, 2, 2, 40, 64, False, "bf16", "paged", 16, ragged=True)
    assert flat.flops() == 4 * 4 * 64 * 2 * sum(lens)
    uniform = AttentionProblem(3, 4, 2, 2, 40, 64, True, "bf16", "paged", 16)
    assert uniform.flops() == 4 * 3 * 4 * 64 * causal_pairs(2, 40)  # as before ragged existed


def test_ragged_is_a_paged_axis_that_leaves_earlier_keys_alone():
    from harness.sweep import point_key

    p = AttentionProblem(2, 4, 1, 1, 50, 64, True, "bf16", "paged", 16)
    assert "ragged" not in p.axes() and "ragged" not in p.label()
    key = point_key(p, "own-triton", {}, "dev")
    assert key == "6080ca36021632df0fa7"  # its key before the field existed (at 8bb8d79)
    r = AttentionProblem(2, 4, 1, 1, 50, 64, True, "bf16", "paged", 16, ragged=True)
    assert r.axes()["ragged"] is True and r.label().endswith("paged16 ragged bf16")
    assert point_key(r, "own-triton", {}, "dev") != key
    with pytest.raises(ValueError, match="ragged"):
        AttentionProblem(2, 4, 1, 1, 50, 64, True, "bf16", ragged=True).validate()


def test_ragged_inputs_and_reference_stop_each_sequence_at_its_length():
    p = AttentionProblem(3, 4, 2, 2, 37, 64, True, "fp32", "paged", 16, ragged=True)
    x = p.make_inputs(0, "randn", CPU)
    lens = p.seq_lens()
    assert x["cache_seqlens"].tolist() == lens and x["cache_seqlens"].dtype == torch.int32
    ref = p.reference(x)
    for b, n in enumerate(lens):
        k = gather_pages(x["k_cache"], x["block_table"][b : b + 1], n)
        v = gather_pages(x["v_cache"], x["block_table"][b : b + 1], n)
        one = attention_reference(x["q"][b : b + 1], k, v, causal=True)
        torch.testing.assert_close(ref[b : b + 1], one, rtol=0, atol=0)
    # the tokens past a sequence's length are not attended: poisoning them changes nothing
    b = lens.index(min(lens))
    page = x["block_table"][b, min(lens) // 16].item()
    x["k_cache"][page, min(lens) % 16 :] = float("nan")
    assert torch.isfinite(p.reference(x)).all()
