"""A serving decode point from a short spec, for the probes that take points on the command line
(scripts/decode_split_probe.py on a GPU, scripts/decode_tail_model.py on a CPU): a bad spec is a
ValueError here, which the scripts turn into their exit message."""

from __future__ import annotations

import re

from harness.problems.attention import AttentionProblem

PARTS = {"b": "batch", "kv": "kv_len", "h": "kv_heads", "q": "q_len", "p": "page_size"}


def problem_of(spec: str) -> AttentionProblem:
    """b16:kv4096:h4:q1:p256 -> the serving grid's point (32 query heads over h KV heads, D 128,
    bf16, causal, paged, equal lengths); every part is needed, in any order. A part `ragged`
    makes the batch ragged as the grid's ragged half is (lengths from kv_len down to half of
    it): on the H100 the ragged GQA-8 points at KV 4k read 0.69-0.75 of the ceiling, the
    batch-16 bar's largest miss (fmha_decode_serving-b16-own-s96h, moved out in session 112).
    Page 0 is a dense cache (each sequence's keys in one run, no block table): set against a
    paged point of the same bytes, what the table's lookups cost; a dense cache cannot be
    ragged."""
    tokens = spec.split(":")
    ragged = "ragged" in tokens
    parts = [re.fullmatch(r"(b|kv|h|q|p)(\d+)", part) for part in tokens if part != "ragged"]
    found = {m.group(1): int(m.group(2)) for m in parts if m}
    if (
        None in parts
        or set(found) != set(PARTS)
        or len(parts) != len(PARTS)
        or tokens.count("ragged") > 1
    ):
        raise ValueError(
            f"{spec!r}: expected b<batch>:kv<len>:h<kv heads>:q<q_len>:p<page>[:ragged]"
        )
    problem = AttentionProblem(
        batch=found["b"],
        q_heads=32,
        kv_heads=found["h"],
        q_len=found["q"],
        kv_len=found["kv"],
        causal=True,
        kv_layout="paged" if found["p"] else "dense",
        page_size=found["p"],
        ragged=ragged,
    )
    problem.validate()  # a ragged dense cache, a page size the kernels lack: a ValueError here
    return problem
