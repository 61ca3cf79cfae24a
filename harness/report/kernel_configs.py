"""What a row says its kernel ran, in the words of `harness gaps`: the own kernel's choice in a
few words, the equal-cost work units it launched and the SM fill they give, and the vendor
row's kernels and CTAs as harness.measure.kernel_names recorded them. Reads provider_config
only (JSON text); pandas-free, so a table row or a test's dict will do.
"""

from __future__ import annotations

import json
import math
import re


def config_of(row: dict) -> dict:
    """The row's provider_config as a dict ({} where absent or not JSON)."""
    text = row.get("provider_config")
    try:
        return json.loads(text) if isinstance(text, str) and text else {}
    except json.JSONDecodeError:
        return {}


def to_int(v) -> int | None:
    """v as an int; None for None, NaN or what does not convert."""
    try:
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)
    except (TypeError, ValueError):
        return None


def _cutlass_units(row: dict, cfg: dict) -> int | None:
    """Output tiles x K splits of a CUTLASS GEMM; None under stream-K (balanced by design).

    The stream-K scheduler (`scheduler` "stream-k") left to its heuristic decides per launch
    whether to split K: a workspace says it did (how, the row does not record: None), none
    that it ran data-parallel, one unit per output tile (H200 `gemm_llama_lowp-tf32-r3`,
    128x4096x14336 nn: 2.1 MB of workspace, 0.093 ms against 0.173 data-parallel)."""
    opts = str(cfg.get("run_options", ""))
    scheduler = str(cfg.get("scheduler", "")).lower().replace("_", "-")
    split_by_heuristic = (
        scheduler in ("stream-k", "streamk")
        and opts.startswith("heuristic")
        and (to_int(cfg.get("workspace_bytes")) or 0) > 0
    )
    if opts.startswith("stream-k") or split_by_heuristic:
        return None
    try:
        tm, tn = (int(x) for x in str(cfg["tile"]).split("x")[:2])
    except (KeyError, ValueError):
        return None
    m, n = to_int(row.get("m")), to_int(row.get("n"))
    if not m or not n:
        return None
    if cfg.get("swap_ab"):  # the kernel computes C^T: its tile rows run along N
        m, n = n, m
    splits = int(opts.split("x")[1].split("/")[0]) if opts.startswith("split-k") else 1
    return math.ceil(m / tm) * math.ceil(n / tn) * splits


def work_units(row: dict) -> int | None:
    """Equal-cost work units the own kernel launched, from its recorded config (None: unknown,
    or units of unequal cost such as causal prefill Q blocks)."""
    cfg = config_of(row)
    if cfg.get("stream_k"):  # equal K shares per program: balanced by design
        return None
    if isinstance(cfg.get("units"), int | float):  # own Triton GEMM: tiles x splits
        return int(cfg["units"])
    # own Triton's Gluon GEMM: equal output tiles (x K splits) dealt over a persistent grid
    if cfg.get("kernel") in ("gemm_gluon_ws", "gluon-ws") and isinstance(cfg.get("tiles"), int):
        return int(cfg["tiles"]) * int(cfg.get("split_k") or 1)
    if cfg.get("library") == "own-cutlass":
        return _cutlass_units(row, cfg)
    if cfg.get("kernel") == "attn_decode" and cfg.get("programs"):
        return int(cfg["programs"])
    # non-causal prefill, `tl` or Gluon (neither persistent): one program per Q block and head
    prefill = cfg.get("kernel") in ("attn_prefill", "attn_prefill_gluon")
    if prefill and cfg.get("BLOCK_M") and not row.get("causal"):
        b, h, q = to_int(row.get("batch")), to_int(row.get("q_heads")), to_int(row.get("q_len"))
        if b and h and q:
            return b * h * math.ceil(q / int(cfg["BLOCK_M"]))
    return None


def own_config(row: dict) -> str:
    """The own kernel's choice in a few words: a CUTLASS config and its run options, a Triton
    GEMM tile (with its split), an attention tile; "" when the row records none."""
    cfg = config_of(row)
    if cfg.get("library") == "own-cutlass" and cfg.get("variant"):
        return f"{cfg['variant']} {cfg.get('run_options', '')}".strip()
    if cfg.get("kernel") in ("gemm_gluon_ws", "gluon-ws"):  # own Gluon GEMM (warp-specialized)
        tile = f"{cfg['block_m']}x{cfg.get('block_n')}x{cfg.get('block_k')}"
        split = f" split-K {cfg['split_k']}" if (cfg.get("split_k") or 1) > 1 else ""
        return f"{tile} Gluon {cfg.get('schedule', 'cooperative')} s{cfg.get('num_stages')}{split}"
    if "block_m" in cfg:  # own Triton GEMM
        tile = f"{cfg['block_m']}x{cfg.get('block_n')}x{cfg.get('block_k')}"
        split = " stream-K" if cfg.get("stream_k") else ""
        if (cfg.get("split_k") or 1) > 1:
            split = f" split-K {cfg['split_k']}"
            split += " (summed apart)" if cfg.get("reduce_apart") else ""
        swap = " swapped (C^T)" if cfg.get("swap_ab") else ""  # the tile is [N, M]'s
        return f"{tile} w{cfg.get('num_warps')} s{cfg.get('num_stages')}{split}{swap}"
    if "consumers" in cfg:  # own Gluon attention: warp-specialized, no num_warps/num_stages
        tile = f"{cfg['BLOCK_M']}x{cfg.get('BLOCK_N')} {cfg['consumers']} consumers s{cfg.get('STAGES')}"
        tile += ", persistent" if cfg.get("persistent") else ""
        # the consumers taking turns to issue (session 102; rows before it record none)
        tile += ", ping-pong" if cfg.get("pingpong") else ""
        # which CTA ran which query tile (session 101; rows before it record no order)
        return tile + (f", {cfg['order']}" if cfg.get("order") else "")
    if "BLOCK_M" in cfg:  # own Triton attention
        tile = f"{cfg['BLOCK_M']}x{cfg.get('BLOCK_N')} w{cfg.get('num_warps')} s{cfg.get('num_stages')}"
        splits = to_int(cfg.get("num_splits"))
        runs, ctas = to_int(cfg.get("balanced_tiles_per_cta")), to_int(cfg.get("balanced_ctas"))
        block_n = to_int(cfg.get("BLOCK_N"))
        if cfg.get("split_by") == "balanced" and runs and ctas and block_n:
            # num_splits is its partial slots per unit there, not splits of each sequence
            return f"{tile}, balanced runs of >= {runs * block_n:,} keys on {ctas} CTAs"
        if cfg.get("kernel") == "attn_decode" and splits and splits > 1:
            # the keys each program streams: its fixed cost (first pages, the merge) is spread
            # over them (H200 fmha_decode_serving-s58: <= 1,100 keys reached 0.72-0.76 of a
            # read of the same bytes, 8-16k keys 0.96)
            cut = "longest" if cfg.get("split_by") == "longest" else "own length"
            longest = to_int(cfg.get("max_kv_len"))
            keys = f" of <= {math.ceil(longest / splits):,} keys" if longest else ""
            tile = f"{tile}, {splits} splits{keys} (by the {cut})"
        if cfg.get("item_order") == "longest-first":  # the Gluon decode (session 67)
            tile += ", items longest first"
        return tile
    return str(cfg.get("variant", ""))


def kernel_label(name: str, chars: int = 48) -> str:
    """A kernel name short enough for a table: C++ template arguments and parameter lists
    dropped (`void cublasLt::splitKreduce_kernel<32, 16, ...>(...)` -> `splitKreduce_kernel`),
    then cut to `chars`."""
    base = name.split("<", 1)[0].split("(", 1)[0].strip()
    base = base.removeprefix("void ").split("::")[-1] or name
    return base if len(base) <= chars else base[: chars - 1] + "~"


def reference_kernel(row: dict | None) -> str:
    """The vendor row's kernels as it recorded them (harness.measure.kernel_names), joined by
    " + " (a GEMM and its split-K reduce); "" for rows measured before kernels were recorded."""
    kernels = config_of(row).get("kernels") if row else None
    if not isinstance(kernels, list):
        return ""
    return " + ".join(kernel_label(str(k.get("name", ""))) for k in kernels if isinstance(k, dict))


def reference_ctas(row: dict | None) -> int | None:
    """CTAs of the vendor row's main kernel (the first recorded one that is not a split-K
    reduce): the product of its grid ("4x24x1" -> 96); None where no grid was recorded."""
    kernels = config_of(row).get("kernels") if row else None
    for k in kernels if isinstance(kernels, list) else []:
        if not isinstance(k, dict) or "reduce" in str(k.get("name", "")).lower():
            continue
        try:
            return math.prod(int(x) for x in str(k.get("grid", "")).split("x"))
        except ValueError:
            return None
    return None


# cuBLAS's nvjet kernels name tile, K step x stages, then the CTA cluster:
# nvjet_sm90_tst_144x128_64x6_1x2_h_bz_splitK_TNN -> 1x2
_NVJET_CLUSTER = re.compile(r"nvjet_sm\d+_[a-z]+_\d+x\d+_\d+x\d+_(\d+)x(\d+)_")


def reference_cluster(row: dict | None) -> str | None:
    """The CTA cluster of the vendor row's main kernel where its name gives one of more than
    one CTA ("1x2"); None otherwise (no kernels recorded, a name without one, or 1x1)."""
    kernels = config_of(row).get("kernels") if row else None
    for k in kernels if isinstance(kernels, list) else []:
        name = str(k.get("name", "")) if isinstance(k, dict) else ""
        if (found := _NVJET_CLUSTER.search(name)) is not None:
            a, b = int(found.group(1)), int(found.group(2))
            return f"{a}x{b}" if a * b > 1 else None
    return None


def own_cluster_ctas(row: dict | None) -> int:
    """CTAs per cluster of an own kernel: its recorded "cluster" ("2x1", own CUTLASS), else 1
    (own Triton's kernels launch no clusters)."""
    cluster = str(config_of(row).get("cluster", "1x1")) if row else "1x1"
    try:
        return math.prod(int(x) for x in cluster.split("x"))
    except ValueError:
        return 1


def reference_split(row: dict | None) -> bool:
    """Whether the vendor row's kernels split K (a split-K main kernel, or its reduce): its
    CTAs then do unequal shares of the output, so they are not counted as output tiles."""
    kernels = config_of(row).get("kernels") if row else None
    names = [str(k.get("name", "")).lower() for k in kernels or [] if isinstance(k, dict)]
    return any("splitk" in n or "reduce" in n for n in names)


def sm_fill(units: int | None, sms: int | None) -> float | None:
    """Mean SM's share over the busiest SM's: (units / SMs) / ceil(units / SMs)."""
    if not units or not sms:
        return None
    return (units / sms) / math.ceil(units / sms)
