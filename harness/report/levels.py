"""Which level of the memory hierarchy (L1, L2, global) holds a working set, by its size and the
device's L2: read by the ceiling extraction (which rows count as L2 probes) and the tables."""

from __future__ import annotations

LEVELS = ("l1", "l2", "global")
L1_MAX_BYTES = 128 << 10  # at most half of the smallest L1 the probes meet (Hopper: 256 KiB)
L2_MIN_BYTES = 1 << 20  # above every L1 (Intel PVC's is 512 KiB)
L2_UNKNOWN_MAX_BYTES = 16 << 20  # L2 probes' upper bound where the row has no L2 size
GLOBAL_MIN_BYTES = 256 << 20  # and at least 4x the L2 when its size is known


def level_of(working_set_bytes: int, l2_bytes: int | None) -> str | None:
    """Which level holds a working set: l1, l2 (<= half the L2), global (>= 4x the L2) or None
    for the transitions in between."""
    if working_set_bytes <= L1_MAX_BYTES:
        return "l1"
    if l2_bytes and l2_bytes == l2_bytes:  # not NaN
        l2_bytes = int(l2_bytes)
        if L2_MIN_BYTES <= working_set_bytes <= l2_bytes // 2:
            return "l2"
        if working_set_bytes >= max(4 * l2_bytes, GLOBAL_MIN_BYTES):
            return "global"
        return None
    if L2_MIN_BYTES <= working_set_bytes <= L2_UNKNOWN_MAX_BYTES:
        return "l2"
    return "global" if working_set_bytes >= GLOBAL_MIN_BYTES else None
