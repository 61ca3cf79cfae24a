"""The LLM catalog: the shapes a transformer layer hands to its GEMMs and its attention.

Each entry is copied from the model's Hugging Face config.json (named above it); the fields are
the ones that set problem shapes. Norms, rotary embeddings and activations carry no GEMM or
attention work and are left out.

HARNESS_MODELS names a JSON file of more entries, {key: {ModelConfig's fields}}, read when this
module is imported (so by every process a run starts, rank processes included): a model outside
the catalog, or the tests' tiny one, without editing this file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ModelConfig:
    """One decoder-only transformer: sizes per layer, number of layers, vocabulary, MoE routing."""

    name: str  # display name
    hf_id: str  # where the numbers come from: huggingface.co/<hf_id>/blob/main/config.json
    hidden: int  # hidden_size
    heads: int  # num_attention_heads
    kv_heads: int  # num_key_value_heads (GQA)
    head_dim: int  # hidden_size / num_attention_heads unless the config says otherwise
    intermediate: int  # intermediate_size (per expert for an MoE)
    layers: int  # num_hidden_layers
    vocab: int  # vocab_size
    experts: int = 0  # num_local_experts; 0 for a dense MLP
    top_k: int = 0  # num_experts_per_tok

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    def validate(self) -> None:
        if self.heads * self.head_dim <= 0 or self.heads % self.kv_heads:
            raise ValueError(
                f"model {self.name}: heads {self.heads} not a multiple of kv_heads "
                f"{self.kv_heads}; allowed: a multiple"
            )
        if self.is_moe and not 0 < self.top_k <= self.experts:
            raise ValueError(
                f"model {self.name}: top_k {self.top_k}; allowed: 1..experts ({self.experts})"
            )


# One preset per line (the gpt-fast style): the models' configs compare column by column.
# fmt: off
MODELS: dict[str, ModelConfig] = {
    # meta-llama/Meta-Llama-3-8B config.json
    "llama3_8b": ModelConfig("Llama-3-8B", "meta-llama/Meta-Llama-3-8B", hidden=4096, heads=32, kv_heads=8, head_dim=128, intermediate=14336, layers=32, vocab=128256),
    # meta-llama/Meta-Llama-3-70B config.json
    "llama3_70b": ModelConfig("Llama-3-70B", "meta-llama/Meta-Llama-3-70B", hidden=8192, heads=64, kv_heads=8, head_dim=128, intermediate=28672, layers=80, vocab=128256),
    # meta-llama/Llama-3.1-405B config.json (Llama 3's 405B size was released as 3.1)
    "llama3_405b": ModelConfig("Llama-3.1-405B", "meta-llama/Llama-3.1-405B", hidden=16384, heads=128, kv_heads=8, head_dim=128, intermediate=53248, layers=126, vocab=128256),
    # Qwen/Qwen2.5-7B config.json (q/k/v carry a bias: no change to the GEMM shapes)
    "qwen2_5_7b": ModelConfig("Qwen2.5-7B", "Qwen/Qwen2.5-7B", hidden=3584, heads=28, kv_heads=4, head_dim=128, intermediate=18944, layers=28, vocab=152064),
    # Qwen/Qwen2.5-72B config.json
    "qwen2_5_72b": ModelConfig("Qwen2.5-72B", "Qwen/Qwen2.5-72B", hidden=8192, heads=64, kv_heads=8, head_dim=128, intermediate=29568, layers=80, vocab=152064),
    # mistralai/Mistral-7B-v0.3 config.json (no sliding window, unlike v0.1)
    "mistral_7b": ModelConfig("Mistral-7B", "mistralai/Mistral-7B-v0.3", hidden=4096, heads=32, kv_heads=8, head_dim=128, intermediate=14336, layers=32, vocab=32768),
    # mistralai/Mixtral-8x7B-v0.1 config.json: 8 experts of Mistral-7B's MLP size, 2 per token
    "mixtral_8x7b": ModelConfig("Mixtral-8x7B", "mistralai/Mixtral-8x7B-v0.1", hidden=4096, heads=32, kv_heads=8, head_dim=128, intermediate=14336, layers=32, vocab=32000, experts=8, top_k=2),
}
# fmt: on


def _extra_models(path: str) -> dict[str, ModelConfig]:
    """The entries of a HARNESS_MODELS file, each validated."""
    with open(path) as f:
        entries = json.load(f)
    out = {}
    for key, fields in entries.items():
        model = ModelConfig(**fields)
        model.validate()
        out[key] = model
    return out


if os.environ.get("HARNESS_MODELS"):
    MODELS.update(_extra_models(os.environ["HARNESS_MODELS"]))


def get_model(name: str) -> ModelConfig:
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"model: unknown '{name}'; allowed: {', '.join(MODELS)}") from None
