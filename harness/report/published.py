"""Published microbenchmark figures to read our probes against.

Luo et al. measured load-to-use latency per memory level with pointer chases (one thread,
dependent loads, clock() around the chain) on an H800 PCIe (Hopper, HBM2e), an A100 and an
RTX 4090. Their H800 is a Hopper SM like the H100/H200's, so L1 and L2 cycle counts should be
close to ours; global-memory latency depends on the memory (HBM2e there, HBM3e on the H200)
and on how far the chase strays across TLB reach.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedLatency:
    """Latency in clock cycles per level (l1, shared, l2, global) for a few GPUs."""

    citation: str
    url: str
    cycles: dict[str, dict[str, float]]  # device -> level -> cycles


# W. Luo, R. Fan, Z. Li, D. Du, Q. Wang, X. Chu, "Benchmarking and Dissecting the Nvidia Hopper
# GPU Architecture", IPDPS 2024; arXiv:2402.13499 (v1), memory-latency table of Section IV.
LUO_2024 = PublishedLatency(
    citation="Luo et al., Benchmarking and Dissecting the Nvidia Hopper GPU Architecture, IPDPS 2024 (arXiv:2402.13499)",
    url="https://arxiv.org/abs/2402.13499",
    cycles={
        "H800 PCIe": {"l1": 40.7, "shared": 29.0, "l2": 263.0, "global": 478.8},
        "A100": {"l1": 37.9, "shared": 29.0, "l2": 261.5, "global": 466.3},
        "RTX 4090": {"l1": 43.4, "shared": 30.1, "l2": 273.0, "global": 541.5},
    },
)
