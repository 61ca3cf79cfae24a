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


def _axis_names(op: str) -> list[str]:
    return [f.name for f in dataclasses.fields(PROBLEM_TYPES[op])]


def _group_problems(group: dict, where: str) -> list[Problem]:
    op = group.get("op")
    if op not in PROBLEM_TYPES:
        raise ValueError(f"{where}.op: unknown '{op}'; allowed: {', '.join(PROBLEM_TYPES)}")
    allowed = _axis_names(op)
    extra = set(group) - {"op", "providers", "product", "zip", "fixed", "name"}
    if extra:
        raise ValueError(
            f"{where}: unknown key '{sorted(extra)[0]}'; allowed: op, providers, product, zip, fixed"
        )
    product = dict(group.get("product") or {})
    zipped = dict(group.get("zip") or {})
    fixed = dict(group.get("fixed") or {})
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
        for name in only_providers:
            if name not in known:
                raise ValueError(
                    f"providers: unknown '{name}'; allowed: {', '.join(sorted(known))}"
                )
    points: list[Point] = []
    seen: set[tuple] = set()
    for i, raw in enumerate(groups):
        group: dict[str, Any] = dict(raw)
        where = f"sweep.groups[{i}]"
        problems = _group_problems(group, where)
        providers = list(group.get("providers") or [])
        if not providers:
            raise ValueError(
                f"{where}.providers: empty; allowed: {', '.join(registry.names(group['op']))}"
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
    return points
