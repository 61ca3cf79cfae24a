"""The measurement protocol: how a number is obtained; stored with every row."""

from __future__ import annotations

from dataclasses import asdict, dataclass

TIMERS = ("auto", "cuda-events", "cuda-graph", "host", "xpu-events")
L2_STATES = ("cold", "hot")
FLUSH_MODES = ("read", "write")


@dataclass
class Protocol:
    """Timer, cache state, inputs, warm-up and stop rule of one measurement.

    cuda-events: one event pair around every call; cold L2 by streaming a buffer of
        l2_flush_factor x the L2 (the last-level cache: CDNA3's Infinity Cache) before each
        call, outside the timed window (l2_flush: read, or write as nvbench's cold mode does,
        which leaves dirty lines whose write-back the next kernel pays). With
        stream_hold, a blocking kernel holds the stream before each start event until the
        call is queued, so host launch latency is never timed (kernels/stream_hold.py, which
        the own tuners' cold timer shares).
    cuda-graph: calls captured into a CUDA graph and timed per replay (no launch gaps); cold L2
        by rotating through input sets totalling >= l2_rotation_factor x L2, one call per set.
    host: perf_counter around each call (CPU devices, where calls are synchronous).
    xpu-events: the cuda-events protocol on an Intel GPU (torch.xpu.Event); without XPU events,
        perf_counter around call + torch.xpu.synchronize ("host-sync" in the row).
    Providers that run and time themselves (an external benchmark binary) report their own
    timer name in the row (e.g. "ck-internal").
    Sampling stops when the relative standard error of the median falls under rse_target with
    at least min_samples and min_time_s of sampling, or when max_time_s of sampling or
    max_samples is reached.
    """

    timer: str = "auto"  # auto -> cuda-events on a GPU, xpu-events on Intel, host on the CPU
    l2: str = "cold"
    fill: str = "randn"  # timing inputs; the correctness check always uses fresh random inputs
    # Long enough for clocks and the power limiter to settle: with 30 ms a heavy GEMM was timed
    # before the power cap engaged in one run and after it in the next (16% apart on the H200).
    warmup_ms: float = 300.0
    min_samples: int = 10
    max_samples: int = 2000
    rse_target: float = 0.01
    max_time_s: float = 2.0
    # Sample for at least this long: a power-capped GPU's clock oscillates over tenths of a
    # second, and a median taken inside one swing differed by 3% between identical runs.
    min_time_s: float = 0.5  # capped at max_time_s
    # Before the warm-up, on NVIDIA GPUs: run the call (with its flush) until the power limiter
    # has settled (telemetry.PowerState.unsettled), at most this long. A heavy kernel timed
    # right after an idle spell runs on the budget the idle left: on an H100 cuBLAS, always
    # timed first in its point, ran 4-9% faster at large M than in a sustained loop, while the
    # own GEMMs, timed right after their tuning at the cap, did not. 0 turns it off.
    power_settle_ms: float = 2000.0
    # Before the first timed point, prepare every own point once (harness/tune_pass.py), so no
    # point is timed right after its own tuning: on an H100 own CUTLASS ran 2% slower (1,485
    # against 1,515 MHz at the same 700 W) when its tuner had just run. false: tune in the point.
    tune_first: bool = True
    l2_flush: str = "read"  # read | write (nvbench's cold mode: a memset)
    # The flush streams this many times the cache (rows: l2_flush_bytes). 2 leaves no input line
    # resident under LRU; the own tuners' timer (kernels/bench_cold.py) streams 256 MB, 4.3x the
    # H200's L2: a larger factor tests whether a replacement policy kept some inputs anyway.
    l2_flush_factor: float = 2.0
    stream_hold: bool = True  # a blocking kernel before each start event (CUDA and ROCm)
    # cuda-events queues up to 100 samples between host syncs; nvbench's cold mode syncs after
    # each, so the GPU idles between samples (clocks may drop). true matches it.
    sync_every_sample: bool = False
    # Spread guard: a point whose p90/p10 exceeds max_spread (and whose p90 - p10 exceeds
    # spread_floor_us, the events' own resolution being ~0.5 us) or whose stream hold expired
    # is timed again, up to max_attempts in all; if it stays spread its row says unstable.
    max_spread: float = 1.10
    spread_floor_us: float = 1.0
    max_attempts: int = 2
    l2_rotation_factor: float = 2.0
    max_rotation_sets: int = 512
    seed: int = 0

    def validate(self) -> None:
        from harness.problems import FILLS

        for key, value, allowed in (
            ("protocol.timer", self.timer, TIMERS),
            ("protocol.l2", self.l2, L2_STATES),
            ("protocol.fill", self.fill, FILLS),
            ("protocol.l2_flush", self.l2_flush, FLUSH_MODES),
        ):
            if value not in allowed:
                raise ValueError(f"{key}: unknown '{value}'; allowed: {', '.join(allowed)}")
        for key in (
            "min_samples",
            "max_samples",
            "max_time_s",
            "rse_target",
            "max_rotation_sets",
            "max_attempts",
        ):
            if getattr(self, key) <= 0:
                raise ValueError(f"protocol.{key}: {getattr(self, key)} must be > 0; allowed: > 0")
        for key in (
            "warmup_ms",
            "min_time_s",
            "spread_floor_us",
            "l2_rotation_factor",
            "power_settle_ms",
        ):
            if getattr(self, key) < 0:
                raise ValueError(f"protocol.{key}: {getattr(self, key)} is negative; allowed: >= 0")
        if self.l2_flush_factor < 1.0:
            raise ValueError(
                f"protocol.l2_flush_factor: {self.l2_flush_factor} streams less than the cache; "
                "allowed: >= 1"
            )
        if self.max_spread < 1.0:
            raise ValueError(
                f"protocol.max_spread: {self.max_spread}, but p90/p10 is at least 1; allowed: >= 1"
            )
        if self.min_samples > self.max_samples:
            raise ValueError(
                f"protocol.min_samples: {self.min_samples} exceeds protocol.max_samples "
                f"{self.max_samples}; allowed: min_samples <= max_samples"
            )

    def resolved_timer(self, device_type: str) -> str:
        if self.timer != "auto":
            return self.timer
        return {"cpu": "host", "xpu": "xpu-events"}.get(device_type, "cuda-events")

    def key_fields(self) -> dict:
        """Fields that change what is measured (they enter the point key). The flush mode and
        size enter only when not the default, so the keys of earlier runs still match."""
        d = asdict(self)
        keys = {k: d[k] for k in ("timer", "l2", "fill", "seed")}
        if self.l2_flush != "read":
            keys["l2_flush"] = self.l2_flush
        if self.l2_flush_factor != 2.0:
            keys["l2_flush_factor"] = self.l2_flush_factor
        return keys
