"""Debug (session 65): Q and K shared-memory checksums the consumer sees at each segment's
first tile, balanced against the per-item path, for [1000, 17] on one CTA."""

import math
import sys

import torch

sys.path.insert(0, "tests/gpu")
import harness_kernels.triton.attention_decode_gluon as G
from test_decode_gluon_gpu import _paged

lens, h_kv, group, d, page = [1000, 17], 2, 4, 128, 16
gen = torch.Generator().manual_seed(64)
k, v, table = _paged(2, h_kv, lens, page, d, gen)
q = torch.randn(2, h_kv * group, 1, d, generator=gen).to("cuda", torch.bfloat16)
seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
cap = table.shape[1] * page
for by in (None, "balanced"):
    cfg = dict(G.gluon_decode_configs(d, page, 16)[0], split_by=by)
    slots = G.balanced_plan(seqlens, h_kv, 64, cap, 1)[2] if by else 1
    G.DBG = torch.full((16 * 4,), math.nan, device="cuda")
    out = torch.empty_like(q)
    o_part = torch.zeros((2, 8, 1, max(slots, 2), d), device="cuda")
    lse_part = torch.zeros((2, 8, 1, max(slots, 2)), device="cuda")
    G.gluon_split_launch(
        q,
        k,
        v,
        out,
        o_part,
        lse_part,
        seqlens,
        table,
        cfg=cfg,
        splits=slots,
        m_blocks=1,
        longest=1000,
        causal=True,
        sm_scale=0.1,
        sms=1,
        capacity=cap,
    )()
    torch.cuda.synchronize()
    print(by, [round(x, 3) for x in G.DBG[:16].tolist()])
# expected: Q rows 0..3 of each (b, hkv) and K rows 0..15 of each unit's first tile
for b, u in ((0, 0), (0, 1), (1, 0), (1, 1)):
    qs = q[b, u * group : (u + 1) * group, 0].float().sum().item()
    ks = k[table[b, 0].long(), :, u].float().sum().item()
    print("expect", b, u, round(qs, 3), round(ks, 3))
