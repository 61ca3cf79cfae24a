"""scripts/gluon_tile_probe.py without a GPU: which Gluon tiles it pins, and how it names them."""

from __future__ import annotations

from harness_kernels.triton import gemm_gluon
from script_module import load_script

probe = load_script("gluon_tile_probe")


def test_pins_every_tile_and_depth_once_and_stars_what_the_tuner_times():
    m, n, k = 256, 6144, 4096
    pinned = probe.pinned_configs(m, n, k, 2, 132, top=5, caps=[6, 8])
    names = [name.rstrip("*") for name, _, _ in pinned]
    assert len(names) == len(set(names))
    timed = {gemm_gluon.config_name(c) for c in gemm_gluon.gluon_gemm_configs(m, n, k, 2, 2, 132)}
    assert {name.rstrip("*") for name, _, _ in pinned if name.endswith("*")} == timed
    # the tuner's deep twin (128x96 at 7 stages) is pinned once, under the first cap
    assert [(name, cap) for name, _, cap in pinned if name.startswith("128x96s7")] == [
        ("128x96s7*", 6)
    ]
    # each pinned config is a candidate under its own cap, as prepare_gluon_matmul requires
    for _, cfg, cap in pinned:
        assert cfg in gemm_gluon.gluon_gemm_configs(m, n, k, 2, 2, 132, cap, 5)


def test_pick_names_say_which_kernel_won():
    gluon = dict(kernel="gluon-ws", block_m=128, block_n=320, num_stages=4, schedule="cooperative")
    tl = dict(kernel="tl", block_m=128, block_n=128, block_k=64, num_stages=6, split_k=1)
    assert probe._pick_name(gluon) == "pick gluon 128x320s4 cooperative"
    assert probe._pick_name(tl) == "pick tl 128x128x64s6 k1"


def test_fp8_tiles_are_the_launchers_and_the_reference_is_the_fastest_vendor():
    """fp8 reads 1-byte inputs and writes bf16: the pinned tiles are the candidates
    prepare_gluon_matmul lists for those sizes (128-byte K rows of 128 elements), and a shape's
    reference is its fastest vendor row (a `_scaled_mm` row that failed is not one)."""
    m, n, k = 512, 10240, 8192
    pinned = probe.pinned_configs(m, n, k, 1, 132, top=4, caps=[6])
    listed = gemm_gluon.gluon_gemm_configs(m, n, k, 1, 2, 132, 6, 4)
    assert [cfg for _, cfg, _ in pinned] == listed
    assert {cfg["BK"] for cfg in listed} == {128}
    rows = [("scaled_mm", 50.0), ("scaled_mm-fastaccum", 40.0), ("pick tl", 30.0)]
    assert probe.fastest_vendor(rows) == 40.0
    assert probe.fastest_vendor([("scaled_mm-fastaccum", "WRONG"), ("scaled_mm", 45.0)]) == 45.0


def test_capped_times_every_kernel_with_the_capped_re_time_s_reading(monkeypatch, capsys):
    """--capped hands probe() bench_capped (the tuners' re-time at the power cap) in place of the
    bursts, and the header says which; the table is printed the same way."""
    import types

    import torch
    from harness_kernels.bench_cold import bench_capped, bench_cold

    timers = []

    def fake_probe(m, n, k, top, caps, fp8, timer, parts):
        timers.append(timer)
        return [("cublas", 10.0), ("pick gluon 128x192s4 cooperative", 12.5)]

    fake_props = types.SimpleNamespace(name="Fake H100", multi_processor_count=132)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: fake_props)
    monkeypatch.setattr(probe, "probe", fake_probe)
    probe.main(["2048x57344x8192", "--capped"])
    probe.main(["2048x57344x8192"])
    assert timers == [bench_capped, bench_cold]
    out = capsys.readouterr().out
    assert "capped readings (bench_capped)" in out and "bursts (bench_cold)" in out
    assert "12.50 us  0.800x vendor" in out


def test_extra_parts_pin_tiles_the_tuner_does_not_offer_and_leave_its_list_as_it_was():
    """--extra-parts 128+16,64+16: at Qwen2.5-7B's fused QKV weight with 512 tokens (N 4608),
    the 144-wide tile makes 4 x 32 = 128 tiles, the one wave cuBLAS's 144-wide kernel runs,
    where the power-of-two 160 makes 116 and 128 makes 144. The tuner now offers the 64-row-slice
    144-wide tiles itself (gemm_gluon.WAVE_PARTS); the rest are extra, each marked '+', none one
    the tuner lists, and the tuner's own list is untouched afterwards."""
    m, n, k = 512, 4608, 3584
    before = gemm_gluon.gluon_gemm_configs(m, n, k, 2, 2, 132)
    offered = gemm_gluon.N_PARTS
    parts = probe.parse_parts("128+16,64+16")
    assert parts == ((128, 16), (64, 16))
    extra = probe.extra_configs(m, n, k, 2, 132, parts, caps=[6])
    names = [name for name, _, _ in extra]
    assert all(name.endswith("+") for name in names) and len(names) == len(set(names))
    assert {"128x144s5", "64x144s6pp"} <= {gemm_gluon.config_name(c) for c in before}
    assert {"256x144s4+", "128x80s6+", "64x80s6pp+"} <= set(names)
    assert {cfg["BLOCK_N"] for _, cfg, _ in extra} == {144, 80}
    assert not {name.rstrip("+") for name in names} & {gemm_gluon.config_name(c) for c in before}
    assert gemm_gluon.N_PARTS == offered
    assert gemm_gluon.gluon_gemm_configs(m, n, k, 2, 2, 132) == before


def test_extra_parts_refuse_what_the_kernel_cannot_build():
    import pytest

    for bad in ("96+16", "128+128", "128+4", "8", "64+16+32", "64+32+16+8", "a+16"):
        with pytest.raises(SystemExit, match="--extra-parts"):
            probe.parse_parts(bad)
    assert probe.parse_parts("") == ()
    assert probe.parse_parts("64+32+16,128") == ((64, 32, 16), (128, 0))
