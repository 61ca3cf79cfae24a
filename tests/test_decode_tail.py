"""The decode tail model (scripts/decode_tail_model.py): the shared
read must give the read rate's time when every CTA is equally loaded, one SM's rate to a CTA
left alone, and a ragged batch's unsplit tail must cost more than its split one."""

from __future__ import annotations

import pytest
from script_module import load_script

model = load_script("decode_tail_model")
shared_read_us, cta_bytes = model.shared_read_us, model.cta_bytes


def test_equal_loads_read_at_the_shared_rate():
    # 100 CTAs x 1 MB at 3,000 GB/s shared (30 GB/s each, under the 48 cap): 100 MB / 3e3 B/us
    assert shared_read_us([1e6] * 100, read_gbps=3000, per_cta_gbps=48) == pytest.approx(1e8 / 3e6)


def test_a_cta_alone_reads_at_one_sms_rate():
    assert shared_read_us([2e6], read_gbps=3000, per_cta_gbps=50) == pytest.approx(2e6 / 5e4)


def test_the_tail_runs_below_the_shared_rate():
    # two CTAs sharing 100 GB/s (cap 80): 1 MB each at 50 GB/s, then the second's last 1 MB at
    # its cap, 80 GB/s: 20 + 12.5 us
    t = shared_read_us([1e6, 2e6], read_gbps=100, per_cta_gbps=80)
    assert t == pytest.approx(1e6 / 5e4 + 1e6 / 8e4)
    assert t > 3e6 / 1e5  # slower than the read rate over the same bytes


def test_cta_bytes_deals_slots_round_robin():
    items = [5.0, 1.0, 4.0, 2.0]
    assert cta_bytes(items, 2, None) == [9.0, 3.0]  # slots 0, 2 and 1, 3 in item order
    assert cta_bytes(items, 2, [0, 2, 3, 1]) == [7.0, 5.0]  # items 0 + 3 and 2 + 1
    assert cta_bytes(items, 4, None) == items


def test_the_script_prices_a_ragged_batchs_split(capsys):
    assert (
        model.main(["b16:kv4096:h4:q1:p256:ragged", "b16:kv4096:h4:q1:p256", "--splits", "1,4"])
        == 0
    )
    rows = [
        line.split(" | ")
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("| b16")
    ]
    tail = {(r[0].lstrip("| "), int(r[1])): float(r[-1].rstrip(" |")) for r in rows}
    ragged = "b16:kv4096:h4:q1:p256:ragged"
    # unsplit, 64 units of 2k-4k keys on 132 SMs: the longest runs alone at one SM's rate
    assert tail[ragged, 1] > 5 * tail[ragged, 4]
    assert tail["b16:kv4096:h4:q1:p256", 4] == pytest.approx(0.0, abs=0.05)


def test_a_bad_spec_is_the_scripts_exit_message():
    with pytest.raises(SystemExit, match="decode_tail_model: 'b16:kv4096'"):
        model.main(["b16:kv4096"])
