"""Fixtures local to the kernel tests.

Triton 3.6's interpreter converts 1-element scalar arrays with int(), which numpy >= 2.4 rejects
(triton-lang/triton#9171, fixed upstream by #9172 after 3.6.0): every kernel with a runtime loop
bound then fails under TRITON_INTERPRET=1. Until the environment pins numpy<2.4 or moves to a
fixed Triton, this conftest re-applies the upstream one-line fix for the test session.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")


def _patch_interpreter_index() -> None:
    import numpy as np
    import triton.runtime.interpreter as interp

    major, minor = (int(x) for x in np.__version__.split(".")[:2])
    original = getattr(interp, "_patch_lang_tensor", None)
    if (major, minor) < (2, 4) or original is None or getattr(original, "_squeezed", False):
        return

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    patched._squeezed = True
    interp._patch_lang_tensor = patched


_patch_interpreter_index()
