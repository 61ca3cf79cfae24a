"""Our attention layouts into flash-attn's and FlashInfer's and back (CPU tensors, no GPU)."""

import pytest
import torch

from harness.problems import AttentionProblem
from harness.problems.attention import gather_pages
from harness.providers.attention_interop import (
    bshd_to_ours,
    page_table_to_csr,
    to_bshd,
    to_tokens,
    tokens_to_ours,
    uniform_indptr,
    wall_s,
)

X = torch.arange(2 * 3 * 5 * 4, dtype=torch.float32).view(2, 3, 5, 4)  # [B, H, S, D]


def test_bshd_round_trip():
    y = to_bshd(X)
    assert y.shape == (2, 5, 3, 4) and y.is_contiguous()
    assert torch.equal(y[1, 4, 2], X[1, 2, 4])
    assert torch.equal(bshd_to_ours(y), X)


def test_tokens_are_sequence_major_and_round_trip():
    t = to_tokens(X)  # [B * S, H, D]
    assert t.shape == (10, 3, 4) and t.is_contiguous()
    assert torch.equal(t[1 * 5 + 3, 2], X[1, 2, 3])  # sequence 1, token 3, head 2
    assert torch.equal(tokens_to_ours(t, 2), X)
    one = X[:, :, :1]  # decode: one token per sequence
    assert torch.equal(tokens_to_ours(to_tokens(one), 2), one)


def test_uniform_indptr():
    ind = uniform_indptr(3, 7)
    assert ind.dtype == torch.int32 and ind.tolist() == [0, 7, 14, 21]


def test_csr_of_the_problems_page_table_matches_gather_pages():
    p = AttentionProblem(3, 4, 2, 1, 40, 32, dtype="fp32", kv_layout="paged", page_size=16)
    x = p.make_inputs(0, "randn", torch.device("cpu"))
    indptr, indices, last = page_table_to_csr(x["block_table"], x["cache_seqlens"], 16)
    assert indptr.tolist() == [0, 3, 6, 9] and last.tolist() == [8, 8, 8]
    assert indptr.dtype == indices.dtype == last.dtype == torch.int32
    assert torch.equal(indices, x["block_table"].flatten())
    dense = gather_pages(x["k_cache"], x["block_table"], 40)  # [B, Hkv, S, D]
    for b in range(3):
        pages = indices[indptr[b] : indptr[b + 1]].long()
        seq = x["k_cache"][pages].reshape(-1, 2, 32)[: (len(pages) - 1) * 16 + int(last[b])]
        assert torch.equal(seq.transpose(0, 1), dense[b])


def test_csr_of_ragged_lengths_leaves_padding_pages_out():
    table = torch.tensor([[7, 1, 2], [3, 4, 5], [6, 0, 8], [9, 10, 11]], dtype=torch.int32)
    lens = torch.tensor([1, 16, 33, 0], dtype=torch.int32)
    indptr, indices, last = page_table_to_csr(table, lens, 16)
    assert indptr.tolist() == [0, 1, 2, 5, 5]
    assert indices.tolist() == [7, 3, 6, 0, 8]
    assert last.tolist() == [1, 16, 1, 0]
    # flashinfer.page.get_seq_lens gives the lengths back
    back = (indptr[1:] - indptr[:-1] - 1).clamp(min=0) * 16 + last
    assert back.tolist() == lens.tolist()


def test_csr_refuses_a_table_too_short():
    table = torch.zeros(2, 2, dtype=torch.int32)
    with pytest.raises(ValueError, match="need 3 pages of 16; the block table holds 2"):
        page_table_to_csr(table, torch.tensor([10, 40], dtype=torch.int32), 16)


def test_wall_s_returns_the_result_and_a_time():
    result, seconds = wall_s(lambda: 42, torch.device("cpu"))
    assert result == 42 and 0 <= seconds < 1
