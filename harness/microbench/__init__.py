"""Microbenchmarks: providers of the memory-stream, pointer-chase and FMA-chain problems
(harness.problems.microbench), measured ceilings, the datasheet table and published figures."""
