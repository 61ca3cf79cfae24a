"""capped_retime: which tuner candidates are re-timed at the power cap, in what order, and how
the CUTLASS and Triton GEMM tuners let that re-time decide (timers faked; nothing is timed)."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
from harness_kernels import capped_retime  # noqa: E402
from harness_kernels.cutlass import gemm_tune as cutlass_tune  # noqa: E402
from harness_kernels.cutlass.gemm import CONFIGS, RunOptions  # noqa: E402
from harness_kernels.triton import gemm_tune as triton_tune  # noqa: E402
from harness_kernels.triton.gemm_configs import GemmConfig as TritonConfig  # noqa: E402


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch):
    monkeypatch.setenv("HARNESS_TUNE_CACHE", "off")
    cutlass_tune.clear_cache()
    triton_tune.clear_cache()
    yield
    cutlass_tune.clear_cache()
    triton_tune.clear_cache()


def test_contenders_are_the_close_rivals_of_a_long_burst_winner():
    timings = {"a": 3.80, "b": 3.92, "c": 4.05, "d": 4.19, "e": 4.59, "f": float("nan")}
    assert capped_retime.contenders(timings) == ["a", "b", "c", "d"]  # e is 21% behind
    assert capped_retime.contenders({**timings, "g": 3.85}) == ["a", "g", "b", "c"]  # at most 4
    # a short winner never reaches the cap; a lone one has nothing to be compared with
    assert capped_retime.contenders({"a": 0.05, "b": 0.051}) == []
    assert capped_retime.contenders({"a": 1.0, "b": 2.0}) == []
    assert capped_retime.contenders({}) == []


def test_the_cap_overturns_the_burst_winner_only_by_more_than_its_noise():
    capped = {"a": 5.924, "b": 5.887, "c": 6.0}  # b 0.6% ahead of the burst winner a
    assert capped_retime.winner(capped, "a") == "a"
    assert capped_retime.winner({**capped, "b": 5.70}, "a") == "b"  # 3.9% ahead
    assert capped_retime.winner({"a": 4.17, "b": 3.96}, "a") == "b"  # session 41's reorder


def test_retime_interleaves_forward_then_backward_and_averages():
    order: list[str] = []
    drift = {"a": [1.0, 1.2], "b": [1.1, 1.1]}  # a's clock drifted: mean 1.1 either way

    def bench(fn, device):
        order.append(fn.__name__)
        return drift[fn.__name__].pop(0)

    def a() -> None: ...

    def b() -> None: ...

    got = capped_retime.retime({"a": a, "b": b}, torch.device("cpu"), bench)
    assert order == ["a", "b", "b", "a"]
    assert got == pytest.approx({"a": 1.1, "b": 1.1})


def _fake_cutlass_tune(monkeypatch, cands, burst: dict, cap: dict):
    """Fake building, burst and capped timing for cutlass_tune.tune: a launch is its candidate's
    index, burst / cap map an index to its time. Returns the operands, the expected output and
    the indices bench_capped was called with, in order."""
    a, b = torch.randn(256, 128).bfloat16(), torch.randn(64, 128).bfloat16().t()
    expected = a.float() @ b.float()
    capped_calls: list[int] = []

    class FakeLaunch:
        def __init__(self, index: int):
            self.index = index

        def __call__(self) -> torch.Tensor:
            return expected

    def bench_capped(launch, device):
        capped_calls.append(launch.index)
        return cap[launch.index]

    monkeypatch.setattr(cutlass_tune.build, "build_many", lambda specs: list(specs))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "Fake H100")
    monkeypatch.setattr(
        cutlass_tune,
        "prepare_gemm",
        lambda a, b, config, alpha=None, options=None: FakeLaunch(cands.index((config, options))),
    )
    monkeypatch.setattr(cutlass_tune, "bench_cold", lambda launch, device: burst[launch.index])
    monkeypatch.setattr(capped_retime, "bench_capped", bench_capped)
    return a, b, expected, capped_calls


def test_cutlass_tuner_lets_the_capped_retime_pick_and_records_both(monkeypatch):
    """The burst winner (stream-K, 3.80 ms) loses at the cap to swizzle 8, as measured at
    16384x10240x8192 on an H100; the result keeps every burst time and the capped means."""
    cands = [
        (CONFIGS["sm90-streamk-128x256"], RunOptions()),
        (CONFIGS["sm90-coop-128x256"], RunOptions(swizzle=8)),
        (CONFIGS["sm90-coop-256x128"], RunOptions(swizzle=1)),
    ]
    burst, cap = {0: 3.80, 1: 3.95, 2: 4.60}, {0: 4.17, 1: 3.96}
    a, b, expected, capped_calls = _fake_cutlass_tune(monkeypatch, cands, burst, cap)
    result = cutlass_tune.tune(a, b, cands, lambda: expected, ("k", 0))
    assert (result.config.name, result.options) == ("sm90-coop-128x256", RunOptions(swizzle=8))
    assert capped_calls == [0, 1, 1, 0]  # the third is 21% behind in the burst: not re-timed
    assert result.capped_ms == {
        "sm90-streamk-128x256:heuristic/sw1": 4.17,
        "sm90-coop-128x256:heuristic/sw8": 3.96,
    }
    assert cutlass_tune.best_ms(result) == 3.96 and len(result.timings_ms) == 3


def test_cutlass_tuner_re_times_the_leanest_tile_within_the_band_too(monkeypatch):
    """H200 1024x8192x8192 (session 50's tune record, burst ms): four narrower tiles led the
    128x256 tile, 7.6% behind; it joins the re-time as a fifth contender and wins at the cap."""
    cands = [
        (CONFIGS["sm90-streamk-128x128"], RunOptions()),
        (CONFIGS["sm90-pingpong-128x128"], RunOptions(swizzle=1)),
        (CONFIGS["sm90-coop-128x176-c2x1"], RunOptions(swizzle=1)),
        (CONFIGS["sm90-coop-128x176"], RunOptions(swizzle=1)),
        (CONFIGS["sm90-coop-128x256"], RunOptions(swizzle=1)),
        (CONFIGS["sm90-coop-128x192"], RunOptions(swizzle=1)),
        (CONFIGS["sm90-coop-128x80"], RunOptions(swizzle=1)),
    ]
    burst = {0: 0.1833, 1: 0.1894, 2: 0.1926, 3: 0.1934, 4: 0.1973, 5: 0.1992, 6: 0.2500}
    cap = {0: 0.2113, 1: 0.2170, 2: 0.2174, 3: 0.2083, 4: 0.1990}
    a, b, expected, capped_calls = _fake_cutlass_tune(monkeypatch, cands, burst, cap)
    result = cutlass_tune.tune(a, b, cands, lambda: expected, ("k", 0))
    # 128x256 (85.3 MACs per element) over 128x192 (76.8); 128x80 is outside the band
    assert capped_calls == [0, 1, 2, 3, 4, 4, 3, 2, 1, 0]
    assert result.config.name == "sm90-coop-128x256"


def test_no_lean_contender_is_added_when_a_contender_is_as_lean_or_none_is_re_timed():
    by_name = {
        "wide:a": (CONFIGS["sm90-coop-128x256"], RunOptions()),
        "tall:b": (CONFIGS["sm90-coop-256x128"], RunOptions()),
        "narrow:c": (CONFIGS["sm90-streamk-128x128"], RunOptions()),
    }
    timings = {"wide:a": 1.0, "narrow:c": 1.01, "tall:b": 1.02}
    assert cutlass_tune.with_leanest(["wide:a", "narrow:c"], timings, by_name) == [
        "wide:a",
        "narrow:c",
    ]  # 256x128 is no leaner than 128x256
    assert cutlass_tune.with_leanest([], timings, by_name) == []
    assert cutlass_tune.operand_intensity(CONFIGS["sm90-coop-128x176"]) == pytest.approx(
        74.105, 1e-4
    )


def _tune_triton(monkeypatch, block_ns, burst: dict, cap: dict):
    """Run triton_tune.tune_or_lookup over 128 x N tiles (N in `block_ns`, in that order) with
    faked launches (each returns the reference) and timers (`burst` and `cap` map N to ms).
    Returns the result and the Ns bench_capped was called with, in order."""
    cands = [TritonConfig(block_m=128, block_n=n, block_k=64) for n in block_ns]
    ref = torch.ones(2, 2)
    capped_calls: list[int] = []

    class FakeLaunch:
        def __init__(self, cfg):
            self.cfg, self.out = cfg, torch.empty(2, 2)

        def __call__(self) -> torch.Tensor:
            return ref

    def bench_capped(fn, device):
        capped_calls.append(fn.cfg.block_n)
        return cap[fn.cfg.block_n]

    monkeypatch.setattr(triton_tune, "bench_cold", lambda fn, device: burst[fn.cfg.block_n])
    monkeypatch.setattr(capped_retime, "bench_capped", bench_capped)
    triton_tune.clear_cache()
    return triton_tune.tune_or_lookup(("k",), cands, FakeLaunch, lambda: ref, 1e-3), capped_calls


def test_cutlass_tuner_keeps_the_burst_winner_within_the_cap_s_noise(monkeypatch):
    """H100 8192x57344x8192 (gemm_llama-band's tuner record): swizzle 8 along N won the burst by
    2.1% and trailed swizzle 8 by 0.6% at the cap, a lead inside the cap's scatter, so the burst
    winner stays."""
    cands = [
        (CONFIGS["sm90-coop-128x256"], RunOptions(swizzle=8, raster="along-n")),
        (CONFIGS["sm90-coop-128x256"], RunOptions(swizzle=8)),
    ]
    burst, cap = {0: 10.423, 1: 10.640}, {0: 10.927, 1: 10.865}
    a, b, expected, capped_calls = _fake_cutlass_tune(monkeypatch, cands, burst, cap)
    result = cutlass_tune.tune(a, b, cands, lambda: expected, ("k", 0))
    assert capped_calls == [0, 1, 1, 0]
    assert result.options == RunOptions(swizzle=8, raster="along-n")
    assert cutlass_tune.best_ms(result) == 10.927


def test_triton_tuner_lets_the_capped_retime_pick(monkeypatch):
    burst, cap = {128: 0.50, 192: 0.52, 256: 0.70}, {128: 0.58, 192: 0.55}
    result, _ = _tune_triton(monkeypatch, (128, 192, 256), burst, cap)
    assert result.config.block_n == 192
    assert sorted(result.capped_ms.values()) == [0.55, 0.58]


def test_triton_tuner_re_times_at_the_cap_only_candidates_within_its_band_of_the_burst(
    monkeypatch,
):
    """A candidate 8.4% behind in the burst (H100 8192x8192x28672: 256x128 against 128x256) is
    within capped_retime.BAND but outside the Triton tuner's CAPPED_BAND: one noisy capped read
    cannot make it win."""
    assert triton_tune.CAPPED_BAND < 1.084 < capped_retime.BAND
    burst, cap = {256: 5.41, 128: 5.86, 192: 5.55}, {256: 5.86, 128: 5.75, 192: 5.90}
    result, capped_calls = _tune_triton(monkeypatch, (256, 128, 192), burst, cap)
    assert capped_calls == [256, 192, 192, 256]  # 128 (8.3% behind) is not re-timed
    assert result.config.block_n == 256


def test_triton_tuner_keeps_the_burst_winner_when_the_cap_puts_a_rival_ahead_by_less_than_noise(
    monkeypatch,
):
    """gemm_llama-band, H100 8192x8192x28672: 256x128, 4.9% behind in the burst, came 0.6%
    ahead at the cap; a capped lead under capped_retime.NOISE does not overturn the burst, a wider one
    does."""
    burst, cap = {256: 5.585, 128: 5.860}, {256: 5.924, 128: 5.887}
    result, _ = _tune_triton(monkeypatch, (256, 128), burst, cap)
    assert result.config.block_n == 256 and len(result.capped_ms) == 2
    cap[128] = 5.70  # 3.9% ahead at the cap: the re-time decides
    assert _tune_triton(monkeypatch, (256, 128), burst, cap)[0].config.block_n == 128


def test_triton_retime_goes_by_index_so_a_rejected_twin_never_wins(monkeypatch):
    """prepare_matmul adds transpose_b twins whose recorded names repeat the original's: the
    re-time must build the candidate that passed the check, not the last one of that name."""
    from dataclasses import replace

    c0, c1 = (TritonConfig(block_m=128, block_n=n, block_k=64) for n in (128, 256))
    twin = replace(c0, transpose_b=True)
    ref = torch.ones(2, 2)
    built: list[TritonConfig] = []

    class FakeLaunch:
        def __init__(self, cfg):
            self.cfg, self.out = cfg, torch.empty(2, 2)
            built.append(cfg)

        def __call__(self) -> torch.Tensor:
            return ref * 3 if self.cfg.transpose_b else ref  # the twin is wrong

    monkeypatch.setattr(triton_tune, "bench_cold", lambda fn, device: 0.50)
    cap = {128: 0.40, 256: 0.55}
    monkeypatch.setattr(
        capped_retime,
        "bench_capped",
        lambda fn, device: 9.0 if fn.cfg.transpose_b else cap[fn.cfg.block_n],
    )
    with pytest.warns(UserWarning, match="rejected 1 config"):
        result = triton_tune.tune_or_lookup(("k2",), [c0, c1, twin], FakeLaunch, lambda: ref, 1e-3)
    assert result.config == c0 and not result.config.transpose_b
    assert twin not in built[3:]  # the re-time built c0 and c1 only
    assert "wrong result" in next(iter(result.rejected.values()))


def test_cutlass_capped_times_read_back_from_the_disk_entry(monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(tmp_path))
    cands = [
        (CONFIGS["sm90-coop-128x256"], RunOptions(swizzle=1)),
        (CONFIGS["sm90-coop-128x256"], RunOptions(swizzle=8)),
    ]
    burst, cap = {0: 1.00, 1: 1.05}, {0: 1.20, 1: 1.10}
    a, b, expected, capped_calls = _fake_cutlass_tune(monkeypatch, cands, burst, cap)
    first = cutlass_tune.tune(a, b, cands, lambda: expected, ("k", 1))
    cutlass_tune.clear_cache()  # as a fresh process
    second = cutlass_tune.tune(a, b, cands, lambda: pytest.fail("no reference"), ("k", 1))
    assert second.source == "cache" and second.options == RunOptions(swizzle=8)
    assert second.capped_ms == first.capped_ms and cutlass_tune.best_ms(second) == 1.10
    assert len(capped_calls) == 4  # the second tune read the entry: nothing re-timed
