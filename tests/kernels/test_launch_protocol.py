"""Every own-kernel launcher returns a harness_kernels.launch.Launch: the class each public
prepare function is annotated with declares the protocol's attributes and call signature, and
the launches the CPU can make (Triton, under the interpreter) pass isinstance and return `out`.
The CUTLASS launches are checked the same way on a GPU (tests/cutlass/test_gpu_cutlass.py)."""

from __future__ import annotations

import inspect
import os
import typing

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
from harness_kernels.cutlass.fmha import FmhaLaunch, prepare_fmha  # noqa: E402
from harness_kernels.cutlass.gemm import GemmLaunch, prepare_gemm  # noqa: E402
from harness_kernels.launch import Launch  # noqa: E402
from harness_kernels.triton.attention_decode import prepare_decode  # noqa: E402
from harness_kernels.triton.attention_launch import AttentionLaunch  # noqa: E402
from harness_kernels.triton.attention_prefill import prepare_attention  # noqa: E402
from harness_kernels.triton.gemm import MatmulLaunch, prepare_matmul  # noqa: E402
from harness_kernels.triton.gemm_gluon import GluonMatmulLaunch  # noqa: E402

# The five public launchers and the launch class each returns (prepare_matmul: the `tl` kernel's,
# or on sm_90 the Gluon kernel's where it tuned faster).
LAUNCHERS = {
    prepare_matmul: MatmulLaunch | GluonMatmulLaunch,
    prepare_attention: AttentionLaunch,
    prepare_decode: AttentionLaunch,
    prepare_gemm: GemmLaunch,
    prepare_fmha: FmhaLaunch,
}

needs_interpreter = pytest.mark.skipif(
    os.environ.get("TRITON_INTERPRET") != "1", reason="runs kernels under TRITON_INTERPRET=1"
)


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=lambda f: f.__name__)
def test_each_launcher_returns_its_launch_class(launcher) -> None:
    assert typing.get_type_hints(launcher)["return"] == LAUNCHERS[launcher]


CLASSES = {c for v in LAUNCHERS.values() for c in typing.get_args(v) or (v,)}


@pytest.mark.parametrize("cls", sorted(CLASSES, key=lambda c: c.__name__))
def test_each_launch_class_declares_the_protocol(cls) -> None:
    hints = typing.get_type_hints(cls)
    for name, annotation in typing.get_type_hints(Launch).items():
        assert hints.get(name) == annotation, (cls.__name__, name, hints.get(name))
    call = cls.__call__
    assert list(inspect.signature(call).parameters) == ["self"], cls.__name__
    assert typing.get_type_hints(call)["return"] is torch.Tensor, cls.__name__


def test_a_class_missing_a_member_does_not_satisfy_it() -> None:
    class NoConfig:
        out = torch.empty(1)

        def __call__(self) -> torch.Tensor:
            return self.out

    assert not isinstance(NoConfig(), Launch)


def _check(launch: object) -> None:
    assert isinstance(launch, Launch), type(launch).__name__
    assert launch() is launch.out
    assert isinstance(launch.config, dict) and launch.config


@needs_interpreter
def test_triton_launches_satisfy_the_protocol() -> None:
    torch.manual_seed(0)
    a, b = torch.randn(16, 32), torch.randn(32, 48)
    _check(prepare_matmul(a, b, tune=False))
    q = torch.randn(1, 2, 32, 16, dtype=torch.float16)
    kv = torch.randn(1, 1, 48, 16, dtype=torch.float16)
    _check(prepare_attention(q, kv, kv, causal=True, tune=False))
    lens = torch.tensor([48], dtype=torch.int32)
    _check(prepare_decode(q[:, :, :1], kv, kv, cache_seqlens=lens, tune=False))
