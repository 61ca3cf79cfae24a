"""Structured configs (registered with Hydra's ConfigStore) and composition with clear errors.

configs/ holds the primary config and the protocol group; sweeps/*.yaml are the presets, each
registered here as an option of the `sweep` group (package _global_, so a preset may also set
protocol values). Composition errors become one ConfigError line naming the key and what is
allowed; the CLI turns that into exit status 2.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
# The preset a command measures when no sweep= is given: (on a GPU, on the CPU).
DEFAULT_SWEEPS = {"run": ("main_gpu", "smoke"), "ceilings": ("ceilings", "microbench_smoke")}
# Overriding a zip's lists together (in `harness run --help` and the README; tests run it).
ZIP_EXAMPLE = (
    "harness run sweep=gemm_square 'sweep.groups.0.zip={m:[4096,8192],n:[4096,8192],"
    "k:[4096,8192]}' dry_run=true"
)


class ConfigError(ValueError):
    """A bad config or override, described in one line."""


@dataclass
class SweepConfig:
    name: str = MISSING
    description: str = ""
    max_points: int = 500  # guard: a sweep larger than this refuses to start
    groups: list[Any] = field(default_factory=list)


def _key(default: Any, help: str) -> Any:
    """A RunConfig field with its one-line help (`harness run --help` prints both)."""
    return field(default=default, metadata={"help": help})


@dataclass
class RunConfig:
    sweep: SweepConfig = field(default_factory=SweepConfig)
    protocol: Protocol = field(default_factory=Protocol)
    results_dir: str = _key("results/_scratch", "rows go to <results_dir>/<run_id>/rows/")
    run_id: str | None = _key(None, "default <sweep>-<device>-<utc time>; an existing one resumes")
    device: str = _key("auto", "auto | cpu | cuda | cuda:N | xpu:N")
    providers: list[str] | None = _key(None, "keep only these providers of the sweep: [a,b]")
    max_points: int | None = _key(None, "raise the sweep's own guard (sweep.max_points)")
    point_timeout_s: float = _key(900.0, "a point still running after this is an error row")
    rerun_failed: bool = _key(False, "also re-measure points whose row has status error")
    allow_mixed: bool = _key(
        False, "resume a run_id with another sweep, providers or protocol (run.json's history)"
    )
    isolate: bool = _key(True, "measure in a child process: a point that kills it is an error row")
    progress: bool = _key(True, "a progress bar on stderr")
    dry_run: bool = _key(False, "list the points and exit")
    tune_only: bool = _key(
        False, "run the tune pass alone: own tuners' choices go to the disk cache, nothing is timed"
    )
    stop_after_s: float | None = _key(
        None, "start no new point after this many seconds (exit 75); the same command resumes"
    )
    compile_workers: int | None = _key(
        None, "processes that compile own Triton's candidates before the tune pass (0: none)"
    )
    # ([cpu,cpu] runs two CPU workers: the CPU path of the same code.)
    devices: Any = _key(None, "all, or indices [0,1,3]: one worker per device, one merged run")
    # Set for workers, and for cluster jobs: one job per shard, see configs/hydra/launcher/.
    shard_index: int = _key(0, "measure the points i with i % shard_count == shard_index")
    shard_count: int = _key(1, "see shard_index")


def default_sweep(command: str, device_kind: str) -> str:
    """The preset `harness <command>` measures on this kind of device when none is named."""
    on_gpu, on_cpu = DEFAULT_SWEEPS[command]
    return on_cpu if device_kind == "cpu" else on_gpu


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


def _explain(e: Exception, overrides: Sequence[str] = ()) -> str:
    """One line for a Hydra/OmegaConf composition error (the cause holds the useful part)."""
    msg = str(e) + "\n" + str(e.__cause__ or "")
    m = re.search(r"Could not (?:find|load) '([\w/]+)/(\S+?)'", msg)
    if m:
        group, name = m.groups()
        options = sweep_names() if group == "sweep" else _group_options(group)
        return f"{group}: unknown '{name}'; allowed: {', '.join(options)}"
    m = re.search(r"Key '(.+?)' (?:is )?not in .*?full_key: (\S+)", msg, re.S)
    if m:
        full = m.group(2)
        if full.startswith("sweep.groups["):  # free-form: the preset, not the schema, has keys
            return _unknown_in_groups(_dotted(full), overrides)
        parent = full.rsplit(".", 1)[0] if "." in full else ""
        return f"{full}: unknown key; allowed: {', '.join(_keys_at(parent))}"
    m = re.search(r"list index out of range\s+full_key: (\S+)", msg)
    if m:
        return _no_such_group(_dotted(m.group(1)), overrides)
    m = re.search(r"Index '(.*?)' \(str\) is not an int", msg)
    if m:
        key = next((o for o in overrides if f".{m.group(1)}." in f"{o.split('=')[0]}."), "")
        key = key.split("=")[0].lstrip("+~")
        at = key.split(f".{m.group(1)}")[0] if key else "sweep.groups"
        return _no_such_group(f"{at}.{m.group(1)}", overrides)
    m = re.search(r"Error parsing override '(.*?)'\n(.*)", msg)
    if m:
        return f"{m.group(1) or 'override'}: cannot parse ({m.group(2)}); allowed: key=value"
    m = re.search(r"(\w+) is not a ListConfig, list or tuple.*?full_key: (\S+)", msg, re.S)
    if m:
        key = m.group(2)
        value = _override_value(overrides, key) or m.group(1)
        return f"{key}: '{value}' is not a list; allowed: a list, e.g. {key}=[{value}]"
    m = re.search(r"field '(.+?)' is not Optional.*?full_key: (\S+)", msg, re.S)
    if m:
        return f"{m.group(2)}: null is not allowed; allowed: a value (see harness run --help)"
    m = re.search(r"does not support deletion\s+full_key: (\S+)", msg)
    if m:
        return f"{m.group(1)}: cannot be removed; allowed: {m.group(1)}=VALUE to change it"
    m = re.search(r"(Value .*?)\n\s+full_key: (\S+)", msg)
    if m:
        typ = re.search(r"(?:converted to|is not a valid) (\w+)", m.group(1))
        kind = typ.group(1) if typ else "its type"
        allowed = "true, false" if kind == "bool" else f"a value of type {kind}"
        allowed = f"; allowed: {allowed}"
        return f"{m.group(2)}: {m.group(1)}{allowed}"
    first = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
    return first


def _dotted(full_key: str) -> str:
    """'sweep.groups[0].zip.mm' as an override spells it: 'sweep.groups.0.zip.mm'."""
    return re.sub(r"\[(\w+)\]", r".\1", full_key)


def _override_value(overrides: Sequence[str], key: str) -> str | None:
    for o in overrides:
        k, eq, v = o.partition("=")
        if eq and k.lstrip("+~") == key:
            return v
    return None


def _groups_without(overrides: Sequence[str], bad: str) -> list:
    """The sweep's groups composed without the overrides under `bad` (the one that failed):
    what the user could have meant is in the preset, not in the schema."""
    keep = [o for o in overrides if not o.split("=")[0].lstrip("+~").startswith(bad)]
    try:
        groups = OmegaConf.to_container(_compose(keep).sweep.groups)
        return groups if isinstance(groups, list) else []
    except (HydraException, OmegaConfBaseException, TypeError, ValueError):
        return []


def _no_such_group(key: str, overrides: Sequence[str]) -> str:
    n = len(_groups_without(overrides, "sweep.groups"))
    index = key.split(".")[2] if key.count(".") >= 2 else "?"
    allowed = f"0..{n - 1}" if n else "none (the sweep has no group)"
    return f"{key}: no group {index!r} in this sweep; allowed: group indices {allowed}"


def _unknown_in_groups(key: str, overrides: Sequence[str]) -> str:
    """`sweep.groups.0.zip.mm=...`: the keys that group has there, and the op's other axes."""
    from harness.sweep import GROUP_KEYS, axis_names

    parts = key.split(".")
    groups = _groups_without(overrides, key)
    index = int(parts[2]) if parts[2].isdigit() else -1
    group = groups[index] if 0 <= index < len(groups) and isinstance(groups[index], dict) else {}
    if len(parts) == 4:
        return f"{key}: unknown key; allowed: {', '.join(GROUP_KEYS[:-1])}"
    here = group.get(parts[3])
    here = list(here) if isinstance(here, dict) else []
    if len(parts) == 5 and parts[3] in ("product", "zip", "fixed") and group.get("op"):
        op = group["op"]
        others = [a for a in axis_names(op) if a not in here]
        return (
            f"{key}: unknown axis '{parts[4]}' here; allowed: {', '.join(here)}, or another "
            f"axis of {op} added with +{'.'.join(parts[:4])}.AXIS=...: {', '.join(others)}"
        )
    return f"{key}: unknown key; allowed: {', '.join(here) or 'none'}"


def _group_options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml"))


def _keys_at(parent: str) -> list[str]:
    node: Any = OmegaConf.structured(RunConfig)
    for part in filter(None, parent.split(".")):
        node = node[part]
    return [str(k) for k in node.keys()] if isinstance(node, DictConfig) else _top_keys()


def _compose(overrides: list[str]) -> DictConfig:
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            return compose(config_name="config", overrides=overrides)
    finally:
        GlobalHydra.instance().clear()


def _check_keys(cfg: DictConfig) -> None:
    """Keys Hydra lets through: `+key=`/`++key=` add a key the schema lacks (it was then
    silently ignored), `~key` removes one the run needs."""
    for node, schema, prefix in (
        (cfg, RunConfig, ""),
        (cfg.protocol, Protocol, "protocol."),
        (cfg.sweep, SweepConfig, "sweep."),
    ):
        names = [f.name for f in fields(schema)]
        for key in map(str, node):  # a config's keys are strings
            if key not in names:
                raise ConfigError(f"{prefix}{key}: unknown key; allowed: {', '.join(names)}")
        for key in names:
            if key not in node:
                raise ConfigError(
                    f"{prefix}{key}: removed (~{prefix}{key}); allowed: {prefix}{key}=VALUE"
                )


def _check_values(cfg: DictConfig) -> None:
    """Run keys whose type Hydra checks but whose range it cannot."""
    if not cfg.point_timeout_s > 0:
        raise ConfigError(
            f"point_timeout_s: {cfg.point_timeout_s} must be > 0; allowed: seconds > 0, "
            "e.g. point_timeout_s=900"
        )
    for key in ("max_points", "shard_count"):
        value = cfg[key]
        if value is not None and value < 1:
            raise ConfigError(f"{key}: {value} must be >= 1; allowed: 1, 2, ...")
    if cfg.sweep.max_points < 1:
        raise ConfigError(f"sweep.max_points: {cfg.sweep.max_points}; allowed: 1, 2, ...")


def compose_run_config(overrides: list[str]) -> DictConfig:
    """Compose configs/config.yaml with a sweep preset and overrides; raises ConfigError."""
    try:
        cfg = _compose(overrides)
    # TypeError: Hydra's own for a list index that is no number (sweep.groups.x.op=...)
    except (HydraException, OmegaConfBaseException, TypeError) as e:
        raise ConfigError(_explain(e, overrides)) from None
    try:
        OmegaConf.to_container(cfg, throw_on_missing=True)
    except OmegaConfBaseException as e:
        raise ConfigError(_explain(e, overrides)) from None
    _check_keys(cfg)
    _check_values(cfg)
    if cfg.run_id is not None:  # one folder under results_dir, never a path out of it
        from harness.store import check_run_id

        try:
            check_run_id(cfg.run_id)
        except ValueError as e:
            raise ConfigError(str(e)) from None
    return cfg


def protocol_of(cfg: DictConfig) -> Protocol:
    p = OmegaConf.to_object(cfg.protocol)
    if not isinstance(p, Protocol):  # the schema types it; a bare dict would fail below anyway
        raise ConfigError(f"protocol: {type(p).__name__}, not a Protocol; allowed: protocol=NAME")
    p.validate()
    return p


def _first_comment(path: Path) -> str:
    line = path.read_text().splitlines()[0] if path.stat().st_size else ""
    return line.lstrip("# ").strip() if line.startswith("#") else ""


def _preset_line(path: Path) -> str:
    """'<points> points  <description>' from a preset's header comment and its sweep block."""
    points = re.search(r"\(points: (\d+)\)", _first_comment(path))
    sweep = (yaml.safe_load(path.read_text()) or {}).get("sweep") or {}
    count = f"{points.group(1)} points" if points else ""
    return f"{count:>11}  {sweep.get('description', '')}"


def config_help(cfg: DictConfig, command: str = "run") -> str:
    """The keys of a run with the values composed here, from RunConfig and the Protocol, the
    protocol group options in configs/protocol/ and the presets in sweeps/ (`--help`)."""
    from harness.cliargs import key_lines
    from harness.measure.protocol import FLUSH_MODES, L2_STATES, TIMERS
    from harness.problems import FILLS

    def value(v: Any) -> Any:
        return OmegaConf.to_container(v) if OmegaConf.is_config(v) else v

    own = [
        (f.name, value(cfg[f.name]), f.metadata["help"]) for f in fields(RunConfig) if f.metadata
    ]
    choices = {"timer": TIMERS, "l2": L2_STATES, "fill": FILLS, "l2_flush": FLUSH_MODES}
    proto = [(f"protocol.{k}", v, " | ".join(choices.get(k, ()))) for k, v in cfg.protocol.items()]
    defaults = yaml.safe_load((CONFIG_DIR / "config.yaml").read_text())["defaults"]
    default_protocol = next(
        d["protocol"] for d in defaults if isinstance(d, dict) and "protocol" in d
    )
    groups = [(p.stem, _first_comment(p)) for p in sorted((CONFIG_DIR / "protocol").glob("*.yaml"))]
    presets = [(p.stem, _preset_line(p)) for p in sorted(SWEEPS_DIR.glob("*.yaml"))]
    on_gpu, on_cpu = DEFAULT_SWEEPS[command]
    return "\n".join(
        [
            "run config keys (key=value; the values composed here):",
            key_lines(own),
            "",
            f"protocol=NAME, a group from configs/protocol/ (default: {default_protocol}):",
            *(f"  {name:<10}{text}" for name, text in groups),
            "protocol keys (protocol.key=value; the group's values, then the preset's protocol: block):",
            key_lines(proto, width=34),
            "",
            f"sweep=NAME, a preset from sweeps/ (default: {on_gpu} on a GPU, {on_cpu} on the CPU; "
            f"here: {cfg.sweep.name}):",
            *(f"  {name:<20}{text}" for name, text in presets),
            "A preset's axes: sweep.groups.N.{product,zip,fixed}.AXIS=VALUE. The lists of a zip",
            "advance together, so change them together, e.g.",
            f"  {ZIP_EXAMPLE}",
        ]
    )


def config_dirs() -> tuple[Path, Path]:
    return CONFIG_DIR, SWEEPS_DIR
