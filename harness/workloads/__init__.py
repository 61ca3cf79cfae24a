"""LLM workloads: the model catalog, the per-layer problems a step runs, and presets from them.

Torch-free: reports import this to compose measured rows into step latencies."""

from harness.workloads.derive import (
    WorkItem,
    problem_flops,
    problem_label,
    problem_min_bytes,
    step_items,
)
from harness.workloads.models import MODELS, ModelConfig, get_model
from harness.workloads.presets import WORKLOADS, Workload, get_workload

__all__ = [
    "MODELS",
    "WORKLOADS",
    "ModelConfig",
    "WorkItem",
    "Workload",
    "get_model",
    "get_workload",
    "problem_flops",
    "problem_label",
    "problem_min_bytes",
    "step_items",
]
