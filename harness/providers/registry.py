"""One explicit registry of providers (implementations of an op); a duplicate name is an error."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from harness.device import DeviceInfo
from harness.problems import Problem

FAMILIES = ("own", "vendor")
VENDORS = ("nvidia", "amd", "intel", "cpu")


class Unsupported(Exception):
    """Raised by prepare when the backend refuses this point; the row becomes `skipped`."""


@dataclass
class ExternalCheck:
    """A self-checking program's verdict on its own output (its inputs never leave it)."""

    ok: bool
    reason: str | None = None  # one line when not ok
    config: dict = field(default_factory=dict)  # what the check ran, added to provider_config


@dataclass
class External:
    """A provider that runs, checks and times itself (an external benchmark binary).

    measure_point calls check(protocol) instead of comparing run()'s output with the fp32
    reference, and time(protocol, stop) instead of its own timer: the protocol gives seeds and
    warm-up, stop(samples_ms) says why to stop sampling (None: go on). time returns the fields
    of a measure.timer.Timing (samples_ms, timer, l2, stop_reason, calls_per_sample,
    warmup_calls) and config extras; the row records the program's own timer name, and its
    latency / TFLOP/s / GB/s come from the samples and the problem's flops() / min_bytes().
    The stop rule is handed in, not imported, so providers stay below the measuring layer.
    """

    check: Callable[[Any], ExternalCheck]  # Protocol -> verdict
    time: Callable[[Any, Callable[[list[float]], str | None]], tuple[dict, dict]]


@dataclass
class Prepared:
    """What prepare hands the timer: a launch-only closure, with everything else done before."""

    run: Callable[[], Any]  # zero arguments; launches the kernel(s); no allocation, tuning, sync
    config: dict = field(default_factory=dict)  # chosen kernel config, recorded in the row
    # Maps run()'s return value to the problem's output layout; used by the check, never timed.
    output: Callable[[Any], Any] = lambda out: out
    external: External | None = None  # set by providers that time themselves; run is unused


# A provider serves one op, so its functions take that op's Problem subclass (GemmProblem, ...):
# P is that subclass, and prepare and supports must agree on it.
P = TypeVar("P", bound=Problem)
PrepareFn = Callable[[P, dict, DeviceInfo], Prepared]
SupportsFn = Callable[[P, DeviceInfo], str | None]


@dataclass(frozen=True)
class Prebuild:
    """What a provider needs built before a sweep, so no build runs inside a point (let alone
    its timed window). needs(problems) lists the build specs (hashable) of this provider's
    pending problems; build(specs) builds them in one call, in parallel, and returns
    {label: 'cached' | 'built in N s' | 'error: ...'} ({} when nothing can be built here).
    Providers that share one `build` are built together, their specs deduplicated."""

    needs: Callable[[list[Problem]], list]
    build: Callable[[list], dict[str, str]]
    what: str  # plural noun for the runner's one line: "CUTLASS libraries"


def _always(*_: Any) -> None:
    return None


@dataclass(frozen=True)
class Provider(Generic[P]):
    """One implementation of one op, with where it can run and why it might not."""

    name: str
    op: str  # gemm | attention
    family: str  # own | vendor
    vendors: tuple[str, ...]
    prepare: PrepareFn[P]
    min_cc: tuple[int, int] | None = None  # NVIDIA compute capability floor
    available: Callable[[], str | None] = _always  # e.g. an optional import; asked lazily
    supports: SupportsFn[P] = _always
    description: str = ""
    prebuild: Prebuild | None = None  # asked by the runner before the first point
    # prepare compiles Triton candidates through the tuners' timers (bench_cold, bench_capped),
    # so harness.compile_ahead can run it in a worker with those timers stubbed
    compiles_ahead: bool = False

    def why_unavailable(self, device: DeviceInfo) -> str | None:
        """Why this provider cannot run on `device` at all, or None."""
        if device.vendor not in self.vendors:
            return f"runs on {'/'.join(self.vendors)}, not {device.vendor}"
        floor = self.min_cc
        if device.vendor == "nvidia" and floor is not None and not device.cc_at_least(floor):
            cc = device.compute_capability
            has = f"{cc[0]}.{cc[1]}" if cc else "none known"
            return f"needs compute capability >= {floor[0]}.{floor[1]}, device has {has}"
        return self.available()

    def why_not(self, problem: P, device: DeviceInfo) -> str | None:
        """Why this provider cannot run `problem` on `device`, or None."""
        return self.why_unavailable(device) or self.supports(problem, device)


class Registry:
    """Providers keyed by (op, name)."""

    def __init__(self) -> None:
        # Any: each op's providers take that op's own Problem subclass.
        self._providers: dict[tuple[str, str], Provider[Any]] = {}

    def add(self, provider: Provider[P]) -> Provider[P]:
        if provider.family not in FAMILIES:
            raise ValueError(f"{provider.name}: family must be one of {FAMILIES}")
        unknown = set(provider.vendors) - set(VENDORS)
        if unknown:
            raise ValueError(f"{provider.name}: unknown vendors {sorted(unknown)}")
        key = (provider.op, provider.name)
        if key in self._providers:
            raise ValueError(f"provider '{provider.name}' for op '{provider.op}' registered twice")
        self._providers[key] = provider
        return provider

    def get(self, op: str, name: str) -> Provider[Any]:
        try:
            return self._providers[(op, name)]
        except KeyError:
            allowed = ", ".join(self.names(op))
            raise ValueError(
                f"provider: unknown '{name}' for op {op}; allowed: {allowed}"
            ) from None

    def names(self, op: str | None = None) -> list[str]:
        return sorted({n for (o, n) in self._providers if op is None or o == op})

    def __iter__(self) -> Iterator[Provider[Any]]:
        return iter(sorted(self._providers.values(), key=lambda p: (p.op, p.family, p.name)))

    def __len__(self) -> int:
        return len(self._providers)


REGISTRY = Registry()


def _recording_tune_origin(prepare: PrepareFn[P]) -> PrepareFn[P]:
    """`prepare`, with the UUID of the GPU that timed its tuner's decision added to the config
    (`tuned_on`, from harness_kernels.tune_cache; "" where unknown) wherever the config names a
    tune-cache entry (`tune_key`), and how it was seeded where it was
    (`tune_seeded_from`). With the tune pass on, nearly every own row reads its
    decision back from disk; harness gaps compares the tuner's time with the sweep's only where
    this GPU took it (an H200 in session 44 ran one own config 58.7-66.4 us over eight
    processes: a state of this GPU, where a machine apart would be a different GPU)."""

    @functools.wraps(prepare)
    def prepare_and_record(problem: P, inputs: dict, device: DeviceInfo) -> Prepared:
        prepared = prepare(problem, inputs, device)
        key = prepared.config.get("tune_key")
        if key and "tuned_on" not in prepared.config:
            from harness_kernels import tune_cache

            prepared.config["tuned_on"] = tune_cache.tuned_on(key)
            # a decision timed on another GPU's best few only (harness_kernels/tune_seed.py)
            if seeded := tune_cache.seeded_from(key):
                prepared.config["tune_seeded_from"] = seeded
        return prepared

    return prepare_and_record


def register(
    name: str,
    op: str,
    family: str,
    vendors: tuple[str, ...],
    *,
    min_cc: tuple[int, int] | None = None,
    available: Callable[[], str | None] = _always,
    supports: SupportsFn[P] = _always,
    registry: Registry = REGISTRY,
    prebuild: Prebuild | None = None,
    compiles_ahead: bool = False,
) -> Callable[[PrepareFn[P]], PrepareFn[P]]:
    """Decorator: register `prepare` as provider `name`; the docstring's first line describes it."""

    def wrap(prepare: PrepareFn[P]) -> PrepareFn[P]:
        doc = (prepare.__doc__ or "").strip().splitlines()
        registry.add(
            Provider(
                name,
                op,
                family,
                vendors,
                _recording_tune_origin(prepare) if family == "own" else prepare,
                min_cc,
                available,
                supports,
                doc[0] if doc else "",
                prebuild,
                compiles_ahead,
            )
        )
        return prepare

    return wrap
