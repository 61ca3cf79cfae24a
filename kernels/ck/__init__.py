"""Composable Kernel (CK) tile FMHA forward, built from the pinned third_party/composable_kernel
with the project's own code-generation config.

    fmha_codegen  which kernels CK's generator emits (default vs register-trick), blob writing
    fmha_build    hipcc command lines, content-keyed build cache, the tile_example_fmha_fwd binary
    fmha_run      the binary's argument list and the parser of its result line

Nothing here imports the harness; nothing from CK is copied into this folder.
"""

# composable_kernel pinned as third_party/composable_kernel (develop, 2024-10-23; needs ROCm 6.2).
CK_SHA = "8e22e1ae31bbf7086f69d8724e027676791d351a"
