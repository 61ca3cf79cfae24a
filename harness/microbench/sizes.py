"""Working-set sizes: printing them, and which level of the memory hierarchy holds one."""

from __future__ import annotations

LEVELS = ("l1", "l2", "global")
L1_MAX_BYTES = 128 << 10  # at most half of the smallest L1 the probes meet (Hopper: 256 KiB)
L2_MIN_BYTES = 1 << 20  # above every L1 (Intel PVC's is 512 KiB)
L2_UNKNOWN_MAX_BYTES = 16 << 20  # L2 probes' upper bound where the row has no L2 size
GLOBAL_MIN_BYTES = 256 << 20  # and at least 4x the L2 when its size is known


def fmt_bytes(n: int) -> str:
    """4096 -> '4KiB', 3 << 30 -> '3GiB', 1536 -> '1.5KiB'."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.4g}{unit}"
    return f"{n}B"


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
