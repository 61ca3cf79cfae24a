"""On a GPU (sm_90): the split merges added in session 71. The Gluon decode's fused merge
(FUSED_REDUCE in attention_decode_gluon_kernel.py): the unit's last split to finish merges
every split's partial inside the kernel, as the `tl` kernel's fused merge does, instead of the
reduction kernel's second launch. And the "pdl" merge, for both kernels: the reduction kernel
launched as the split kernel's programmatic dependent, waiting on the GPU (griddepcontrol.wait)
for the split kernel's partials. Every launch must give the same bits (each merge runs in split
order). A lost release or acquire, or a dependent that read before the split kernel finished,
would show as launches that disagree; a counter left off zero would show the same way. Checked
against the fp32 reference and the plain reduction kernel's merge of the same partials, over
the NaN-laden paged caches of test_decode_gluon_gpu: ragged lengths ending mid-tile, splits with
no tile (split by the longest), two M blocks per unit, and many items per persistent CTA dealt
longest first."""

import pytest
import torch
from test_decode_gluon_gpu import _paged, _reference, needs_sm90

pytestmark = pytest.mark.gpu

CASES = [  # (page, batch, KV heads, seq_q, group, lengths' seed or list, splits, split_by)
    (16, 4, 2, 1, 4, [4096, 3001, 1000, 17], 4, None),
    (256, 4, 2, 8, 8, [4096, 2500, 257, 4000], 2, "longest"),
    (16, 4, 2, 16, 8, [512, 333, 100, 16], 3, "longest"),  # 128 rows: two M blocks
    (16, 64, 8, 2, 4, None, 4, None),  # 2,048 items on 132 CTAs, longest first
]


@needs_sm90
@pytest.mark.parametrize("way", ["fused", "pdl"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"p{c[0]}-b{c[1]}-q{c[3]}-g{c[4]}-s{c[6]}")
def test_gluon_merge_matches_fp32_and_the_kernel_merge_and_repeats(case, way):
    from harness_kernels.triton.attention_decode import prepare_decode
    from harness_kernels.triton.attention_decode_gluon import gluon_decode_configs

    page, batch, h_kv, seq_q, group, lens, splits, by = case
    gen = torch.Generator().manual_seed(71)
    if lens is None:
        lens = [int(x) for x in torch.randint(17, 1500, (batch,), generator=gen)]
        lens[0] = 1500
    k, v, table = _paged(batch, h_kv, lens, page, 128, gen)
    q = torch.randn(batch, h_kv * group, seq_q, 128, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    ref = _reference(q, k, v, lens, table, page, causal=True)
    tile = gluon_decode_configs(128, page, 16)[0]
    cfg = {key: val for key, val in tile.items() if key != "BLOCK_M"}
    cfg = dict(cfg, split_by=by) if by else cfg

    def prepare(reduce: str):
        return prepare_decode(
            q,
            k,
            v,
            cache_seqlens=seqlens,
            block_table=table,
            configs=[cfg],
            num_splits=splits,
            tune=False,
            reduce=reduce,
        )

    merged, kernel = prepare(way), prepare("kernel")
    assert merged.config["impl"] == "gluon" and merged.config["reduce"] == way
    assert merged.config["num_splits"] == splits and kernel.config["reduce"] == "kernel"
    first = merged().clone()
    for _ in range(200):  # many launches: a race shows as a launch that differs
        assert torch.equal(merged(), first)
    torch.cuda.synchronize()
    assert torch.isfinite(first).all()
    assert (first.float() - ref).abs().max().item() < 3e-2
    # the same partials, merged by the reduction kernel: the same online sum in another order
    torch.testing.assert_close(first.float(), kernel().float(), rtol=0, atol=2e-2)


@needs_sm90
def test_the_tl_kernels_pdl_merge_matches_its_kernel_merge_and_repeats():
    """The `tl` split kernel (not persistent: more programs than SMs) with its reduction
    launched as a programmatic dependent: the dependent waits in its first instruction, so the
    bits are the plain launch's."""
    from harness_kernels.triton.attention_configs import _cfg
    from harness_kernels.triton.attention_decode import prepare_decode

    gen = torch.Generator().manual_seed(73)
    lens = [4096, 3001, 1000, 17] * 4
    k, v, table = _paged(16, 8, lens, 16, 128, gen)
    q = torch.randn(16, 32, 1, 128, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    cfg = {k_: v_ for k_, v_ in _cfg(16, 64, 4, 3).items() if k_ != "BLOCK_M"}

    def prepare(reduce: str):
        return prepare_decode(
            q,
            k,
            v,
            cache_seqlens=seqlens,
            block_table=table,
            configs=[cfg],
            num_splits=8,
            tune=False,
            reduce=reduce,
        )

    pdl, kernel = prepare("pdl"), prepare("kernel")
    assert pdl.config["impl"] == "tl" and pdl.config["reduce"] == "pdl"
    first = pdl().clone()
    for _ in range(200):
        assert torch.equal(pdl(), first)
    torch.cuda.synchronize()
    assert torch.equal(first, kernel())
    ref = _reference(q, k, v, lens, table, 16, causal=True)
    assert (first.float() - ref).abs().max().item() < 3e-2


@needs_sm90
def test_the_tuner_times_every_merge_for_a_gluon_split():
    """Unpinned, a Gluon split config's merge is timed every way (the `tl` kernel's too), and
    provider_config says which won and that it was tuned."""
    from harness_kernels.triton.attention_decode import prepare_decode
    from harness_kernels.triton.attention_decode_gluon import gluon_decode_configs

    gen = torch.Generator().manual_seed(72)
    lens = [4096, 3500, 2100, 2048] * 4
    k, v, table = _paged(16, 4, lens, 16, 128, gen)
    q = torch.randn(16, 32, 1, 128, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    cfg = {k_: v_ for k_, v_ in gluon_decode_configs(128, 16, 16)[0].items() if k_ != "BLOCK_M"}
    launch = prepare_decode(
        q, k, v, cache_seqlens=seqlens, block_table=table, configs=[cfg], num_splits=4
    )
    assert launch.config["impl"] == "gluon" and launch.config["num_splits"] == 4
    assert launch.config["reduce"] in ("fused", "kernel", "pdl")
    assert launch.config["reduce_source"] in ("tuned", "cache")
    merges = launch.config["reduce_timings_ms"]  # every way timed, the winner the fastest
    assert set(merges) == {"kernel", "fused", "pdl"}
    assert min(merges, key=merges.get) == launch.config["reduce"]
    ref = _reference(q, k, v, lens, table, 16, causal=True)
    assert (launch().float() - ref).abs().max().item() < 3e-2
