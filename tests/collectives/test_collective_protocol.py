"""Protocol values a collective cannot honour are refused with one line (exit 2), never replaced
behind the point key's back: collectives are timed per call (host clock on the CPU), L2 hot,
no stream hold, nothing flushed or rotated."""

import dataclasses

import pytest

from harness.cli import main
from harness.config import compose_run_config
from harness.measure.lockstep import check_protocol
from harness.measure.protocol import Protocol
from harness.plan import device_identity, plan, run_plan
from harness.sweep import point_key

BASE = ["run", "sweep=collectives_smoke", "device=cpu", "progress=false", "dry_run=true"]


@pytest.mark.parametrize(
    "override, key",
    [("protocol.l2=cold", "protocol.l2: 'cold'"), ("protocol.timer=host", None)],
)
def test_inapplicable_protocol_is_refused_in_one_line(override, key, capsys):
    rc = main([*BASE, override])
    err = capsys.readouterr().err.strip().splitlines()
    if key is None:  # host is what a CPU collective uses: accepted
        assert rc == 0
        return
    assert rc == 2 and len(err) == 1
    assert err[0].startswith(f"harness: error: {key} does not apply to collectives")
    assert err[0].endswith("allowed: hot")


def test_the_preset_plans_with_what_the_ranks_use():
    cfg = compose_run_config(BASE[1:])
    points, device = plan(cfg)
    assert points and cfg.protocol.l2 == "hot"


# Every protocol field a collective cannot honour, with the one line that refuses it.
REFUSED = [
    (
        "protocol.timer=xpu-events",
        "protocol.timer: 'xpu-events' does not apply to collectives on cpu; allowed: auto, host",
    ),
    (
        "protocol.l2=cold",
        "protocol.l2: 'cold' does not apply to collectives (timed back to back on the same buffers, no flush); allowed: hot",
    ),
    (
        "protocol.stream_hold=true",
        "protocol.stream_hold: true does not apply to collectives (their calls run on the communication library's stream; nothing holds it); allowed: false",
    ),
    (
        "protocol.l2_flush=write",
        "protocol.l2_flush: 'write' does not apply to collectives (L2 hot: nothing is flushed); allowed: read",
    ),
    (
        "protocol.l2_rotation_factor=4",
        "protocol.l2_rotation_factor: 4.0 does not apply to collectives (L2 hot: no input sets rotate); allowed: 2.0",
    ),
    (
        "protocol.max_rotation_sets=8",
        "protocol.max_rotation_sets: 8 does not apply to collectives (L2 hot: no input sets rotate); allowed: 512",
    ),
]


@pytest.mark.parametrize("override, line", REFUSED, ids=[o for o, _ in REFUSED])
def test_each_field_collectives_cannot_honour_is_refused(override, line, capsys):
    assert main([*BASE, override]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"harness: error: {line}"]


@pytest.mark.parametrize(
    "override",
    ["protocol.sync_every_sample=true", "protocol.max_attempts=3", "protocol.fill=zeros"],
)
def test_fields_collectives_honour_are_accepted(override):
    assert main([*BASE, override]) == 0


def test_a_gpu_collective_is_timed_by_events_or_graph_replay_a_tp_layer_by_events_only():
    """On a GPU: graph replay is taken for collectives only (a TP layer's graph provider replays
    a graph of its own); the default cold L2 and the stream hold are refused."""
    hot = Protocol(l2="hot", stream_hold=False)
    check_protocol(hot, "cuda")
    check_protocol(dataclasses.replace(hot, timer="cuda-events"), "cuda")
    check_protocol(dataclasses.replace(hot, timer="cuda-graph"), "cuda", collectives_only=True)
    with pytest.raises(ValueError, match="allowed: auto, host$"):
        check_protocol(dataclasses.replace(hot, timer="cuda-graph"), "cpu", collectives_only=True)
    for bad, key in [
        ({"timer": "cuda-graph"}, "protocol.timer: 'cuda-graph' .* allowed: auto, cuda-events$"),
        ({"l2": "cold"}, "protocol.l2: 'cold' .* allowed: hot$"),
        ({"stream_hold": True}, "protocol.stream_hold: true .* allowed: false$"),
    ]:
        with pytest.raises(ValueError, match=key):
            check_protocol(dataclasses.replace(hot, **bad), "cuda")


def test_the_point_key_hashes_what_the_ranks_use():
    """The key's protocol part is the timer and L2 the ranks measure with, not another."""
    p = run_plan(compose_run_config(BASE[1:]))
    assert p.protocol_key == {"timer": "host", "l2": "hot", "fill": "randn", "seed": 0}
    problem, provider = p.points[0].problem, p.points[0].provider
    key = point_key(problem, provider, p.protocol_key, device_identity(p.device))
    assert p.keyed[key] == p.points[0]
