"""PyTorch baselines of the decoder_layer problem: the layer as Hugging Face Llama writes it,
eager (one kernel per torch op) and through torch.compile, cut as vLLM's piecewise compile cuts
it: the ops before attention and the ops after it are compiled graphs, the KV append and the
attention between them run eagerly (a compiled index_copy_ into a graph input becomes a copy of
the whole cache: 126x the own kernel on the H200 in layer_ops-r2, 2026-11-24). Torch has no paged
attention kernel, so the attention gathers each sequence's pages into a dense copy first (as the
sdpa-paged-gather provider does): a naive step beside the own kernels' paged split-KV decode."""

from __future__ import annotations

from typing import Any

import torch

from harness.device import DeviceInfo
from harness.problems.decoder_layer import DecoderLayerProblem
from harness.providers import hf_llama as hf
from harness.providers.registry import Prepared, register


def _step(problem: DecoderLayerProblem, inputs: dict, pre: Any, post: Any):
    c = problem.config
    pre_args = (inputs["x"], inputs["residual"], inputs["w_in"], inputs["w_qkv"],
                inputs["positions"], inputs["cos_sin"], c.heads, c.kv_heads)  # fmt: skip
    cache = (inputs["k_cache"], inputs["v_cache"], inputs["slot_mapping"], inputs["block_table"])
    weights = (inputs["w_o"], inputs["w_post"], inputs["w_gate_up"], inputs["w_down"])

    def step() -> tuple[torch.Tensor, torch.Tensor]:
        q, k, v, r1 = pre(*pre_args)
        attn = hf.layer_attention(q, k, v, *cache, problem.kv_len + 1)
        return post(attn, r1, *weights)

    return step


def _output(outs: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    return torch.cat(outs, dim=1)


def _tp1(problem: DecoderLayerProblem, device: DeviceInfo) -> str | None:
    """PyTorch's layer is the reader's reference at tensor parallel 1 (the sharded layer is the
    own one's)."""
    return "tp 1 only (the sharded layer is own-triton's)" if problem.tp > 1 else None


def _compiled_tp1(problem: DecoderLayerProblem, device: DeviceInfo) -> str | None:
    return _tp1(problem, device) or hf.compiled_supports(problem, device)


@register("torch-eager", "decoder_layer", "vendor", ("nvidia", "amd", "cpu"), supports=_tp1)
def _torch_eager(problem: DecoderLayerProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """PyTorch eager, Hugging Face Llama's layer, pages gathered for SDPA."""
    step = _step(problem, inputs, hf.layer_pre, hf.layer_post)
    return Prepared(step, {"formulation": "hf-llama", "torch": torch.__version__}, _output)


@register("torch-compile", "decoder_layer", "vendor", ("nvidia", "amd"), supports=_compiled_tp1)
def _torch_compile(problem: DecoderLayerProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """torch.compile of the layer before and after attention (vLLM's pieces); attention eager."""
    pre, post = hf.compile_fns(hf.layer_pre, hf.layer_post)
    step = _step(problem, inputs, pre, post)
    config = {
        "formulation": "hf-llama",
        "compile": f"{hf.COMPILE}, of the pieces before and after attention; KV append and "
        "attention eager",
        "compile_s": hf.warm(step, device),
        "torch": torch.__version__,
    }
    return Prepared(step, config, _output)
