"""Problems: what is measured (axes, exact work, inputs, fp32 reference, tolerance)."""

from harness.problems.attention import AttentionProblem
from harness.problems.base import FILLS, Check, Problem
from harness.problems.collective import COLLECTIVE_PROBLEMS, CollectiveProblem
from harness.problems.decoder_layer import DecoderLayerProblem
from harness.problems.gemm import GemmProblem
from harness.problems.layer_ops import LAYER_OP_PROBLEMS
from harness.problems.microbench import MICROBENCH_PROBLEMS

PROBLEM_TYPES = {
    "gemm": GemmProblem,
    "attention": AttentionProblem,
    **MICROBENCH_PROBLEMS,
    **COLLECTIVE_PROBLEMS,
    **LAYER_OP_PROBLEMS,
    "decoder_layer": DecoderLayerProblem,
}

__all__ = [
    "FILLS",
    "PROBLEM_TYPES",
    "AttentionProblem",
    "Check",
    "CollectiveProblem",
    "GemmProblem",
    "Problem",
]
