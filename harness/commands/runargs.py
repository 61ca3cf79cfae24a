"""What the commands that compose a run config share (run, main, ceilings, crosscheck): the
device an override names, the default sweep per device, the parser of Hydra overrides with
help computed from the composed config, and `--cfg job`."""

from __future__ import annotations

import os

from harness.cliargs import Parser


def device_override(overrides: list[str]) -> str:
    """The `device=` an override list names, or auto."""
    for o in overrides:
        if o.startswith("device="):
            return o.split("=", 1)[1]
    return "auto"


def prepare_environment(device_spec: str) -> str:
    """Resolve the device and, for the CPU, switch on the Triton interpreter before any kernel
    module is imported (triton.jit decides at decoration time)."""
    from harness.device import parse_device

    kind, _ = parse_device(device_spec)
    if kind == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    return kind


def with_sweep(command: str, overrides: list[str]) -> list[str]:
    """The overrides with the command's default sweep for this device added (or put for
    sweep=auto); prepares the environment for that device."""
    from harness.config import default_sweep

    kind = prepare_environment(device_override(overrides))
    sweep = f"sweep={default_sweep(command, kind)}"
    if not any(o.startswith("sweep=") for o in overrides):
        return [*overrides, sweep]
    return [sweep if o == "sweep=auto" else o for o in overrides]


def run_parser(command: str, description: str) -> Parser:
    """A parser for a command that composes a run config: Hydra overrides, --cfg, and help that
    prints the composed config's keys with their values (harness.config.config_help)."""
    from harness.config import compose_run_config, config_help

    sweep_of = "ceilings" if command == "ceilings" else "run"
    parser = Parser(command, description)
    parser.add_argument(
        "--cfg",
        "-c",
        choices=["job"],
        metavar="job",
        help="print the composed config as YAML, exit",
    )
    parser.add_argument("--resolve", action="store_true", help="with --cfg: resolve ${...}")
    parser.add_overrides("Hydra overrides: sweep=NAME, protocol=NAME, key=value (keys below)")
    parser.set_help_tail(
        lambda ov: config_help(compose_run_config(with_sweep(sweep_of, ov)), sweep_of)
    )
    return parser


def print_config(overrides: list[str], resolve: bool) -> int:
    """`--cfg job`: the config a run with these overrides would use, as YAML (Hydra's form)."""
    from omegaconf import OmegaConf

    from harness.config import compose_run_config

    print(OmegaConf.to_yaml(compose_run_config(overrides), resolve=resolve), end="")
    return 0
