"""The columns of a row: every row file the store writes has exactly this schema.

One table for every op, so that one reader reads every run: a column that does not apply to a
row's op (a GEMM's head_dim, a kernel's busbw_gbps) is null. Names are snake_case with the unit
in the name (latency_ms_median, power_w). The store (harness/store.py) writes and reads rows
against it; harness/schema_history.py names every column set rows were ever written with.
"""

from __future__ import annotations

import pyarrow as pa

# Bumped on every change of SCHEMA's columns, each with an entry in harness/schema_history.py
# (tests/test_schema_history.py checks both): rows of every version stay readable side by side.
SCHEMA_VERSION = (
    6  # 6: l2_flush_bytes; 5: ragged; 4: power_settle_s; 3: model; 2: spread guard, stream hold
)

_STR, _I64, _F64, _BOOL = pa.string(), pa.int64(), pa.float64(), pa.bool_()
SCHEMA = pa.schema(
    [
        ("schema_version", _I64),
        ("run_id", _STR),
        ("point_key", _STR),
        ("op", _STR),
        ("provider", _STR),
        ("family", _STR),
        ("status", _STR),
        ("reason", _STR),
        # problem axes (null where the op has no such axis)
        ("dtype", _STR),
        ("m", _I64),
        ("n", _I64),
        ("k", _I64),
        ("layout", _STR),
        ("batch", _I64),
        ("q_heads", _I64),
        ("kv_heads", _I64),
        ("q_len", _I64),
        ("kv_len", _I64),
        ("head_dim", _I64),
        ("causal", _BOOL),
        ("kv_layout", _STR),
        ("page_size", _I64),
        ("ragged", _BOOL),  # attention, paged: sequences of different lengths (null: one length)
        ("phase", _STR),
        ("problem", _STR),
        ("model", _STR),  # decoder_layer: the workload catalog's model key (llama3_8b, ...)
        # microbenchmark axes and results (ceilings and probes)
        ("metric", _STR),
        ("working_set_bytes", _I64),
        ("stride_bytes", _I64),
        ("hops", _I64),
        ("latency_ns", _F64),
        ("latency_cycles", _F64),
        ("ceiling_fraction", _F64),
        ("traffic_bytes", _I64),  # memory probes: bytes moved per call (working set re-read)
        ("iterations", _I64),  # fma probe: dependent FMAs per element
        # collectives (nccl-tests' definitions): gbps is algbw = message_bytes / median time
        ("collective", _STR),
        ("message_bytes", _I64),
        ("world_size", _I64),
        ("busbw_gbps", _F64),
        # static resource report (harness inspect): one row per kernel x compile target
        ("target", _STR),
        ("registers", _I64),
        ("spills", _I64),
        ("shared_bytes", _I64),
        ("num_warps", _I64),
        ("num_stages", _I64),
        ("mma_kind", _STR),
        ("mma_count", _I64),
        # work
        ("flops", _F64),
        ("min_bytes", _F64),
        ("intensity_flop_per_byte", _F64),
        # latency (null unless status == ok)
        ("latency_ms_median", _F64),
        ("latency_ms_mean", _F64),
        ("latency_ms_min", _F64),
        ("latency_ms_p10", _F64),
        ("latency_ms_p90", _F64),
        ("latency_ms_std", _F64),
        ("latency_rse", _F64),
        ("latency_p90_over_p10", _F64),
        ("unstable", _BOOL),  # too spread (or a stream hold expired) after every attempt
        ("unstable_reason", _STR),
        ("timing_attempts", _I64),
        ("n_samples", _I64),
        ("samples_ms", pa.list_(_F64)),
        ("stop_reason", _STR),
        ("tflops", _F64),
        ("gbps", _F64),
        # correctness
        ("rel_err", _F64),
        ("max_abs_err", _F64),
        ("tolerance", _F64),
        # protocol
        ("timer", _STR),
        ("l2", _STR),
        ("fill", _STR),
        ("l2_flush", _STR),  # read | write (nvbench's cold mode) | n/a
        # bytes the flush streamed before each sample (protocol.l2_flush_factor x the cache);
        # null where none ran (L2 hot, CPU, graph replay) and on rows before schema 6
        ("l2_flush_bytes", _I64),
        ("stream_hold", _STR),  # flag: a blocking kernel held the stream | none
        ("hold_expired", _I64),  # samples whose hold timed out before the launch was queued
        ("max_spread", _F64),
        ("warmup_ms", _F64),
        ("warmup_calls", _I64),
        # seconds the call ran before its warm-up until the power limiter settled (point.py's
        # settle_power); null where telemetry could not tell or the timer is not cuda-events
        ("power_settle_s", _F64),
        ("rse_target", _F64),
        ("max_time_s", _F64),
        ("min_time_s", _F64),
        ("calls_per_sample", _I64),
        ("rotation_sets", _I64),
        ("seed", _I64),
        # telemetry during the timed window (medians)
        ("sm_clock_mhz", _F64),
        ("mem_clock_mhz", _F64),
        ("power_w", _F64),
        ("temp_c", _F64),
        ("throttle_reasons", _STR),
        ("telemetry_samples", _I64),
        # device
        ("device_type", _STR),
        ("device_index", _I64),
        ("device_vendor", _STR),
        ("device_name", _STR),
        ("device_uuid", _STR),
        ("device_arch", _STR),
        ("device_compute_capability", _STR),
        ("device_sm_count", _I64),
        ("device_l2_bytes", _I64),
        ("device_llc_bytes", _I64),  # last-level cache (CDNA3: the 256 MiB Infinity Cache)
        ("device_memory_bytes", _I64),
        ("device_driver_version", _STR),
        ("device_runtime_version", _STR),
        # provenance
        ("provider_config", _STR),
        ("git_sha", _STR),
        ("git_dirty", _BOOL),
        ("kernel_source_hash", _STR),
        ("torch_version", _STR),
        ("triton_version", _STR),
        ("python_version", _STR),
        ("hostname", _STR),
        ("timestamp", _STR),
        ("elapsed_s", _F64),
    ]
)
COLUMNS = SCHEMA.names
