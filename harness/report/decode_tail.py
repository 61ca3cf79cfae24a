"""How long a decode's last SM runs: a model of a split batch's tail, for reading a probe.

A paged decode's work items (one sequence's KV head, or a split of it) land on at most one
persistent CTA per SM. While many CTAs read, they share the HBM read rate; when the short items
are done, the few CTAs left each read at most what one SM can pull alone, so the batch's last
bytes come in below the read rate. This prices that tail: every CTA's bytes (the items the
kernel would give it), then a fluid model where each of the n CTAs still reading gets
min(per_cta_rate, read_rate / n), plus a cold read's fixed cost. What it leaves out (the merge of
split partials, each item's pipeline fill, Q loads) is what a probe measures over it.
"""

from __future__ import annotations

from collections.abc import Sequence


def shared_read_us(cta_bytes: Sequence[float], read_gbps: float, per_cta_gbps: float) -> float:
    """Microseconds until the last CTA has read its bytes, the read rate shared by the CTAs
    still reading, none faster than per_cta_gbps (GB/s = 1e3 bytes per us)."""
    left = sorted(b for b in cta_bytes if b > 0)
    t = 0.0
    done = 0.0
    for i, b in enumerate(left):
        active = len(left) - i
        rate = min(per_cta_gbps, read_gbps / active) * 1e3  # bytes per us for each CTA
        t += (b - done) / rate
        done = b
    return t


def cta_bytes(item_bytes: Sequence[float], ctas: int, order: Sequence[int] | None) -> list[float]:
    """Each CTA's bytes when CTA c runs slots c, c + ctas, ... of `order` (item indices; None:
    item order), as the persistent kernel deals its items."""
    slots = list(order) if order is not None else list(range(len(item_bytes)))
    loads = [0.0] * ctas
    for slot, item in enumerate(slots):
        loads[slot % ctas] += item_bytes[item]
    return loads
