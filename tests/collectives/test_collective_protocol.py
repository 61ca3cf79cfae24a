"""Protocol values a collective cannot honour are refused with one line (exit 2), never replaced
behind the point key's back: collectives are timed per call (host clock on the CPU), L2 hot."""

import pytest

from harness.cli import main
from harness.config import compose_run_config
from harness.plan import plan

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
