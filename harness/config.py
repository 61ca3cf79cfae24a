"""Structured configs (registered with Hydra's ConfigStore) and composition with clear errors.

configs/ holds the primary config and the protocol group; sweeps/*.yaml are the presets, each
registered here as an option of the `sweep` group (package _global_, so a preset may also set
protocol values). Composition errors become one ConfigError line naming the key and what is
allowed; the CLI turns that into exit status 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml
from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import HydraException
from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from harness.measure.protocol import Protocol
from harness.provenance import REPO_ROOT

CONFIG_DIR = REPO_ROOT / "configs"
SWEEPS_DIR = REPO_ROOT / "sweeps"
CPU_DEFAULT_SWEEP = "smoke"
GPU_DEFAULT_SWEEP = "main_gpu"


class ConfigError(ValueError):
    """A bad config or override, described in one line."""


@dataclass
class SweepConfig:
    name: str = MISSING
    description: str = ""
    max_points: int = 500  # guard: a sweep larger than this refuses to start
    groups: list[Any] = field(default_factory=list)


@dataclass
class RunConfig:
    sweep: SweepConfig = field(default_factory=SweepConfig)
    protocol: Protocol = field(default_factory=Protocol)
    results_dir: str = "results/_scratch"
    run_id: str | None = None  # default: <sweep>-<device>-<utc time>
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    providers: list[str] | None = None  # keep only these providers from the sweep
    max_points: int | None = None  # raise the sweep's own guard
    point_timeout_s: float = 900.0
    rerun_failed: bool = False  # also re-measure points whose row has status error
    progress: bool = True
    dry_run: bool = False  # list the points and exit
    # Several devices: all, or a list of indices ([0,1,3]); one worker process per device, rows
    # merged into one run. ([cpu,cpu] runs two CPU workers: the CPU path of the same code.)
    devices: Any = None
    # This process measures points i with i % shard_count == shard_index (set for workers, and
    # for cluster jobs: one job per shard, see configs/hydra/launcher/).
    shard_index: int = 0
    shard_count: int = 1


def sweep_names() -> list[str]:
    return sorted(p.stem for p in SWEEPS_DIR.glob("*.yaml"))


def _register() -> None:
    cs = ConfigStore.instance()
    cs.store(name="run_schema", node=RunConfig)
    for path in sorted(SWEEPS_DIR.glob("*.yaml")):
        node = yaml.safe_load(path.read_text()) or {}
        cs.store(group="sweep", name=path.stem, node=node, package="_global_")


_register()


def _top_keys() -> list[str]:
    return [f.name for f in fields(RunConfig)]


def _explain(e: Exception) -> str:
    """One line for a Hydra/OmegaConf composition error (the cause holds the useful part)."""
    msg = str(e) + "\n" + str(e.__cause__ or "")
    m = re.search(r"Could not find '([\w/]+)/(\S+?)'", msg)
    if m:
        group, name = m.groups()
        allowed = sweep_names() if group == "sweep" else _group_options(group)
        return f"{group}: unknown '{name}'; allowed: {', '.join(allowed)}"
    m = re.search(r"Key '(.+?)' (?:is )?not in .*?full_key: (\S+)", msg, re.S)
    if m:
        full = m.group(2)
        parent = full.rsplit(".", 1)[0] if "." in full else ""
        return f"{full}: unknown key; allowed: {', '.join(_keys_at(parent))}"
    m = re.search(r"Error parsing override '(.*?)'\n(.*)", msg)
    if m:
        return f"{m.group(1) or 'override'}: cannot parse ({m.group(2)}); allowed: key=value"
    m = re.search(r"(Value .*?)\n\s+full_key: (\S+)", msg)
    if m:
        typ = re.search(r"converted to (\w+)", m.group(1))
        allowed = f"; allowed: a value of type {typ.group(1)}" if typ else ""
        return f"{m.group(2)}: {m.group(1)}{allowed}"
    first = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
    return first


def _group_options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml"))


def _keys_at(parent: str) -> list[str]:
    node: Any = OmegaConf.structured(RunConfig)
    for part in filter(None, parent.split(".")):
        node = node[part]
    return list(node.keys()) if isinstance(node, DictConfig) else _top_keys()


def compose_run_config(overrides: list[str]) -> DictConfig:
    """Compose configs/config.yaml with a sweep preset and overrides; raises ConfigError."""
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            cfg = compose(config_name="config", overrides=overrides)
    except (HydraException, OmegaConfBaseException) as e:
        raise ConfigError(_explain(e)) from None
    finally:
        GlobalHydra.instance().clear()
    try:
        OmegaConf.to_container(cfg, throw_on_missing=True)
    except OmegaConfBaseException as e:
        raise ConfigError(_explain(e)) from None
    return cfg


def protocol_of(cfg: DictConfig) -> Protocol:
    p: Protocol = OmegaConf.to_object(cfg.protocol)
    p.validate()
    return p


def config_dirs() -> tuple[Path, Path]:
    return CONFIG_DIR, SWEEPS_DIR
