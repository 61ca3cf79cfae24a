"""tile_example_fmha_fwd's command line and its result line.

The binary (CK's example/ck_tile/01_fmha/fmha_fwd.cpp) makes its own inputs (-init, -seed),
times `repeat` back-to-back launches after `warmup` ones between one pair of hipEvents on the
same buffers (no cache flush: the L2 is hot) and prints their mean, then, with -v=1, checks the
output against its own CPU reference. One line on stdout:

    [fp16|batch|bhsd] b:1, h:32/8, s:4096/4096, d:128/128, scale_s:0.0883883, bias:n,
    p_drop:0, lse:0, squant:0, mask:t(-1:0), v:r, fmha_fwd_d128_fp16_batch_shb_..._qr_vr_psddv_mask,
    3.955 ms, 69.50 TFlops, 33.94 GB/s, valid:y

(wrapped here). The kernel name appears with -kname=1; ", valid:y|n" with -v=1; a problem no
generated kernel covers ends in ", not supported yet". The time is printed to 1 us; CK's TFlops
count the full s_q x s_k score matrix even under a causal mask, and its GB/s count K and V once
per query head, so callers recompute both from their own work counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# CK's tolerances for its -v=1 check (fmha_fwd.cpp get_elimit): rtol = atol per dtype.
CK_TOLERANCE = {"fp16": 1e-3, "bf16": 1e-2}


def command_args(
    batch: int,
    q_heads: int,
    kv_heads: int,
    q_len: int,
    kv_len: int,
    head_dim: int,
    causal: bool,
    prec: str,
    *,
    validate: bool,
    seed: int,
    warmup: int = 5,
    repeat: int = 20,
) -> list[str]:
    """Arguments (after the program name) for one forward problem in [B, H, S, D] layout.

    Causal masks are bottom-right aligned like the harness's: "b"; when q_len == kv_len the
    top-left mask is the same mask and is written "t" (the thesis's command line)."""
    if seed <= 0:
        raise ValueError(f"seed: {seed} would make CK draw a random seed; allowed: >= 1")
    mask = ("t" if q_len == kv_len else "b") if causal else "0"
    return [
        f"-b={batch}",
        f"-h={q_heads}",
        f"-h_k={kv_heads}",
        f"-s={q_len}",
        f"-s_k={kv_len}",
        f"-d={head_dim}",
        f"-mask={mask}",
        f"-prec={prec}",
        f"-v={int(validate)}",
        "-kname=1",
        "-mode=0",  # batch mode: every sequence has the same length
        "-iperm=1",  # inputs [B, H, S, D]
        "-operm=1",  # output [B, H, S, D]
        "-vlayout=r",
        "-bias=n",
        "-lse=0",
        "-p_drop=0",
        "-squant=0",
        "-init=uf",
        f"-seed={seed}",
        f"-warmup={warmup}",
        f"-repeat={repeat}",
        "-timer=gpu",
    ]


@dataclass(frozen=True)
class CkResult:
    """What one run printed."""

    header: dict[str, str]  # prec, mode, layout, b, h, h_k, s, s_k, d, d_v, mask
    kernel: str | None
    ms: float | None  # mean over `repeat` launches
    tflops: float | None  # CK's own count (see module docstring)
    gbps: float | None
    valid: bool | None  # None without -v=1
    unsupported: bool

    def matches(self, args: list[str]) -> str | None:
        """Why the header does not describe the problem `args` asked for, or None."""
        want = dict(a[1:].split("=", 1) for a in args)
        keys = {"b": "b", "h": "h", "h_k": "h_k", "s": "s", "s_k": "s_k", "d": "d", "prec": "prec"}
        bad = [
            f"{k}={self.header.get(h)} (asked {want[k]})"
            for k, h in keys.items()
            if k in want and self.header.get(h) != want[k]
        ]
        mask = self.header.get("mask", "")
        if "mask" in want and mask[:1] != {"0": "n"}.get(want["mask"], want["mask"][:1]):
            bad.append(f"mask={mask} (asked {want['mask']})")
        return "; ".join(bad) or None


_HEADER = re.compile(
    r"\[(?P<prec>\w+)\|(?P<mode>\w+)\|(?P<layout>[\w-]+)\]\s*b:(?P<b>\d+),\s*h:(?P<h>\d+)/"
    r"(?P<h_k>\d+),\s*s:(?P<s>\d+)/(?P<s_k>\d+)(?:\(\d+\))?,\s*d:(?P<d>\d+)/(?P<d_v>\d+)"
    r"(?:.*?mask:(?P<mask>[^,\s]+))?",
    re.S,
)
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|inf|nan)"
_RESULT = re.compile(
    r",\s*(?:(?P<kernel>fmha_\w+)\s*,\s*)?(?P<ms>"
    + _NUM
    + r")\s*ms,\s*(?P<tflops>"
    + _NUM
    + r")\s*TFlops,\s*(?P<gbps>"
    + _NUM
    + r")\s*GB/s(?:,\s*valid:(?P<valid>[yn]))?"
)


def parse_output(text: str) -> CkResult:
    """Parse one run's stdout (lines may be wrapped); raises ValueError on anything else."""
    head = _HEADER.search(text)
    if head is None:
        raise ValueError(f"no CK FMHA header line in output: {text.strip()[-300:]!r}")
    header = {k: v for k, v in head.groupdict().items() if v is not None}
    rest = text[head.end() :]
    if "not supported yet" in rest:
        return CkResult(header, None, None, None, None, None, True)
    results = list(_RESULT.finditer(rest))
    if not results:
        raise ValueError(f"no CK result (ms, TFlops, GB/s) in output: {rest.strip()[-300:]!r}")
    res = results[-1]  # the forward kernel's (append-KV, when built in, prints first)
    valid = res.group("valid")
    return CkResult(
        header,
        res.group("kernel"),
        float(res.group("ms")),
        float(res.group("tflops")),
        float(res.group("gbps")),
        None if valid is None else valid == "y",
        False,
    )
