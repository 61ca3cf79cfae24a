"""scripts/candidate_gain.py: what a family of tuning candidates bought, from the tuner's own
timings in provider_config (synthetic rows)."""

from __future__ import annotations

import json

import pandas as pd
from script_module import load_script

gain = load_script("candidate_gain")


def _row(m: int, timed: dict) -> dict:
    return dict(m=m, n=10240, k=8192, provider_config=json.dumps({"candidates": timed}))


def test_gain_is_the_best_of_all_over_the_best_without_the_family():
    rows = pd.DataFrame(
        [
            # the family wins: 0.050 against the others' best 0.055
            _row(1, {"a-dp-128x16-c4x1:x": 0.050, "a-128x16:stream-k": 0.055, "b:y": 0.060}),
            # an old candidate wins: gain 1.0
            _row(16, {"a-dp-128x16-c2x1:x": 0.070, "a-pingpong-64x16:x": 0.065}),
            _row(32, {"a-pingpong-64x32:x": 0.040}),  # no candidate of the family: left out
            _row(64, {}),  # read from the disk cache, no timings: left out
        ]
    )
    g = gain.gains(rows, r"-dp-128x\d+-c")
    assert list(g["shape"]) == ["1x10240x8192", "16x10240x8192"]
    assert g["gain"].round(6).tolist() == [1.1, 1.0]
    assert list(g["winner"]) == ["a-dp-128x16-c4x1:x", "a-pingpong-64x16:x"]
    lines = gain.summary(g)
    assert lines[0].startswith("2 points:") and "max 1.100, above 1.01 on 1" in lines[0]
    assert "geomean 1.0488" in lines[0]  # sqrt(1.1)
    assert lines[1] == "  largest: 1x10240x8192 1.100, 16x10240x8192 1.000"
    assert "a-dp-128x16-c4x1 1" in lines[2] and "a-pingpong-64x16 1" in lines[2]
    assert gain.summary(gain.gains(rows.iloc[2:], "-dp-")) == [
        "no row timed candidates of the family beside others"
    ]


def test_winners_are_labelled_shortly_for_both_tuners():
    assert gain._label("sm90-swapab-pingpong-64x32:heuristic/sw1") == "sm90-swapab-pingpong-64x32"
    name = (
        "block_m=16/block_n=64/block_k=128/num_warps=4/num_stages=5/split_k=2/stream_k=False/"
        "programs_per_sm=2/epilogue_subtile=False/warp_specialize=False"
    )
    assert gain._label(name) == "16x64x128 s5 k2 p2"
    assert gain._label(name.replace("stream_k=False", "stream_k=True")).endswith("stream-K")


def test_deep_family_names_the_deep_configs_of_each_shape():
    from harness_kernels.triton.aot import TARGETS
    from harness_kernels.triton.gemm_candidates import deep_configs
    from harness_kernels.triton.gemm_tune import _short

    deep = deep_configs("full", 32, 6144, 4096, 2, 2, TARGETS["sm_90"][1])
    assert deep and all(gain.deep_family(32, 6144, 4096, _short(c)) for c in deep)
    listed = _short(deep[0]).replace("programs_per_sm=1", "programs_per_sm=2")
    assert not gain.deep_family(32, 6144, 4096, listed)
    assert not gain.deep_family(4096, 6144, 4096, _short(deep[0]))  # none above DEEP_MAX_M


def test_main_filters_provider_and_m(monkeypatch, capsys):
    rows = pd.DataFrame(
        [
            dict(provider="own-triton", status="ok", **_row(1, {"fam:x": 0.05, "old:y": 0.06})),
            dict(provider="own-triton", status="ok", **_row(64, {"fam:x": 0.05, "old:y": 0.10})),
            dict(provider="own-cutlass", status="ok", **_row(1, {"fam:x": 0.05, "old:y": 0.20})),
            # own Triton's Gluon rows list candidate names without times: left out
            dict(
                provider="own-triton",
                status="ok",
                m=2,
                n=1,
                k=1,
                provider_config='{"candidates": ["a"]}',
            ),
        ]
    )
    monkeypatch.setattr(gain, "read_rows", lambda run, columns: rows)
    assert gain.main(["run", "fam", "provider=own-triton", "m=1-32"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 points:") and "max 1.200" in out
    assert gain.main(["run", "fam", "provider=own-triton"]) == 0
    assert capsys.readouterr().out.startswith("2 points:")
    assert gain.main(["run", "fam", "bogus=1"]) == 2 and gain.main(["run"]) == 2


def test_new_family_is_what_the_earlier_run_did_not_offer_at_the_same_shape():
    earlier = pd.DataFrame([_row(1, {"a:x": 0.06, "b:y": 0.05}), _row(16, {"a:x": 0.07})])
    rows = pd.DataFrame(
        [
            _row(1, {"a:x": 0.06, "b:y": 0.05, "c:z": 0.04}),  # c is new and wins: 1.25
            _row(16, {"a:x": 0.07, "b:y": 0.08}),  # b is new at this shape, and loses: 1.0
            _row(32, {"c:z": 0.01, "a:x": 0.02}),  # a shape the earlier run lacks: left out
        ]
    )
    g = gain.gains(rows, gain.new_family(earlier))
    assert list(g["shape"]) == ["1x10240x8192", "16x10240x8192"]
    assert g["gain"].round(6).tolist() == [1.25, 1.0]
    assert list(g["winner"]) == ["c:z", "a:x"]
