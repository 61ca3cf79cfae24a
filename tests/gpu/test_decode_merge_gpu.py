"""On a GPU: own decode's fused split merge (attention_decode_kernel.py, FUSED_REDUCE) against
its reduction kernel. The last split program of each unit merges the partials in split order, so
every launch must give the same bits; a lost release or acquire (a merge reading a partial before
it lands) would show as launches that disagree, or as a counter not back at zero."""

import math

import pytest
import torch

pytestmark = pytest.mark.gpu


def _paged_ragged(batch: int, h_kv: int, kv_len: int, page: int, gen: torch.Generator):
    """A shuffled paged bf16 cache [pages, page, Hkv, 128] with lengths from kv_len down."""
    per_seq = math.ceil(kv_len / page)
    pages = batch * per_seq
    k = torch.randn(pages, page, h_kv, 128, generator=gen).to("cuda", torch.bfloat16)
    v = torch.randn(pages, page, h_kv, 128, generator=gen).to("cuda", torch.bfloat16)
    table = torch.randperm(pages, generator=gen).view(batch, per_seq).to("cuda", torch.int32)
    lens = torch.linspace(kv_len, kv_len // 2, batch).round().to("cuda", torch.int32)
    return k, v, table, lens


@pytest.mark.parametrize("seq_q,group", [(1, 4), (4, 8)])
def test_fused_merge_is_deterministic_and_matches_the_kernel(seq_q, group):
    from harness_kernels.triton.attention_decode import prepare_decode

    gen = torch.Generator().manual_seed(54)
    batch, h_kv = 16, 32 // group
    k, v, table, lens = _paged_ragged(batch, h_kv, 4096, 16, gen)
    q = torch.randn(batch, 32, seq_q, 128, generator=gen).to("cuda", torch.bfloat16)
    args = dict(cache_seqlens=lens, block_table=table, num_splits=8, tune=False)
    fused = prepare_decode(q, k, v, reduce="fused", **args)
    kernel = prepare_decode(q, k, v, reduce="kernel", **args)
    assert fused.config["reduce"] == "fused" and fused.config["num_splits"] == 8
    first = fused().clone()
    for _ in range(200):  # many launches: a race shows as a launch that differs
        assert torch.equal(fused(), first)
    torch.cuda.synchronize()
    torch.testing.assert_close(first.float(), kernel().float(), rtol=0, atol=2e-2)
