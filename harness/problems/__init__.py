"""Problems: what is measured (axes, exact work, inputs, fp32 reference, tolerance)."""

from harness.problems.attention import AttentionProblem
from harness.problems.base import FILLS, Check, Problem
from harness.problems.gemm import GemmProblem

PROBLEM_TYPES = {"gemm": GemmProblem, "attention": AttentionProblem}

__all__ = ["FILLS", "PROBLEM_TYPES", "AttentionProblem", "Check", "GemmProblem", "Problem"]
