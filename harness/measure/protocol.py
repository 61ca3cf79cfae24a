"""The measurement protocol: how a number is obtained; stored with every row."""

from __future__ import annotations

from dataclasses import asdict, dataclass

TIMERS = ("auto", "cuda-events", "cuda-graph", "host", "xpu-events")
L2_STATES = ("cold", "hot")


@dataclass
class Protocol:
    """Timer, cache state, inputs, warm-up and stop rule of one measurement.

    cuda-events: one event pair around every call; cold L2 by writing a buffer of 2x the L2
        size before each call, outside the timed window.
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
    l2_rotation_factor: float = 2.0
    max_rotation_sets: int = 512
    seed: int = 0

    def validate(self) -> None:
        from harness.problems import FILLS

        for key, value, allowed in (
            ("protocol.timer", self.timer, TIMERS),
            ("protocol.l2", self.l2, L2_STATES),
            ("protocol.fill", self.fill, FILLS),
        ):
            if value not in allowed:
                raise ValueError(f"{key}: unknown '{value}'; allowed: {', '.join(allowed)}")
        for key in ("min_samples", "max_samples", "max_time_s", "rse_target", "max_rotation_sets"):
            if getattr(self, key) <= 0:
                raise ValueError(f"protocol.{key}: must be positive, got {getattr(self, key)}")
        if self.min_samples > self.max_samples:
            raise ValueError("protocol.min_samples: must not exceed protocol.max_samples")

    def resolved_timer(self, device_type: str) -> str:
        if self.timer != "auto":
            return self.timer
        return {"cpu": "host", "xpu": "xpu-events"}.get(device_type, "cuda-events")

    def key_fields(self) -> dict:
        """Fields that change what is measured (they enter the point key)."""
        d = asdict(self)
        return {k: d[k] for k in ("timer", "l2", "fill", "seed")}
