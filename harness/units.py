"""Printing quantities with their units; plain Python, so problems and reports can use it
without importing torch."""

from __future__ import annotations


def fmt_bytes(n: int) -> str:
    """4096 -> '4KiB', 3 << 30 -> '3GiB', 1536 -> '1.5KiB'."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.4g}{unit}"
    return f"{n}B"
