"""Expand a sweep preset into points: (problem, provider) pairs, validated before anything runs.

A preset holds groups; each group names an op, its providers and axes:
    product: axes whose values combine as a cartesian product
    zip:     axes whose lists advance together (e.g. square m = n = k)
    fixed:   single values
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.problems import PROBLEM_TYPES, Problem
from harness.providers import Registry


@dataclass(frozen=True)
class Point:
    problem: Problem
    provider: str

    def label(self) -> str:
        return f"{self.provider} | {self.problem.label()}"


def point_key(problem: Problem, provider: str, protocol: dict, device_id: str) -> str:
    """Stable 20-hex-digit hash of problem, provider, protocol and device identity."""
    payload = json.dumps(
        {
            "op": problem.op,
            "problem": problem.axes(),
            "provider": provider,
            "protocol": protocol,
            "device": device_id,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def axis_names(op: str) -> list[str]:
    return [f.name for f in dataclasses.fields(PROBLEM_TYPES[op])]


GROUP_KEYS = ("op", "providers", "product", "zip", "fixed", "name")


def _typed(where: str) -> str:
    """'sweep.groups[0].zip' as an override spells it: 'sweep.groups.0.zip'."""
    return where.replace("[", ".").replace("]", "")


def _axes_part(group: dict, part: str, where: str) -> dict:
    """A group's product/zip/fixed mapping, each value checked for its shape: product and zip
    take lists (a scalar would be iterated, or fail deep inside), fixed takes single values."""
    axes = group.get(part) or {}
    at = f"{where}.{part}"
    if not isinstance(axes, dict):
        raise ValueError(
            f"{at}: {axes!r} is not a mapping; allowed: {{AXIS: VALUE, ...}}, e.g. "
            f"'{_typed(at)}={{m:[1,8]}}'"
        )
    for name, value in axes.items():
        is_list = isinstance(value, list | tuple)
        if part == "fixed" and (is_list or isinstance(value, dict)):
            raise ValueError(
                f"{at}.{name}: {value!r} is a list; allowed: one value, e.g. "
                f"{_typed(at)}.{name}=VALUE (several values go in product or zip)"
            )
        if part != "fixed" and not is_list:
            raise ValueError(
                f"{at}.{name}: {value!r} is not a list; allowed: a list, e.g. "
                f"{_typed(at)}.{name}=[{value}]"
            )
        if part != "fixed" and not value:
            raise ValueError(f"{at}.{name}: empty list; allowed: one or more values")
    return dict(axes)


def _group_problems(group: dict, where: str) -> list[Problem]:
    op = group.get("op")
    if op not in PROBLEM_TYPES:
        raise ValueError(f"{where}.op: unknown '{op}'; allowed: {', '.join(PROBLEM_TYPES)}")
    allowed = axis_names(op)
    extra = set(group) - set(GROUP_KEYS)
    if extra:
        raise ValueError(
            f"{where}: unknown key '{sorted(extra)[0]}'; allowed: op, providers, product, zip, fixed"
        )
    product = _axes_part(group, "product", where)
    zipped = _axes_part(group, "zip", where)
    fixed = _axes_part(group, "fixed", where)
    for part, axes in (("product", product), ("zip", zipped), ("fixed", fixed)):
        for name in axes:
            if name not in allowed:
                raise ValueError(
                    f"{where}.{part}: unknown axis '{name}' for {op}; allowed: {', '.join(allowed)}"
                )
    if len({len(v) for v in zipped.values()}) > 1:  # zip lists advance together
        lengths = ", ".join(f"{k}: {len(v)}" for k, v in zipped.items())
        at = where.replace("[", ".").replace("]", "") + ".zip"
        together = ",".join(f"{k}:[...]" for k in zipped)
        raise ValueError(
            f"{where}.zip: lists differ in length ({lengths}); allowed: lists of one length, "
            f"overridden together as '{at}={{{together}}}', or an axis moved to product"
        )
    zip_rows = [
        dict(zip(zipped, vals, strict=True)) for vals in zip(*zipped.values(), strict=True)
    ] or [{}]
    problems = []
    for combo in itertools.product(*product.values()):
        for zrow in zip_rows:
            kwargs = {**fixed, **dict(zip(product, combo, strict=True)), **zrow}
            try:
                problem = PROBLEM_TYPES[op](**kwargs)
            except TypeError as e:
                raise ValueError(f"{where}: {e}; allowed axes: {', '.join(allowed)}") from None
            problem.validate()
            problems.append(problem)
    return problems


def expand(
    groups: Sequence[dict], registry: Registry, only_providers: Sequence[str] | None = None
) -> list[Point]:
    """All points of a sweep, problem-major; raises ValueError naming the bad key and its values."""
    if only_providers is not None:
        known = set(registry.names())
        if not isinstance(only_providers, list | tuple) or not only_providers:
            raise ValueError(
                f"providers: {only_providers!r} would measure nothing; allowed: a list of names "
                "from `harness list`, e.g. providers=[torch-cpu], or no providers= (all)"
            )
        for name in only_providers:
            if name not in known:
                raise ValueError(
                    f"providers: unknown '{name}'; allowed: {', '.join(sorted(known))}"
                )
    if not groups:
        raise ValueError(
            "sweep.groups: empty (would measure nothing); allowed: one or more "
            "groups of op, providers, product, zip, fixed (see sweeps/*.yaml)"
        )
    points: list[Point] = []
    seen: set[tuple] = set()
    for i, raw in enumerate(groups):
        where = f"sweep.groups[{i}]"
        if not isinstance(raw, dict):
            raise ValueError(
                f"{where}: {raw!r} is not a group; allowed: a mapping with keys "
                f"{', '.join(GROUP_KEYS[:-1])}"
            )
        group: dict[str, Any] = dict(raw)
        problems = _group_problems(group, where)
        providers = group.get("providers") or []
        if not providers or not isinstance(providers, list | tuple):
            what = "empty" if not providers else f"{providers!r} is not a list"
            raise ValueError(
                f"{where}.providers: {what}; allowed: a list of "
                f"{', '.join(registry.names(group['op']))}"
            )
        for name in providers:
            registry.get(group["op"], name)  # raises with the allowed names
        if only_providers is not None:
            providers = [p for p in providers if p in only_providers]
        for problem in problems:
            for name in providers:
                key = (problem, name)
                if key not in seen:
                    seen.add(key)
                    points.append(Point(problem, name))
    if only_providers is not None:
        offered = sorted({n for g in groups for n in g.get("providers") or []})
        if not points:  # it kept none of the sweep's providers
            raise ValueError(
                f"providers: {list(only_providers)} leaves no point of this sweep (would "
                f"measure nothing); allowed: {', '.join(offered)}"
            )
        # a name in no group would be dropped without a word (session 43 lost a run's rung so)
        if absent := [n for n in only_providers if n not in offered]:
            raise ValueError(
                f"providers: {', '.join(absent)} in no group of this sweep (would measure "
                f"nothing); allowed: {', '.join(offered)}, or add it to a group with "
                "'sweep.groups.0.providers=[...]'"
            )
    return points
