"""Providers: implementations of an op, registered into one registry (providers.registry.REGISTRY)."""

from __future__ import annotations

import importlib
import os

from harness.providers.registry import REGISTRY, Prepared, Provider, Registry, Unsupported, register

# Each module registers its providers at import; the order fixes the listing order.
PROVIDER_MODULES = (
    "harness.providers.gemm_vendor",
    "harness.providers.attention_sdpa",
    "harness.providers.attention_flash",
    "harness.providers.attention_fa4",
    "harness.providers.attention_flashinfer",
    "harness.providers.ck_fmha",
    "harness.providers.own_triton",
    "harness.providers.own_cutlass",
    "harness.providers.own_gluon",
    "harness.providers.layer_ops",
    "harness.providers.decoder_layer",
    "harness.providers.decoder_layer_torch",
    "harness.providers.microbench",
    "harness.providers.collectives",
)


def load_all() -> Registry:
    """Import every provider module once and return the filled registry.

    HARNESS_EXTRA_PROVIDERS (comma-separated module names) adds modules of your own: a provider
    outside this package is one file and one environment variable, also in worker processes.
    """
    extra = [m for m in os.environ.get("HARNESS_EXTRA_PROVIDERS", "").split(",") if m.strip()]
    for mod in (*PROVIDER_MODULES, *extra):
        importlib.import_module(mod.strip())
    return REGISTRY


__all__ = ["REGISTRY", "Prepared", "Provider", "Registry", "Unsupported", "load_all", "register"]
