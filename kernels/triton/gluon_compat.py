"""Names the Gluon kernels need that moved between Triton releases (3.6 on the lent GPU
machines, 3.9 from pip today), resolved once here so each kernel imports them by one name."""

from __future__ import annotations

from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import tma

# Triton 3.6 names the TMA copies async_copy_global_to_shared / async_copy_shared_to_global;
# 3.9 renamed them async_load / async_store and made the old names raise.
tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
# A barrier over the warps of the calling partition: thread_barrier in 3.6, barrier in 3.9.
thread_barrier = getattr(gl, "thread_barrier", None) or gl.barrier
