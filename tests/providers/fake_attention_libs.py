"""Stand-ins for flashinfer and flash_attn.cute on the CPU: the entry points the providers call,
with the argument layouts and checks their documentation and interface code state, computing
attention with the fp32 reference. A provider that converts our layout wrongly fails the check.

Install with install_flashinfer(monkeypatch) / install_fa4(monkeypatch); each returns the fake
module, whose `calls` list records (api, details) for the tests to read.
"""

from __future__ import annotations

import sys
import types
from enum import Enum

import torch

from harness.problems.attention import attention_reference


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """Token-major q [Sq, Hq, D], k and v [Skv, Hkv, D] -> [Sq, Hq, D] in q's dtype."""
    assert q.shape[1] % k.shape[1] == 0, "num_qo_heads must be a multiple of num_kv_heads"
    o = attention_reference(
        q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None], causal
    )
    return o[0].transpose(0, 1).to(q.dtype)


def _int32(**tensors: torch.Tensor) -> None:
    for name, t in tensors.items():
        assert t.dtype == torch.int32 and t.dim() == 1, f"{name} must be 1-D int32"


def _pages_of(cache, indptr, indices, last, b: int, page_size: int) -> torch.Tensor:
    """Sequence b's tokens from FlashInfer's CSR page table (flashinfer.page.get_seq_lens)."""
    pages = indices[int(indptr[b]) : int(indptr[b + 1])].long()
    if len(pages) == 0:
        return cache[:0].reshape(0, *cache.shape[2:])
    assert 1 <= int(last[b]) <= page_size, "1 <= kv_last_page_len <= page_size"
    seq = cache[pages].reshape(-1, *cache.shape[2:])  # [n * P, Hkv, D]
    return seq[: (len(pages) - 1) * page_size + int(last[b])]


def install_flashinfer(monkeypatch) -> types.ModuleType:
    fi = types.ModuleType("flashinfer")
    fi.__version__ = "0.0.0+fake"
    fi.calls = []

    def single_decode_with_kv_cache(q, k, v, kv_layout="NHD", use_tensor_cores=False):
        assert kv_layout == "NHD" and q.dim() == 2 and k.dim() == 3 and q.shape[-1] == k.shape[-1]
        fi.calls.append(("single_decode", {"use_tensor_cores": use_tensor_cores}))
        return _attend(q[None], k, v, False)[0]  # [Hq, D]

    def single_prefill_with_kv_cache(q, k, v, causal=False, kv_layout="NHD"):
        assert kv_layout == "NHD" and q.dim() == 3 and k.shape == v.shape
        fi.calls.append(("single_prefill", {"causal": causal}))
        return _attend(q, k, v, causal)

    class _Wrapper:
        def __init__(self, workspace, kv_layout="NHD", use_tensor_cores=False, backend="auto"):
            assert workspace.dtype == torch.uint8 and kv_layout == "NHD"
            self.use_tensor_cores = use_tensor_cores
            self.backend = backend
            self.planned = None

        def _run_paged(self, q, kv, out, q_per_seq):
            kc, vc = kv
            p = self.planned
            assert kc.shape[1:] == (p["page_size"], p["num_kv_heads"], p["head_dim"])
            batch = len(p["indptr"]) - 1
            assert out.shape == q.shape and out.dtype == q.dtype
            for b in range(batch):
                rows = slice(b * q_per_seq, (b + 1) * q_per_seq)
                k = _pages_of(kc, p["indptr"], p["indices"], p["last"], b, p["page_size"])
                v = _pages_of(vc, p["indptr"], p["indices"], p["last"], b, p["page_size"])
                out[rows] = _attend(q[rows], k, v, p.get("causal", False))
            return out

    class BatchDecodeWithPagedKVCacheWrapper(_Wrapper):
        resolved_backend = "fa2"

        def plan(
            self, indptr, indices, last, num_qo_heads, num_kv_heads, head_dim, page_size, **kw
        ):
            _int32(indptr=indptr, indices=indices, last_page_len=last)
            self.planned = dict(
                indptr=indptr,
                indices=indices,
                last=last,
                page_size=page_size,
                num_kv_heads=num_kv_heads,
                head_dim=head_dim,
            )
            fi.calls.append(("batch_decode_paged", {**kw, "tc": self.use_tensor_cores}))

        def run(self, q, kv, out=None):
            return self._run_paged(q, kv, out, 1)

    class BatchPrefillWithPagedKVCacheWrapper(_Wrapper):
        def plan(
            self,
            qo_indptr,
            indptr,
            indices,
            last,
            num_qo_heads,
            num_kv_heads,
            head_dim,
            page_size,
            causal=False,
            **kw,
        ):
            _int32(qo_indptr=qo_indptr, indptr=indptr, indices=indices, last_page_len=last)
            self.planned = dict(
                indptr=indptr,
                indices=indices,
                last=last,
                page_size=page_size,
                num_kv_heads=num_kv_heads,
                head_dim=head_dim,
                causal=causal,
                qo=qo_indptr,
            )
            self._backend = "fa3" if self.backend == "auto" else self.backend  # auto: Hopper's
            fi.calls.append(("batch_prefill_paged", {**kw, "causal": causal}))

        def run(self, q, kv, out=None):
            qo = self.planned["qo"]
            return self._run_paged(q, kv, out, int(qo[1] - qo[0]))

    class BatchPrefillWithRaggedKVCacheWrapper(_Wrapper):
        def plan(
            self, qo_indptr, kv_indptr, num_qo_heads, num_kv_heads, head_dim, causal=False, **kw
        ):
            _int32(qo_indptr=qo_indptr, kv_indptr=kv_indptr)
            self.planned = dict(qo=qo_indptr, kv=kv_indptr, causal=causal)
            self._backend = "fa3"
            fi.calls.append(("batch_prefill_ragged", {**kw, "causal": causal}))

        def run(self, q, k, v, out=None):
            qo, kv = self.planned["qo"], self.planned["kv"]
            assert out.shape == q.shape and int(qo[-1]) == len(q) and int(kv[-1]) == len(k)
            for b in range(len(qo) - 1):
                rows, keys = slice(int(qo[b]), int(qo[b + 1])), slice(int(kv[b]), int(kv[b + 1]))
                out[rows] = _attend(q[rows], k[keys], v[keys], self.planned["causal"])
            return out

    utils = types.ModuleType("flashinfer.utils")

    class PosEncodingMode(Enum):
        NONE = 0

    utils.PosEncodingMode = PosEncodingMode
    utils.determine_attention_backend = lambda *a, **kw: "fa3"
    fi.single_decode_with_kv_cache = single_decode_with_kv_cache
    fi.single_prefill_with_kv_cache = single_prefill_with_kv_cache
    fi.BatchDecodeWithPagedKVCacheWrapper = BatchDecodeWithPagedKVCacheWrapper
    fi.BatchPrefillWithPagedKVCacheWrapper = BatchPrefillWithPagedKVCacheWrapper
    fi.BatchPrefillWithRaggedKVCacheWrapper = BatchPrefillWithRaggedKVCacheWrapper
    fi.utils = utils
    monkeypatch.setitem(sys.modules, "flashinfer", fi)
    monkeypatch.setitem(sys.modules, "flashinfer.utils", utils)
    return fi


def install_fa4(monkeypatch) -> types.ModuleType:
    pkg = types.ModuleType("flash_attn")
    pkg.__path__ = []  # a namespace package holding only cute/, as the flash-attn-4 wheel does
    cute = types.ModuleType("flash_attn.cute")
    cute.calls = []

    def _check_bshd(q, v):
        assert q.dim() == 4 and q.is_contiguous() and q.dtype == v.dtype
        assert q.shape[2] % v.shape[-2] == 0, "num_head must be divisible by num_head_kv"

    def flash_attn_func(q, k, v, causal=False, num_splits=1):
        _check_bshd(q, v)
        assert k.shape == v.shape and k.shape[0] == q.shape[0] and k.is_contiguous()
        cute.calls.append(("flash_attn_func", {"causal": causal, "num_splits": num_splits}))
        out = torch.stack([_attend(q[b], k[b], v[b], causal) for b in range(q.shape[0])])
        return out, None

    def flash_attn_varlen_func(
        q, k, v, seqused_k=None, page_table=None, causal=False, num_splits=1
    ):
        _check_bshd(q, v)
        assert page_table.dtype == torch.int32 and page_table.stride(-1) == 1
        assert page_table.shape[0] == q.shape[0] and seqused_k.dtype == torch.int32
        cute.calls.append(("flash_attn_varlen_func", {"causal": causal, "num_splits": num_splits}))
        outs = []
        for b in range(q.shape[0]):
            seq = k[page_table[b].long()].reshape(-1, *k.shape[2:])[: int(seqused_k[b])]
            vals = v[page_table[b].long()].reshape(-1, *v.shape[2:])[: int(seqused_k[b])]
            outs.append(_attend(q[b], seq, vals, causal))
        return torch.stack(outs), None

    cute.flash_attn_func = flash_attn_func
    cute.flash_attn_varlen_func = flash_attn_varlen_func
    pkg.cute = cute
    monkeypatch.setitem(sys.modules, "flash_attn", pkg)
    monkeypatch.setitem(sys.modules, "flash_attn.cute", cute)
    return cute


def block(monkeypatch, *modules: str) -> None:
    """Make `import <module>` fail, as where the package is absent (None in sys.modules)."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)
