"""Every column set the store has written rows with, so readers can tell them apart.

Rows carry `schema_version`, but before this table the store added columns five times without
bumping it: six column sets (80 to 103 columns) were written as version 1, four of which were
committed under results/ (80, 98, 99 and 103 columns) until `harness compact` rewrote each run
into one file with the current set (columns a row predates null, each row keeping its own
schema_version). A column set is named by its fingerprint (sha256 of its sorted `name:type`
pairs, see `fingerprint`) and given a label: the version number from 2 on, where each version is
one column set, and "1.0".."1.5" for the six sets that all say 1. `label(schema)` derives it
from a file's schema (row files of an uncompacted run, or older copies of results elsewhere);
`python -m harness.schema_history [paths]` counts the rows of each. Side tables
(crosscheck.parquet, 47 columns in results/h200/timer_check) have their own columns: not rows.

Changing harness/schema.py's SCHEMA means bumping its SCHEMA_VERSION and appending an entry here;
tests/test_schema_history.py fails until both are done (`problem` says what is missing).
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from harness.store import NARROWED as SAMPLES
from harness.store import TICKS


@dataclass(frozen=True)
class ColumnSet:
    """One column set the store wrote rows with."""

    label: str  # "2", or "1.<n>" for the sets written before versions were bumped
    version: int  # the schema_version its rows carry
    n_columns: int
    fingerprint: str  # see fingerprint()
    added: tuple[str, ...]  # columns new in this set (none was ever removed or retyped)
    note: str  # what changed, the commit that changed it, where its rows are committed


_SPINE = (
    "schema_version run_id point_key op provider family status reason dtype m n k layout batch "
    "q_heads kv_heads q_len kv_len head_dim causal kv_layout page_size phase problem flops "
    "min_bytes intensity_flop_per_byte latency_ms_median latency_ms_mean latency_ms_min "
    "latency_ms_p10 latency_ms_p90 latency_ms_std latency_rse n_samples samples_ms stop_reason "
    "tflops gbps rel_err max_abs_err tolerance timer l2 fill warmup_ms warmup_calls rse_target "
    "max_time_s calls_per_sample rotation_sets seed sm_clock_mhz mem_clock_mhz power_w temp_c "
    "throttle_reasons telemetry_samples device_type device_index device_vendor device_name "
    "device_uuid device_arch device_compute_capability device_sm_count device_l2_bytes "
    "device_memory_bytes device_driver_version device_runtime_version provider_config git_sha "
    "git_dirty kernel_source_hash torch_version triton_version python_version hostname "
    "timestamp elapsed_s"
)

# Oldest first. Fingerprints of 1.0-1.5 were computed from harness/store.py at each commit named.
HISTORY: tuple[ColumnSet, ...] = (
    ColumnSet(
        "1.0",
        1,
        80,
        "3e9938446bcd3c154ae9a843354a53b1a105b28f0594da491356eda6325cc6d1",
        tuple(_SPINE.split()),
        "the first schema (285d62f); in git history: f604131:results/h200/_superseded",
    ),
    ColumnSet(
        "1.1",
        1,
        87,
        "0f0ceb5759e29fa9fd761683bafded5100431a99f58deff281c7fbe6967a6d83",
        (
            "metric",
            "working_set_bytes",
            "stride_bytes",
            "hops",
            "latency_ns",
            "latency_cycles",
            "ceiling_fraction",
        ),
        "microbenchmark rows (93037aa); no committed rows",
    ),
    ColumnSet(
        "1.2",
        1,
        97,
        "3465d8c0ac35804f55b5acd917dede424a4cb8a5ab5d2c5f05b9c884cd46a53b",
        (
            "traffic_bytes",
            "iterations",
            "target",
            "registers",
            "spills",
            "shared_bytes",
            "num_warps",
            "num_stages",
            "mma_kind",
            "mma_count",
        ),
        "memory/fma probes and the static resource report (4b0a291); no committed rows",
    ),
    ColumnSet(
        "1.3",
        1,
        98,
        "0e41df7212986b3f41f1b7fb1ccbdda138ede90737616404e478b564373e1620",
        ("min_time_s",),
        "minimum sampling window (e1e6776); committed: the h200 vendor runs and smoke-gpu",
    ),
    ColumnSet(
        "1.4",
        1,
        99,
        "a1fc4306d733ac44966e79ef1f54e0c1b5462b13d5cf6b7424d12d5f8bd61684",
        ("device_llc_bytes",),
        "last-level cache size (f7df9e6); committed: h200 fmha_*, gemm_square, ladder, probes",
    ),
    ColumnSet(
        "1.5",
        1,
        103,
        "350277beb673ddabd065487974bba37266f0124b155fad444d8d20fdd0c796c7",
        ("collective", "message_bytes", "world_size", "busbw_gbps"),
        "collectives (15fb75c); committed: h200 ceilings, gemm_llama, h200x2, static",
    ),
    ColumnSet(
        "2",
        2,
        111,
        "176b9011a7e5c33b6c7d38c6ce95f6cbfda5adcd3d24673b37c6b0db7d1503ad",
        (
            "latency_p90_over_p10",
            "unstable",
            "unstable_reason",
            "timing_attempts",
            "l2_flush",
            "stream_hold",
            "hold_expired",
            "max_spread",
        ),
        "spread guard, stream hold, flush mode (d89ceb8); committed: h200/timer_check",
    ),
    ColumnSet(
        "3",
        3,
        112,
        "de02cb6894b2b9bb26007d3ae05b5f1e80e6a8e64f10bd116faa3192094cd6a6",
        ("model",),
        "the model of a decoder_layer row (issue 23, 2026-11-24); no committed rows yet",
    ),
    ColumnSet(
        "4",
        4,
        113,
        "09f9149a3288af09cae15e7c032ef0d0d5fb5be5162f42bb6a466ed6cab14617",
        ("power_settle_s",),
        "seconds a point's call ran before its warm-up until the power limiter settled "
        "(protocol.power_settle_ms, issue 20, 2026-11-25)",
    ),
    ColumnSet(
        "5",
        5,
        114,
        "25c6713e6eb982a8f2ce1b0d22d199b766fda882d4a858bd9a0f7042b3859132",
        ("ragged",),
        "a paged attention problem's sequences of different lengths (issue 21.3, 2026-11-27); "
        "null on every row before it and on rows of one length; no committed rows yet",
    ),
    ColumnSet(
        "6",
        6,
        115,
        "b5a362e4f2c909117fd7ffd3f46e3418fe6b6351ef7854cb6d9f1cab3a480491",
        ("l2_flush_bytes",),
        "bytes the L2 flush streamed before each sample (protocol.l2_flush_factor, session 76, "
        "2026-12-03); null on every row before it, where 2x the cache was streamed",
    ),
)
_BY_FINGERPRINT = {c.fingerprint: c for c in HISTORY}


def _type_name(t: pa.DataType) -> str:
    # A list's element is named "item" when written and "element" when read back from parquet:
    # the same column either way, so the name is left out. samples_ms is float32 on disk where
    # every sample is float32-exact (store.narrowed) and float64 to every reader: one column.
    # (samples stored as whole ticks are renamed to it in fingerprint.)
    if pa.types.is_list(t):
        inner = _type_name(t.value_type)
        return f"list<{'double' if inner == 'float' else inner}>"
    return str(t)


def fingerprint(schema: pa.Schema) -> str:
    """sha256 (hex) of a schema's sorted `name:type` pairs: column order and nullability aside."""
    pairs = sorted(
        f"{SAMPLES}:list<double>" if f.name == TICKS else f"{f.name}:{_type_name(f.type)}"
        for f in schema
    )
    return hashlib.sha256("\n".join(pairs).encode()).hexdigest()


def label(schema: pa.Schema) -> str | None:
    """The label of a row file's schema ("1.3", "2", ...), or None if no entry has it."""
    entry = _BY_FINGERPRINT.get(fingerprint(schema))
    return entry.label if entry else None


def columns(label_: str) -> list[str]:
    """Every column of the set labelled `label_`, in the order they were added."""
    names: list[str] = []
    for entry in HISTORY:
        names += entry.added
        if entry.label == label_:
            return names
    raise KeyError(f"no column set labelled {label_!r}; allowed: {[c.label for c in HISTORY]}")


def problem(schema: pa.Schema, version: int) -> str | None:
    """What is missing when the store writes `schema` as `version`, or None when HISTORY's last
    entry is that column set under that version (as it must be for harness/schema.py's SCHEMA)."""
    last, new = HISTORY[-1], fingerprint(schema)
    if last.fingerprint == new and last.version == version:
        return None
    if last.fingerprint == new:
        return (
            f"SCHEMA_VERSION is {version} but HISTORY's last entry (this schema) says "
            f"{last.version}"
        )
    if version <= last.version:
        return (
            f"SCHEMA (harness/schema.py) changed ({len(schema)} columns) without a version bump: set "
            f"SCHEMA_VERSION = {last.version + 1} and append its HISTORY entry"
        )
    return (
        f"SCHEMA (harness/schema.py) is version {version} ({len(schema)} columns) but HISTORY has no entry for "
        f'it: append ColumnSet("{version}", {version}, {len(schema)}, "{new}", <added>, <note>)'
    )


def row_files(*paths: str | Path) -> list[Path]:
    """Every row file under `paths`: rows/*.parquet and compacted rows.parquet, superseded runs
    (`_` folders) included, set-aside files (rows/_unreadable/) and temporaries not."""
    files: set[Path] = set()
    for path in map(Path, paths):
        if path.is_file():
            found = [path]
        else:
            found = [*path.rglob("rows/*.parquet"), *path.rglob("rows.parquet")]
        files.update(f for f in found if not f.name.startswith((".", "_")))
    return sorted(files)


def survey(*paths: str | Path) -> Counter:
    """(label or "unrecorded <fingerprint>", n_columns, schema_version) -> rows, over the row
    files under `paths`. A compacted run (rows.parquet) is written with the current column set
    and keeps each row's own schema_version, so one file may count under several versions."""
    counts: Counter = Counter()
    for f in row_files(*paths):
        schema = pq.read_schema(f)
        name = label(schema) or f"unrecorded {fingerprint(schema)[:16]}"
        for version in pq.read_table(f, columns=["schema_version"]).column(0).to_pylist():
            counts[name, len(schema), version] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    """`python -m harness.schema_history [paths]`: row files per column set (default results)."""
    paths = (sys.argv[1:] if argv is None else argv) or ["results"]
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        print(
            f"harness: error: paths: {missing[0]} does not exist; allowed: folders or row files",
            file=sys.stderr,
        )
        return 2
    print("schema  columns  schema_version   rows")
    for (name, n, version), count in sorted(survey(*paths).items()):
        print(f"{name:<7} {n:>7}  {version:>14}  {count:>5}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
