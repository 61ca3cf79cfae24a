"""Providers of the decoder_layer problem: the own Triton kernels chained into one layer's decode
step, launched one by one (own-triton) or replayed as one CUDA graph (own-triton-graph), so the
launch gaps between kernels are what the two rows differ by."""

from __future__ import annotations

import os

import torch

from harness.device import DeviceInfo
from harness.problems.decoder_layer import DecoderLayerProblem
from harness.problems.layer_ops import RMS_EPS
from harness.providers.registry import Prepared, Unsupported, register


def _prepare(problem: DecoderLayerProblem, inputs: dict, device: DeviceInfo, graph: bool):
    if device.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        raise Unsupported("CPU runs need TRITON_INTERPRET=1 before the kernels are imported")
    from harness_kernels.triton.decoder_layer import prepare_decoder_layer

    c, tp = problem.config, problem.tp
    all_reduce = None
    if tp > 1:
        import torch.distributed as dist

        if not dist.is_initialized() or dist.get_world_size() != tp:
            raise RuntimeError(f"tp {tp} runs on {tp} ranks in lockstep (harness.collectives)")
        all_reduce = dist.all_reduce  # in place, sum, on the current stream
    launch = prepare_decoder_layer(
        inputs,
        heads=c.heads // tp,
        kv_heads=c.kv_heads // tp,
        eps=RMS_EPS,
        sms=device.sm_count,
        graph=graph,
        all_reduce=all_reduce,
    )
    config = {**launch.config, "tp": tp}
    return Prepared(launch, config, lambda outs: torch.cat(outs, dim=1))


def _ranks_supported(problem: DecoderLayerProblem, device: DeviceInfo) -> str | None:
    """tp ranks take one device each: tp GPUs visible (on the CPU, gloo ranks share it)."""
    if problem.tp > 1 and device.type == "cuda" and problem.tp > torch.cuda.device_count():
        return f"tp {problem.tp} needs {problem.tp} GPUs; {torch.cuda.device_count()} visible"
    return None


def _graph_supports(problem: DecoderLayerProblem, device: DeviceInfo) -> str | None:
    if device.type != "cuda" or device.vendor != "nvidia":
        return "CUDA graphs are captured on NVIDIA GPUs (the eager chain is own-triton)"
    return _ranks_supported(problem, device)


@register("own-triton", "decoder_layer", "own", ("nvidia", "amd", "cpu"), supports=_ranks_supported)
def _own_eager(problem: DecoderLayerProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """Own Triton kernels chained into one decoder layer, launched one by one."""
    return _prepare(problem, inputs, device, graph=False)


@register("own-triton-graph", "decoder_layer", "own", ("nvidia",), supports=_graph_supports)
def _own_graph(problem: DecoderLayerProblem, inputs: dict, device: DeviceInfo) -> Prepared:
    """Own Triton kernels chained into one decoder layer, replayed as one CUDA graph."""
    return _prepare(problem, inputs, device, graph=True)
