"""Providers: implementations of an op, registered into one registry (providers.registry.REGISTRY)."""

from __future__ import annotations

import importlib

from harness.providers.registry import REGISTRY, Prepared, Provider, Registry, Unsupported, register

# Each module registers its providers at import; the order fixes the listing order.
PROVIDER_MODULES = (
    "harness.providers.gemm_vendor",
    "harness.providers.attention_sdpa",
    "harness.providers.attention_flash",
    "harness.providers.ck_fmha",
    "harness.providers.own_triton",
    "harness.providers.own_cutlass",
    "harness.microbench.providers",
)


def load_all() -> Registry:
    """Import every provider module once and return the filled registry."""
    for mod in PROVIDER_MODULES:
        importlib.import_module(mod)
    return REGISTRY


__all__ = ["REGISTRY", "Prepared", "Provider", "Registry", "Unsupported", "load_all", "register"]
