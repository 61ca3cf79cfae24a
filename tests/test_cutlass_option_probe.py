"""scripts/cutlass_option_probe.py without a GPU: how it reads its `config:options` pairs (the
timing and the bit checks need a GPU)."""

from __future__ import annotations

import pytest
from harness_kernels.cutlass.gemm import CONFIGS, RunOptions
from script_module import load_script

probe = load_script("cutlass_option_probe")


def test_specs_name_a_config_and_its_printed_options():
    name = "sm90-streamk-128x144-c2x1"
    config, options = probe.parse_spec(f"{name}:split-kx4/sw1/nondet")
    assert config is CONFIGS[name]
    assert options == RunOptions("split-k", 4, reduction="nondeterministic")
    assert probe.parse_spec(name) == (CONFIGS[name], RunOptions())


def test_unknown_configs_and_options_are_refused():
    with pytest.raises(ValueError, match="unknown own CUTLASS config"):
        probe.parse_spec("sm90-coop-999x999:heuristic/sw1")
    with pytest.raises(ValueError, match="diagonal"):
        probe.parse_spec("sm90-streamk-128x144-c2x1:heuristic/sw1/diagonal")
