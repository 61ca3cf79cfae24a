"""Debug probe (session 65): the balanced runs' schedule as the device records it (`run`), and
every segment's partial against fp32 (`partials`). Needs c0e3fb7's kernel and launcher, with a
`Dbg` buffer argument added for `run`."""

import math
import sys

import torch

sys.path.insert(0, "tests/gpu")
sys.path.insert(0, "tests/kernels")
import harness_kernels.triton.attention_decode_gluon as G
from test_decode_balanced_plan import _segments
from test_decode_gluon_gpu import _paged


def run(lens, h_kv, sms, page=16, tile=0):
    gen = torch.Generator().manual_seed(64)
    batch, d, group = len(lens), 128, 4
    k, v, table = _paged(batch, h_kv, lens, page, d, gen)
    q = torch.randn(batch, h_kv * group, 1, d, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    cfg = dict(G.gluon_decode_configs(d, page, 16)[tile], split_by="balanced")
    cap = table.shape[1] * page
    ctas, per_min, slots = G.balanced_plan(seqlens, h_kv, cfg["BLOCK_N"], cap, sms)
    G.DBG = torch.full((132 * 16 * 16 + 132 * 8,), -7, dtype=torch.int32, device="cuda")
    out = torch.empty_like(q)
    o_part = torch.zeros((batch, h_kv * group, 1, slots, d), device="cuda")
    lse_part = torch.zeros((batch, h_kv * group, 1, slots), device="cuda")
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
        longest=max(lens),
        causal=True,
        sm_scale=0.1,
        sms=sms,
        capacity=cap,
    )()
    torch.cuda.synchronize()
    dbg = G.DBG.cpu()
    print(f"lens {lens} h_kv {h_kv} sms {sms}: ctas {ctas} per_min {per_min} slots {slots}")
    model = _segments(lens, h_kv, 1, cfg["BLOCK_N"], ctas, per_min)
    for pid in range(ctas):
        pro = dbg[132 * 256 + pid * 8 : 132 * 256 + pid * 8 + 5].tolist()
        mine = [m for m in model if m[0] == pid]
        segs = []
        for kk in range(16):
            row = dbg[(pid * 16 + kk) * 16 : (pid * 16 + kk + 1) * 16].tolist()
            if row[0] == -7 and row[8] == -7:
                break
            segs.append(row)
        len(segs) == len(mine) and all(
            s[1] == m[1]
            and s[2] == m[2]
            and s[3] == m[5]
            and s[4] == m[4]
            and s[9] == m[1]
            and s[10] == m[2]
            and s[11] == m[5]
            and s[12] == m[4]
            for s, m in zip(segs, mine, strict=False)
        )
        if True:
            print(f" pid {pid} prologue (x0 x1 per b0 base) {pro}")
            print(f"   model (b unit first n slot last) {[m[1:] for m in mine]}")
            for s in segs:
                print(
                    f"   prod x b hkv slot n kv t k {s[:8]} | cons x b hkv slot n kv nfull lo {s[8:]}"
                )


def partials(lens, h_kv, sms, page=16, tile=0, nan=True):
    """Every segment's partial (O and lse) against its own keys in fp32."""
    gen = torch.Generator().manual_seed(64)
    batch, d, group = len(lens), 128, 4
    k, v, table = _paged(batch, h_kv, lens, page, d, gen)
    if not nan:
        k, v = torch.nan_to_num(k, nan=0.25), torch.nan_to_num(v, nan=0.25)
    q = torch.randn(batch, h_kv * group, 1, d, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    cfg = dict(G.gluon_decode_configs(d, page, 16)[tile], split_by="balanced")
    bn = cfg["BLOCK_N"]
    cap = table.shape[1] * page
    ctas, per_min, slots = G.balanced_plan(seqlens, h_kv, bn, cap, sms)
    G.DBG = torch.full((132 * 16 * 16 + 132 * 8,), -7, dtype=torch.int32, device="cuda")
    out = torch.empty_like(q)
    o_part = torch.full((batch, h_kv * group, 1, slots, d), math.nan, device="cuda")
    lse_part = torch.full((batch, h_kv * group, 1, slots), math.nan, device="cuda")
    sm = 0.1
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
        longest=max(lens),
        causal=True,
        sm_scale=sm,
        sms=sms,
        capacity=cap,
    )()
    torch.cuda.synchronize()
    model = _segments(lens, h_kv, 1, bn, ctas, per_min)
    print(f"partials: lens {lens} sms {sms} nan {nan}")
    for pid, b, u, first, n, slot, _last in model:
        n_keys = lens[b]
        ids = table[b, : math.ceil(n_keys / page)].long()
        kb = k[ids].reshape(-1, h_kv, d)[:n_keys, u].float()
        vb = v[ids].reshape(-1, h_kv, d)[:n_keys, u].float()
        lo, hi = first * bn, min((first + n) * bn, n_keys)
        qh = q[b, u * group : (u + 1) * group, 0].float()
        s2 = (qh @ kb[lo:hi].T) * sm * 1.4426950408889634
        m = s2.max(-1, keepdim=True).values
        p = torch.exp2(s2 - m)
        o_ref = (p @ vb[lo:hi]) / p.sum(-1, keepdim=True)
        lse_ref = (m + torch.log2(p.sum(-1, keepdim=True))).squeeze(-1)
        o_got = o_part[b, u * group : (u + 1) * group, 0, slot]
        lse_got = lse_part[b, u * group : (u + 1) * group, 0, slot]
        eo = (o_got - o_ref).abs().max().item()
        el = (lse_got - lse_ref).abs().max().item()
        if not (eo < 2e-2 and el < 2e-2):
            print(
                f"  pid {pid} b{b} hkv{u} first {first} n {n} slot {slot} keys [{lo},{hi}): "
                f"O err {eo:.3g} lse err {el:.3g} lse got {lse_got.tolist()} ref {lse_ref.tolist()}"
            )


if __name__ == "__main__":
    import ast

    if sys.argv[1] == "run":
        run(*ast.literal_eval(sys.argv[2]))
    else:
        partials(*ast.literal_eval(sys.argv[1]))
