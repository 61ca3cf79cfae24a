"""Debug probe for the Gluon decode's balanced runs on an sm_90 GPU: the split kernel launched
directly at several CTA counts, its partial slots and per-unit errors against fp32.

    python3 scripts/balanced_debug.py
"""

from __future__ import annotations

import math
import sys

import torch

sys.path.insert(0, "tests/gpu")
from harness_kernels.triton.attention_decode_gluon import (  # noqa: E402
    balanced_plan,
    gluon_decode_configs,
    gluon_split_launch,
)
from harness_kernels.triton.attention_decode_kernel import _decode_reduce_kernel  # noqa: E402
from test_decode_gluon_gpu import _paged, _reference  # noqa: E402


def probe(lens, h_kv, group, seq_q, page, sms, tile=0, nan=True, by="balanced", splits=1):
    gen = torch.Generator().manual_seed(64)
    batch, d = len(lens), 128
    k, v, table = _paged(batch, h_kv, lens, page, d, gen)
    if not nan:  # the slots past each end hold numbers, not NaN
        k = torch.nan_to_num(k, nan=0.5)
        v = torch.nan_to_num(v, nan=0.5)
    q = torch.randn(batch, h_kv * group, seq_q, d, generator=gen).to("cuda", torch.bfloat16)
    seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    ref = _reference(q, k, v, lens, table, page, causal=True)
    cfg = dict(gluon_decode_configs(d, page, 16)[tile], split_by=by)
    m_blocks = math.ceil(group * seq_q / 64)
    cap = table.shape[1] * page
    ctas, per_min, slots = balanced_plan(seqlens, h_kv * m_blocks, cfg["BLOCK_N"], cap, sms)
    if by != "balanced":
        ctas, per_min, slots = min(sms, batch * h_kv * m_blocks * splits), 0, splits
    h_q = h_kv * group
    out = torch.full_like(q, math.nan)
    o_part = torch.full((batch, h_q, seq_q, slots, d), math.nan, device="cuda")
    lse_part = torch.full((batch, h_q, seq_q, slots), math.nan, device="cuda")
    fn = gluon_split_launch(
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
        m_blocks=m_blocks,
        longest=max(lens),
        causal=True,
        sm_scale=1 / math.sqrt(d),
        sms=sms,
        capacity=cap,
    )
    fn()
    if slots == 1:
        torch.cuda.synchronize()
        err = (out.float() - ref).abs().amax(dim=(2, 3))
        print(
            f"{by} nan {nan} lens {lens} h_kv {h_kv} sms {sms} splits 1: max err "
            f"{err.max().item():.3g}; per (b, hkv): "
            + " ".join(
                f"{err[b, h].item():.2g}"
                for b in range(batch)
                for h in range(0, h_kv * group, group)
            )
        )
        return
    p2 = 1 << (slots - 1).bit_length()
    _decode_reduce_kernel[(batch * h_q * seq_q,)](
        o_part,
        lse_part,
        out,
        h_q,
        seq_q,
        slots,
        *out.stride()[:3],
        HEAD_DIM=d,
        SPLITS_POW2=p2,
        num_warps=2 if p2 <= 32 else 4,
    )
    torch.cuda.synchronize()
    err = (out.float() - ref).abs().amax(dim=(2, 3))  # [B, Hq]
    print(
        f"{by} nan {nan} lens {lens} h_kv {h_kv} group {group} q {seq_q} page {page} sms {sms} tile "
        f"{cfg['BLOCK_N']}x{cfg['num_stages']}: ctas {ctas} per_min {per_min} slots {slots} "
        f"max err {err.max().item():.3g}"
    )
    if err.max().item() > 3e-2 and slots > 1:
        for b in range(batch):
            for h in range(0, h_q, group):
                state = "".join(
                    "N" if math.isnan(x) else "-" if x == -math.inf else "#"
                    for x in lse_part[b, h, 0].tolist()
                )
                print(f"  b{b} hkv{h // group} err {err[b, h].item():.3g} lse slots {state}")


if __name__ == "__main__":
    for lens, sms, splits in (
        ([1000, 17], 1, 1),
        ([17, 1000], 1, 1),
        ([17, 1000], 2, 1),
        ([1000, 17, 1000, 17], 1, 1),
        ([1000, 17, 1000, 17], 2, 1),
        ([1000, 17], 1, 2),
        ([300, 17, 5, 1000], 1, 1),
    ):
        try:
            probe(lens, 2, 4, 1, 16, sms, by=None, splits=splits)
        except Exception as exc:  # noqa: BLE001
            print(lens, sms, splits, type(exc).__name__, str(exc)[:100])
            break
