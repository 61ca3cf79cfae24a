"""The ranks of a process group measuring one point together (collectives), through the same
point engine as every other op (measure.point.measure_point with peers=Lockstep(device)).

Every rank must issue the same collective calls in the same order, or one waits forever for a
peer that has moved on. So each communication-free step of the point (inputs, prepare, the
check) ends with the ranks agreeing on its outcome: a rank that failed there turns the point
into the same row on every rank, naming that rank. A failure outside such a step (inside a
collective, where the peers may be waiting) cannot be agreed on: the rank raises and its parent
(harness.collectives) writes the point's row. Checks merge to the worst rank's; timing is
measure.collective_timer's (the slowest rank's time per call, rank 0's stop rule).

What lockstep timing honours is narrower than the protocol: check_protocol refuses the rest
before a run starts, so the rows and point keys record what was measured.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator

import torch
import torch.distributed as dist

from harness.device import DeviceInfo
from harness.measure.collective_timer import time_collective, time_collective_graph
from harness.measure.point import Peers, PointFailed, PointTimeout, clip, failure_of
from harness.measure.protocol import Protocol
from harness.measure.timer import Timing
from harness.problems import Check, CollectiveProblem, Problem
from harness.problems.base import world_size_of

_DEFAULTS = Protocol()


def check_protocol(protocol: Protocol, device_type: str, collectives_only: bool = False) -> None:
    """Refuse the protocol values collectives cannot honour (they enter the point key or the
    rows, so measuring something else would record one protocol and measure another): a
    collective is timed per call with an event pair (the host clock on the CPU), or, on a GPU
    and for collective problems only (`collectives_only`), as calls captured in a CUDA graph
    and replayed (collective_timer.time_collective_graph); always back to back on the same
    buffers (L2 hot: nothing flushed, no input sets rotated), on the communication library's
    stream, which no kernel of ours holds. Raises ValueError naming the key."""
    timers = ["cuda-events"] if device_type == "cuda" else ["host"]
    if device_type == "cuda" and collectives_only:
        # A tensor-parallel layer's graph provider replays its own graph; a graph of those
        # replays is not what a serving engine runs, so only plain collectives are captured.
        timers.append("cuda-graph")
    if protocol.resolved_timer(device_type) not in timers:
        raise ValueError(
            f"protocol.timer: '{protocol.timer}' does not apply to "
            f"{'collectives' if collectives_only else 'points of several ranks'} on "
            f"{device_type}; allowed: auto, {', '.join(timers)}"
        )
    if protocol.l2 != "hot":
        raise ValueError(
            f"protocol.l2: '{protocol.l2}' does not apply to collectives (timed back to back on "
            "the same buffers, no flush); allowed: hot"
        )
    if protocol.stream_hold:
        raise ValueError(
            "protocol.stream_hold: true does not apply to collectives (their calls run on the "
            "communication library's stream; nothing holds it); allowed: false"
        )
    # Fields only a cold L2 reads: any value but the default would be recorded, never used.
    for key, why in (
        ("l2_flush", "L2 hot: nothing is flushed"),
        ("l2_flush_factor", "L2 hot: nothing is flushed"),
        ("l2_rotation_factor", "L2 hot: no input sets rotate"),
        ("max_rotation_sets", "L2 hot: no input sets rotate"),
    ):
        value, default = getattr(protocol, key), getattr(_DEFAULTS, key)
        if value != default:
            shown = f"'{value}'" if isinstance(value, str) else f"{value}"
            raise ValueError(
                f"protocol.{key}: {shown} does not apply to collectives ({why}); allowed: {default}"
            )


def worst_failure(failures: list[tuple[str, str] | None]) -> tuple[str, str] | None:
    """Per-rank (status, reason) or None -> the first error, else the first skip, naming its
    rank; None when no rank failed."""
    found = [(r, f) for r, f in enumerate(failures) if f is not None]
    if not found:
        return None
    rank, (status, reason) = next(((r, f) for r, f in found if f[0] == "error"), found[0])
    return status, clip(f"rank {rank}: {reason}")


def merge_checks(checks: list[Check]) -> Check:
    """Per-rank checks -> one: ok only if every rank's is; the worst errors (NaN counts as
    worst); the first wrong rank's reason."""
    wrong = [(r, c) for r, c in enumerate(checks) if not c.ok]
    worst = lambda values: max(values, key=lambda v: math.inf if v != v else v)
    return Check(
        rel_err=worst(c.rel_err for c in checks),
        max_abs_err=worst(c.max_abs_err for c in checks),
        tolerance=checks[0].tolerance,
        ok=not wrong,
        reason=f"rank {wrong[0][0]}: {wrong[0][1].reason}" if wrong else None,
    )


class Lockstep(Peers):
    """This rank and its peers in the initialised process group, measuring one point in step."""

    def __init__(self, device: DeviceInfo) -> None:
        self.device = device
        self.rank = dist.get_rank()

    def _gather(self, obj) -> list:
        out = [None] * dist.get_world_size()
        dist.all_gather_object(out, obj)
        return out

    def barrier(self) -> None:
        """A barrier bounded by the group's timeout (an all-reduce of one element)."""
        t = torch.zeros(1, device=self.device.torch_device)
        dist.all_reduce(t)
        t.item()

    def agree(self, failure: tuple[str, str] | None) -> tuple[str, str] | None:
        return worst_failure(self._gather(failure))

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        failure = None
        try:
            yield
        except Exception as e:  # PointTimeout included: agreed on, so the ranks stay in step
            failure = failure_of(e)
        agreed = self.agree(failure)
        if agreed is not None:
            raise PointFailed(*agreed)

    def merge(self, check: Check) -> Check:
        return merge_checks(self._gather(check))

    def stray(self, e: Exception) -> tuple[str, str]:
        if isinstance(e, PointTimeout):  # fired outside a step: the ranks may be out of step
            raise RuntimeError(f"{e} (inside a collective)") from None
        raise e

    def make_inputs(self, problem: Problem, seed: int, fill: str, dev: torch.device) -> dict:
        # A collective (of any world size) or a tensor-parallel problem: inputs differ by rank.
        if not isinstance(problem, CollectiveProblem) and world_size_of(problem) < 2:
            raise TypeError(
                f"ranks in lockstep measure problems of several ranks, not {problem.label()}"
            )
        return problem.make_inputs(seed, fill, dev, rank=self.rank)  # type: ignore[call-arg]

    def time_once(
        self,
        closures: list,
        device: DeviceInfo,
        protocol: Protocol,
        timer_name: str,
        complete: bool,
        on_start: Callable[[], None],
        flusher,
    ) -> Timing:
        if timer_name == "cuda-graph":
            return time_collective_graph(closures[0], protocol, device, on_start)
        return time_collective(closures[0], protocol, device, on_start)
