"""One plan per run (issue 18.3): `harness run` composes its config and resolves it into one
RunPlan, which the runner, the device workers' parent and the collective ranks' parent take;
nothing below the command composes, plans or expands the sweep again."""

import dataclasses

import pytest

from harness import config, plan
from harness.cli import main

BASE = ["device=cpu", "progress=false", "providers=[torch-cpu]"]


@pytest.fixture
def calls(monkeypatch):
    """Counts of config composition, planning, protocol resolution and sweep expansion."""
    counts = dict.fromkeys(("compose_run_config", "run_plan", "protocol_of", "expand"), 0)

    def counted(module, name):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    counted(config, "compose_run_config")
    for name in ("run_plan", "protocol_of", "expand"):
        counted(plan, name)
    return counts


@pytest.mark.parametrize("isolate", ["false", "true"])
def test_a_run_resolves_its_config_once(tmp_path, calls, isolate):
    # isolate=true: the child is a `harness run` process of its own (it plans once too); the
    # parent plans once for its lock, start-up work and supervision.
    args = [
        "run",
        "sweep=smoke",
        *BASE,
        f"isolate={isolate}",
        f"results_dir={tmp_path}",
        "run_id=once",
    ]
    assert main(args) == 0
    assert calls == {"compose_run_config": 1, "run_plan": 1, "protocol_of": 1, "expand": 1}


def test_the_main_job_plans_once(calls, capsys):
    assert main(["main", *BASE, "dry_run=true"]) == 0
    assert "points on cpu" in capsys.readouterr().out
    assert calls == {"compose_run_config": 1, "run_plan": 1, "protocol_of": 1, "expand": 1}


def test_the_plan_is_frozen_and_typed():
    cfg = config.compose_run_config(["sweep=collectives_smoke", "device=cpu"])
    p = plan.run_plan(cfg)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.run_id = "other"  # type: ignore[misc]
    assert isinstance(p.points, tuple) and p.devices == ()
    assert p.record["sweep"] == "collectives_smoke" and "stream_hold: false" in p.config_yaml


def test_crosscheck_resolves_its_config_once(calls, capsys):
    """crosscheck takes the one RunPlan too: its protocol resolved once, not per helper."""
    assert main(["crosscheck", "device=cpu", "dry_run=true"]) == 0
    assert "points on cpu" in capsys.readouterr().out
    assert (calls["protocol_of"], calls["expand"]) == (1, 1)
