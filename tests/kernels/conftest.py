"""Fixtures local to the kernel tests.

Triton 3.6's interpreter turns 1-element scalar arrays into loop bounds with int(), which
NumPy 2.3 warns about on every loop (thousands of DeprecationWarnings per test) and NumPy >= 2.4
rejects (triton-lang/triton#9171, fixed upstream by #9172 after 3.6.0; the project pins
numpy<2.4). This re-applies the upstream one-line fix for the test session; it is a no-op for
compiled kernels and harmless once Triton ships the fix.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture
def fresh_gemm_tune():
    """A seeded run with the own Triton GEMM tuner's in-process cache empty before and after
    (its test modules use it for every test: `pytestmark = pytest.mark.usefixtures(...)`)."""
    import torch
    from harness_kernels.triton import gemm_tune

    torch.manual_seed(0)
    gemm_tune.clear_cache()
    yield
    gemm_tune.clear_cache()


def _patch_interpreter_index() -> None:
    import triton.runtime.interpreter as interp

    original = getattr(interp, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_squeezed", False):
        return

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    patched._squeezed = True
    interp._patch_lang_tensor = patched


_patch_interpreter_index()
