"""The on-disk tune cache (kernels/tune_cache.py) and the tuners that use it, on the CPU: timers
are faked (counted), kernels run under the Triton interpreter. No timing is asserted."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import tune_fake_gpu  # noqa: E402
from harness_kernels import tune_cache  # noqa: E402
from harness_kernels.cutlass import gemm_tune as cutlass_tune  # noqa: E402
from harness_kernels.cutlass.gemm import CONFIGS, RunOptions  # noqa: E402
from harness_kernels.triton import (  # noqa: E402
    attention_decode,
    attention_prefill,
    attention_tune,
    gemm_tune,
)
from harness_kernels.triton.attention_configs import _cfg  # noqa: E402
from harness_kernels.triton.gemm import prepare_matmul  # noqa: E402

HERE = Path(__file__).resolve().parent
needs_interpreter = pytest.mark.skipif(
    os.environ.get("TRITON_INTERPRET") != "1", reason="runs kernels under TRITON_INTERPRET=1"
)
pytestmark = pytest.mark.filterwarnings(
    "ignore:Conversion of an array with ndim:DeprecationWarning"
)
CANDS = [{"BLOCK_N": 16}, {"BLOCK_N": 32}, {"BLOCK_N": 64}]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    """A fresh cache folder and empty in-process caches for every test."""
    root = tmp_path / "tune"
    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(root))
    for clear in (
        gemm_tune.clear_cache,
        cutlass_tune.clear_cache,
        attention_tune._TUNE_CACHE.clear,
    ):
        clear()
    yield root
    for clear in (
        gemm_tune.clear_cache,
        cutlass_tune.clear_cache,
        attention_tune._TUNE_CACHE.clear,
    ):
        clear()


def _key(**change) -> tune_cache.TuneKey:
    fields = dict(device="Fake GPU", problem=("p", 1), candidates=CANDS)
    fields.update(change)
    return tune_cache.make_key("test", toolchain="triton 0", sources=("triton/gemm*.py",), **fields)


# ---- the module ---------------------------------------------------------------------------------


def test_a_saved_decision_reads_back_from_one_file_per_key(cache):
    key = _key()
    assert tune_cache.load(key, CANDS) is None
    tune_cache.save(key, CANDS, 1, 0.25, {"timings_ms": {"a": 0.25, "b": float("nan")}})
    files = sorted(p.name for p in (cache / "test").iterdir())
    assert files == [f"{key.digest}.json"]  # no temporary file left behind
    found = tune_cache.load(key, CANDS)
    assert (found.index, found.tuned_ms, found.candidates_tried) == (1, 0.25, 3)
    assert found.record["timings_ms"]["a"] == 0.25 and found.tuned_at and found.host
    entry = json.loads((cache / "test" / files[0]).read_text())
    assert entry["key"]["device"] == "Fake GPU" and entry["key"]["driver"]
    assert entry["key"]["toolchain"] == "triton 0" and len(entry["key"]["source_hash"]) == 16


def test_a_decision_says_which_gpu_timed_it(cache, monkeypatch):
    """tuned_on: this GPU's UUID for a decision timed here, the entry's for one read from disk
    (another process, or another machine of the same GPU name), "" for an entry that predates
    the field."""
    key = _key()
    monkeypatch.setattr(tune_cache, "gpu_uuid", lambda: "GPU-first")
    tune_cache.save(key, CANDS, 0, 0.5)
    assert tune_cache.tuned_on(key.digest) == "GPU-first"
    path = cache / "test" / f"{key.digest}.json"
    assert json.loads(path.read_text())["gpu_uuid"] == "GPU-first"
    monkeypatch.setattr(tune_cache, "_ORIGIN", {})  # a fresh process, on another GPU
    monkeypatch.setattr(tune_cache, "gpu_uuid", lambda: "GPU-second")
    assert tune_cache.tuned_on(key.digest) == ""
    assert tune_cache.load(key, CANDS).gpu_uuid == "GPU-first"
    assert tune_cache.tuned_on(key.digest) == "GPU-first"
    entry = json.loads(path.read_text())
    del entry["gpu_uuid"]
    path.write_text(json.dumps(entry))
    assert tune_cache.load(key, CANDS).gpu_uuid == "" and tune_cache.tuned_on(key.digest) == ""
    assert tune_cache.tuned_on(None) == ""


def test_a_choice_made_in_stages_names_their_gpu_when_they_agree(monkeypatch):
    """Own Triton's split-KV decode names its tile and split entries in one tune_key, "a,b"."""
    monkeypatch.setattr(tune_cache, "_ORIGIN", {"a": "GPU-1", "b": "GPU-1", "c": "GPU-2"})
    assert tune_cache.tuned_on("a,b") == "GPU-1"
    assert tune_cache.tuned_on("a,c") == ""  # two GPUs: neither is the choice's
    assert tune_cache.tuned_on("a,unknown") == ""


def test_gpu_uuid_is_empty_without_a_gpu():
    if not torch.cuda.is_available():
        assert tune_cache.gpu_uuid() == ""


@pytest.mark.parametrize(
    "change",
    [
        dict(device="Other GPU"),
        dict(problem=("p", 2)),
        dict(candidates=CANDS[::-1]),
        dict(candidates=CANDS[:2]),
    ],
    ids=["device-name", "shape", "candidate-order", "candidate-list"],
)
def test_a_different_gpu_shape_or_candidate_list_misses(change):
    tune_cache.save(_key(), CANDS, 0, 1.0)
    other = _key(**change)
    assert other.digest != _key().digest
    assert tune_cache.load(other, change.get("candidates", CANDS)) is None


@pytest.mark.parametrize("field", ["driver", "toolchain", "source_hash"])
def test_a_different_driver_toolchain_or_kernel_source_misses(field):
    key = _key()
    tune_cache.save(key, CANDS, 0, 1.0)
    other = replace(key, **{field: "changed"})
    assert other.digest != key.digest and tune_cache.load(other, CANDS) is None


def test_source_hash_follows_the_kernel_files(tmp_path, monkeypatch):
    (tmp_path / "triton").mkdir()
    kernel = tmp_path / "triton" / "gemm_kernel.py"
    kernel.write_text("BLOCK = 64\n")
    (tmp_path / "triton" / "attention_x.py").write_text("x = 1\n")
    monkeypatch.setattr(tune_cache, "KERNELS_DIR", tmp_path)
    tune_cache.source_hash.cache_clear()
    try:
        before = tune_cache.source_hash(("triton/gemm*.py",))
        (tmp_path / "triton" / "attention_x.py").write_text("x = 2\n")  # not a GEMM file
        tune_cache.source_hash.cache_clear()
        assert tune_cache.source_hash(("triton/gemm*.py",)) == before
        kernel.write_text("BLOCK = 128\n")
        tune_cache.source_hash.cache_clear()
        assert tune_cache.source_hash(("triton/gemm*.py",)) != before
    finally:
        tune_cache.source_hash.cache_clear()


def _set_entry(path: Path, **change) -> None:
    entry = json.loads(path.read_text())
    path.write_text(json.dumps(dict(entry, **change)))


DAMAGE = {
    "truncated": lambda p: p.write_text(p.read_text()[:40]),
    "not-an-object": lambda p: p.write_text("[1, 2]"),
    "binary": lambda p: p.write_bytes(b"\xff\xfe not utf-8"),
    "old-schema": lambda p: _set_entry(p, schema=0),
    "other-key": lambda p: _set_entry(p, key={"device": "Other GPU"}),
    "other-choice": lambda p: _set_entry(p, choice=tune_cache.describe({"BLOCK_N": 128})),
    "bad-index": lambda p: _set_entry(p, choice_index=7),
    "no-ms": lambda p: _set_entry(p, tuned_ms=None),
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_corrupt_entry_is_ignored_with_a_warning_then_overwritten(damage):
    key = _key()
    tune_cache.save(key, CANDS, 2, 1.0)
    damage(key.path)
    with pytest.warns(UserWarning, match="tune cache: .*re-tuning"):
        assert tune_cache.load(key, CANDS) is None
    tune_cache.save(key, CANDS, 2, 1.0)  # what the tuner does next
    assert tune_cache.load(key, CANDS).index == 2


def test_off_reads_and_writes_nothing_refresh_writes_only(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "home"))
    monkeypatch.setenv("HARNESS_TUNE_CACHE", "off")
    assert _key() is None
    tune_cache.save(None, CANDS, 0, 1.0)  # the tuners pass the None along
    assert not (tmp_path / "home").exists()
    monkeypatch.setenv("HARNESS_TUNE_CACHE", "refresh")
    key = _key()
    tune_cache.save(key, CANDS, 0, 1.0)
    assert key.path == tmp_path / "home" / "tune" / "test" / f"{key.digest}.json"
    assert key.path.is_file() and tune_cache.load(key, CANDS) is None  # re-tunes, overwrites
    monkeypatch.delenv("HARNESS_TUNE_CACHE")
    assert tune_cache.load(key, CANDS).index == 0  # the refreshed entry serves the next run


def test_an_unwritable_cache_warns_and_goes_on(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("HARNESS_TUNE_CACHE", str(tmp_path / "a-file" / "tune"))
    with pytest.warns(UserWarning, match="tune cache: cannot write"):
        tune_cache.save(_key(), CANDS, 0, 1.0)


_WRITER = """
import sys
from harness_kernels import tune_cache
key = tune_cache.TuneKey("test", "Fake GPU", "1", "t", "h", "p", "c")
cands = [{"BLOCK_N": n} for n in (16, 32, 64)]
for i in range(int(sys.argv[1])):
    tune_cache.save(key, cands, i % 3, float(i), {"writer": sys.argv[2], "pad": "x" * 20000})
"""


def test_concurrent_writers_never_leave_a_torn_entry(cache):
    """Two processes rewrite one entry (as two GPUs' shards tuning the same point) while this
    one reads it: every read is absent or whole, and the last write stands."""
    key = tune_cache.TuneKey("test", "Fake GPU", "1", "t", "h", "p", "c")
    cands = [{"BLOCK_N": n} for n in (16, 32, 64)]
    env = dict(os.environ, HARNESS_TUNE_CACHE=str(cache))
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, "300", name], env=env)
        for name in ("a", "b")
    ]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a torn file would warn on read
            while any(w.poll() is None for w in writers):
                if (found := tune_cache.load(key, cands)) is not None:
                    assert found.record["writer"] in ("a", "b")
                    assert len(found.record["pad"]) == 20000
            assert [w.wait() for w in writers] == [0, 0]
            final = tune_cache.load(key, cands)
    finally:
        for w in writers:  # a failed read leaves no writer running
            if w.poll() is None:
                w.kill()
            w.wait()
    assert final.tuned_ms == 299.0 and final.index == 299 % 3
    assert [p.name for p in (cache / "test").iterdir()] == [f"{key.digest}.json"]


# ---- the own Triton GEMM (prepare_matmul) -------------------------------------------------------


@needs_interpreter
def test_gemm_tunes_once_then_a_fresh_process_reads_the_entry(cache, monkeypatch):
    timed = tune_fake_gpu.install(monkeypatch.setattr)
    monkeypatch.setattr(tune_cache, "gpu_uuid", lambda: "GPU-tuner")
    first = tune_fake_gpu.summary(prepare_matmul(*tune_fake_gpu.operands()), timed)
    assert first["timed"] == 3 and first["tune_source"] == "tuned"
    assert first["tuned_on"] == "GPU-tuner"
    assert (first["block_m"], first["split_k"]) == (16, 2)  # the fake timer's fastest
    assert (cache / "triton-gemm" / f"{first['tune_key']}.json").is_file()
    # The next run's child process: nothing in memory, the decision on disk, no timing.
    env = dict(
        os.environ,
        HARNESS_TUNE_CACHE=str(cache),
        TRITON_INTERPRET="1",
        PYTHONWARNINGS="ignore::DeprecationWarning",
    )
    out = subprocess.run(
        [sys.executable, str(HERE / "tune_fake_gpu.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    second = json.loads(out.stdout.strip().splitlines()[-1])
    # the child has no GPU UUID of its own: tuned_on is the entry's, the GPU that timed it
    assert second == dict(first, timed=0, tune_source="cache")


@needs_interpreter
def test_gemm_misses_for_another_gpu_or_shape_and_reads_after_a_state_reset(monkeypatch):
    timed = tune_fake_gpu.install(monkeypatch.setattr)
    launch = prepare_matmul(*tune_fake_gpu.operands())
    assert launch.config["tune_source"] == "tuned" and len(timed) == 3
    prepare_matmul(*tune_fake_gpu.operands())  # same process: the in-memory decision
    assert len(timed) == 3
    gemm_tune.clear_cache()  # as a fresh process
    again = prepare_matmul(*tune_fake_gpu.operands())
    assert len(timed) == 3 and again.config["tune_source"] == "cache"
    assert again.config["tuned_ms"] == launch.config["tuned_ms"] == 1.0
    assert again.config["candidates_tried"] == 3 and again.config["tuned"] is True
    # every timed candidate is recorded, and the disk entry gives back the same record
    assert len(launch.config["candidates"]) == 3
    assert again.config["candidates"] == launch.config["candidates"]
    other_shape = prepare_matmul(*tune_fake_gpu.operands(m=32))
    assert len(timed) == 6 and other_shape.config["tune_source"] == "tuned"
    gemm_tune.clear_cache()
    tune_fake_gpu.install(monkeypatch.setattr, gpu="Other GPU")
    other_gpu = prepare_matmul(*tune_fake_gpu.operands())
    assert other_gpu.config["tune_source"] == "tuned"
    assert other_gpu.config["tune_key"] != launch.config["tune_key"]


@needs_interpreter
def test_gemm_under_the_interpreter_neither_tunes_nor_caches(cache):
    launch = prepare_matmul(*tune_fake_gpu.operands())
    assert launch.config["tune_source"] == "untuned" and launch.config["tune_key"] == ""
    assert not cache.exists()


@needs_interpreter
def test_gemm_with_the_cache_off_tunes_every_fresh_process(cache, monkeypatch):
    monkeypatch.setenv("HARNESS_TUNE_CACHE", "off")
    timed = tune_fake_gpu.install(monkeypatch.setattr)
    prepare_matmul(*tune_fake_gpu.operands())
    gemm_tune.clear_cache()
    launch = prepare_matmul(*tune_fake_gpu.operands())
    assert len(timed) == 6 and launch.config["tune_source"] == "tuned"
    assert launch.config["tune_key"] == "" and not cache.exists()


# ---- the Triton attention kernels ----------------------------------------------------------------


def _widest_tile_ms(cfg: dict) -> float:
    return 1.0 / cfg["BLOCK_N"] + cfg.get("num_splits", 1) * 1e-3


def _fake_attention_gpu(
    monkeypatch, module, configs_name: str, cands: list[dict], ms=_widest_tile_ms, gluon=False
) -> list[dict]:
    """Tuning on for `module`'s prepare (a pretend sm_90), `cands` as its candidates (for the
    decode, with the Gluon kernel's only when `gluon`), a fake timer (`ms` of the config; by
    default 1 / BLOCK_N: the widest tile wins); returns the timed configs."""
    timed: list[dict] = []

    def bench_cold(fn, device) -> float:
        timed.append(fn.cfg)
        return ms(fn.cfg)

    def configs(*args, **kwargs) -> list[dict]:
        return [
            dict(c, BLOCK_M=args[4]) if configs_name == "decode_configs" else dict(c) for c in cands
        ]

    monkeypatch.setattr(module, "target_of", lambda device: ("cuda", 90))
    monkeypatch.setattr(module, configs_name, configs)
    if configs_name == "decode_configs" and not gluon:  # `cands` alone
        monkeypatch.setattr(module, "gluon_candidates", lambda *a, **k: ([], "a test's list"))
    monkeypatch.setattr(attention_tune, "bench_cold", bench_cold)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    real_tune = attention_tune.tune

    def tune(key, candidates, build, enabled, output=None, stored=None, **kwargs):
        def tagged(cfg):  # the timer learns which config it times
            fn = build(cfg)
            wrapper = lambda: fn()  # noqa: E731
            wrapper.cfg = cfg
            return wrapper

        return real_tune(key, candidates, tagged, enabled, output, stored, **kwargs)

    monkeypatch.setattr(module, "tune_configs", tune)
    return timed


@needs_interpreter
def test_prefill_tunes_once_and_reads_the_entry_after_a_state_reset(monkeypatch, cache):
    cands = [_cfg(32, 16, 4, 1), _cfg(16, 32, 4, 1)]
    timed = _fake_attention_gpu(monkeypatch, attention_prefill, "prefill_configs", cands)
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 24, 64, generator=gen).half() for _ in range(3))
    first = attention_prefill.prepare_attention(q, k, v, causal=True)
    assert len(timed) == 2 and first.config["tune_source"] == "tuned"
    assert first.config["BLOCK_N"] == 32 and first.config["tune_cache_hit"] is False
    assert (cache / "triton-attention" / f"{first.config['tune_key']}.json").is_file()
    attention_tune._TUNE_CACHE.clear()  # as a fresh process
    second = attention_prefill.prepare_attention(q, k, v, causal=True)
    assert len(timed) == 2 and second.config["tune_source"] == "cache"
    for name in ("BLOCK_M", "BLOCK_N", "tune_ms", "tune_candidates", "tune_key", "tuned"):
        assert second.config[name] == first.config[name], name
    attention_tune._TUNE_CACHE.clear()
    attention_prefill.prepare_attention(q, k, v, causal=False)  # another problem: tunes
    assert len(timed) == 4


@needs_interpreter
def test_decode_times_every_tile_with_every_split_count(monkeypatch, cache):
    """The winner is the narrow tile at its last split count: a search that timed each tile at
    its first split count, then the splits of the tile it kept, would miss it (it did, on an
    H100 in session 46). Then the winner's two ways of merging its splits are timed, and the
    faster kept (here the fused merge)."""
    from harness_kernels.triton.attention_configs import split_candidates
    from harness_kernels.triton.attention_target import num_sms

    cands = [_cfg(16, 32, 4, 1), _cfg(16, 16, 4, 1)]
    q = torch.randn(2, 4, 1, 64, generator=torch.Generator().manual_seed(1)).half()
    k = torch.randn(2, 2, 256, 64, generator=torch.Generator().manual_seed(2)).half()
    seqlens = torch.tensor([256, 256], dtype=torch.int32)
    narrow = split_candidates(4, 256, 16, num_sms(q.device))
    assert len(narrow) > 1

    def ms(cfg: dict) -> float:
        fused = 0.1 if cfg.get("REDUCE") == "fused" else 0.0
        return (0.5 if (cfg["BLOCK_N"], cfg["num_splits"]) == (16, narrow[-1]) else 1.0) - fused

    timed = _fake_attention_gpu(monkeypatch, attention_decode, "decode_configs", cands, ms)
    launch = attention_decode.prepare_decode(q, k, k, cache_seqlens=seqlens)
    wide = split_candidates(4, 256, 32, num_sms(q.device))
    assert len(timed) == len(wide) + len(narrow) + 3  # and the merge's three ways (sm_90)
    assert {c.get("REDUCE") for c in timed} == {None, "kernel", "fused", "pdl"}
    assert len(wide) + len(narrow) == launch.config["tune_candidates"]
    assert (launch.config["BLOCK_N"], launch.config["num_splits"]) == (16, narrow[-1])
    assert (launch.config["reduce"], launch.config["reduce_source"]) == ("fused", "tuned")
    # what the choice beat, by merge: the row carries the margins, not only the winner
    merges = launch.config["reduce_timings_ms"]
    assert set(merges) == {"kernel", "fused", "pdl"} and min(merges, key=merges.get) == "fused"
    assert merges["kernel"] - merges["fused"] == pytest.approx(0.1, rel=0.05)
    assert launch.config["num_splits_source"] == "tuned"
    assert launch.config["split_candidates"] == narrow
    assert not launch.config["tune_cache_hit"]
    # The same problem again in this process: an in-process hit, not tuned inside its point.
    from harness.report.data import tuned_in_point

    again = attention_decode.prepare_decode(q, k, k, cache_seqlens=seqlens)
    assert again.config["tune_source"] == "tuned" and again.config["tune_cache_hit"]
    assert len(timed) == len(wide) + len(narrow) + 3 and again.config["reduce"] == "fused"
    assert again.config["reduce_timings_ms"] == merges
    row = {"provider_config": json.dumps(again.config)}
    assert not tuned_in_point(row) and tuned_in_point(
        {"provider_config": json.dumps(launch.config)}
    )


@needs_interpreter
def test_decode_caches_its_choice(monkeypatch, cache):
    cands = [_cfg(16, 16, 4, 1), _cfg(16, 32, 4, 1)]
    timed = _fake_attention_gpu(monkeypatch, attention_decode, "decode_configs", cands)
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(2, 4, 1, 64, generator=gen).half()
    k, v = (torch.randn(2, 2, 96, 64, generator=gen).half() for _ in range(2))
    seqlens = torch.tensor([96, 70], dtype=torch.int32)
    first = attention_decode.prepare_decode(q, k, v, cache_seqlens=seqlens)
    n_timed = len(timed)
    assert n_timed >= 2 and first.config["tune_source"] == "tuned"
    assert len(list((cache / "triton-attention").iterdir())) == len(
        first.config["tune_key"].split(",")
    )
    attention_tune._TUNE_CACHE.clear()
    second = attention_decode.prepare_decode(q, k, v, cache_seqlens=seqlens)
    assert len(timed) == n_timed and second.config["tune_source"] == "cache"
    for name in ("BLOCK_N", "num_splits", "tune_ms", "tune_key"):
        assert second.config[name] == first.config[name], name


def _decode_reference(q, k, v, lens=None) -> torch.Tensor:
    """softmax(q k^T / sqrt(D)) v over a dense [B, Hkv, S, D] cache, the first lens[b] keys of
    sequence b visible (every key without lens; one query row per sequence)."""
    group = q.shape[1] // k.shape[1]
    k, v = (t.float().repeat_interleave(group, dim=1) for t in (k, v))
    s = q.float() @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if lens is not None:
        keys = torch.arange(k.shape[2])
        s = s.masked_fill(keys >= torch.as_tensor(lens).view(-1, 1, 1, 1), float("-inf"))
    return (s.softmax(-1) @ v).to(q.dtype)


def _fake_gluon_launch(monkeypatch, sms: int, right=True, lens=None) -> list[dict]:
    """The Gluon launch faked on `sms` SMs: it records each build's config (num_splits its
    splits, `order` the item order given as a list, or None) and writes whole rows, the
    reference when `right`, zeros when not (even for a split launch, whose partials the merge
    then reads: NaN, as the tuner poisons them before each check, so no split Gluon candidate
    passes on the `tl` candidates' partials)."""
    built: list[dict] = []

    def fake_gluon(q, k_cache, v_cache, out, *args, cfg, splits, order=None, **kwargs):
        built.append(dict(cfg, num_splits=splits, order=None if order is None else order.tolist()))
        ref = _decode_reference(q, k_cache, v_cache, lens) if right else torch.zeros_like(out)
        return lambda: out.copy_(ref)

    monkeypatch.setattr(attention_decode, "gluon_split_launch", fake_gluon)
    monkeypatch.setattr(attention_decode, "num_sms", lambda device: sms)
    return built


@needs_interpreter
@pytest.mark.parametrize("right", [True, False])
def test_decode_times_the_gluon_kernel_beside_tl_and_takes_it_only_when_right(
    monkeypatch, cache, right
):
    """On a pretend sm_90 the Gluon kernel's tiles join the joint search; faked faster, it is
    chosen when its output agrees with the `tl` kernel's and dropped when it does not (a fast
    but wrong kernel is never picked); a Gluon pick is recorded as such."""
    from harness_kernels.triton.attention_decode_gluon import gluon_decode_configs

    gen = torch.Generator().manual_seed(3)
    q = torch.randn(2, 8, 1, 64, generator=gen).half()
    k, v = (torch.randn(2, 2, 256, 64, generator=gen).half() for _ in range(2))
    seqlens = torch.tensor([256, 256], dtype=torch.int32)

    def ms(cfg: dict) -> float:  # Gluon faster, one split fastest
        return (0.5 if cfg.get("impl") == "gluon" else 1.0) + 0.01 * cfg["num_splits"]

    built = _fake_gluon_launch(monkeypatch, 3, right)  # 4 units on 3 SMs
    tl_cands = [_cfg(16, 64, 4, 2)]
    timed = _fake_attention_gpu(
        monkeypatch, attention_decode, "decode_configs", tl_cands, ms, gluon=True
    )
    launch = attention_decode.prepare_decode(q, k, v, cache_seqlens=seqlens)
    gluon_tiles = gluon_decode_configs(64, None, 16)
    # the persistent Gluon grid gets split counts of at most two work items per SM; the `tl`
    # kernel all of them; no balanced runs for a batch of one length
    tl_splits = {c["num_splits"] for c in timed if c.get("impl") is None}
    assert {c["num_splits"] for c in built} == {1} and tl_splits == {1, 2, 3, 4}
    assert not any(c.get("split_by") == "balanced" for c in built)
    # every Gluon tile built and checked; timed only when its output agreed
    assert gluon_tiles and {c.get("impl") for c in timed} == ({None, "gluon"} if right else {None})
    assert {(c["BLOCK_N"], c["num_stages"]) for c in built} == {
        (c["BLOCK_N"], c["num_stages"]) for c in gluon_tiles
    }
    if right:
        assert launch.config["impl"] == "gluon" and launch.config["tma"] is True
        assert launch.config["num_splits"] == 1 and launch.config["tma_reason"] is None
        assert launch.config["BLOCK_M"] == 64  # the rows the Gluon kernel runs, not G x Sq
        torch.testing.assert_close(launch(), _decode_reference(q, k, v))
    else:
        assert launch.config["impl"] == "tl" and launch.config["tma"] is False
        assert launch.config["tma_reason"].startswith("the Gluon tiles failed or disagreed")
        assert launch.config["tune_failed"]  # the wrong kernel's rejections are recorded


def _gluon_faster_than_one_tl_tile(monkeypatch) -> None:
    """A pretend sm_90 tuner with one `tl` tile beside the Gluon tiles, every Gluon candidate
    timed faster (it is picked where its output agrees)."""
    _fake_attention_gpu(
        monkeypatch,
        attention_decode,
        "decode_configs",
        [_cfg(16, 64, 4, 2)],
        lambda cfg: 0.5 if cfg.get("impl") == "gluon" else 1.0,
        gluon=True,
    )


@needs_interpreter
def test_decode_no_balanced_rung_offers_full_but_the_balanced_runs(monkeypatch, cache):
    """own-triton-no-balanced: the same `tl` and Gluon tiles as full, no balanced candidate, a
    key of its own, recorded as its variant (so one sweep measures what the runs are worth).
    Full offers them, each Gluon tile once, at a ragged batch (here every Gluon candidate
    disagrees, the fake ignoring the lengths, and the `tl` kernel is picked)."""
    gen = torch.Generator().manual_seed(4)
    q = torch.randn(2, 8, 1, 64, generator=gen).half()
    k, v = (torch.randn(2, 2, 256, 64, generator=gen).half() for _ in range(2))
    seqlens = torch.tensor([256, 100], dtype=torch.int32)
    built = _fake_gluon_launch(monkeypatch, 3)  # the lengths ignored: every Gluon one wrong
    _gluon_faster_than_one_tl_tile(monkeypatch)
    launch = attention_decode.prepare_decode(q, k, v, cache_seqlens=seqlens, rung="no-balanced")
    assert built and not any(c.get("split_by") == "balanced" for c in built)
    assert launch.config["variant"] == "no-balanced"
    per_item = {(c["BLOCK_N"], c["num_stages"]) for c in built}
    built.clear()
    attention_decode.prepare_decode(q, k, v, cache_seqlens=seqlens)  # full: its own key
    balanced = [c for c in built if c.get("split_by") == "balanced"]
    assert {(c["BLOCK_N"], c["num_stages"]) for c in balanced} == per_item


@needs_interpreter
def test_decode_deals_a_ragged_batchs_gluon_items_longest_first(monkeypatch, cache):
    """A ragged batch with more Gluon work items than SMs (4 sequences x 2 KV heads on 3):
    every per-item Gluon candidate is launched with longest_first's order of its own items'
    tiles, a balanced one without; the Gluon pick records it. Equal lengths and the rung
    own-triton-no-longest-first launch in item order."""
    from harness_kernels.triton.attention_decode_gluon import item_tiles, longest_first

    gen = torch.Generator().manual_seed(5)
    q = torch.randn(4, 8, 1, 64, generator=gen).half()
    k, v = (torch.randn(4, 2, 256, 64, generator=gen).half() for _ in range(2))
    lens = [100, 256, 60, 200]
    seqlens = torch.tensor(lens, dtype=torch.int32)
    built = _fake_gluon_launch(monkeypatch, 3, lens=lens)
    _gluon_faster_than_one_tl_tile(monkeypatch)
    launch = attention_decode.prepare_decode(q, k, v, cache_seqlens=seqlens)
    per_item = [c for c in built if c.get("split_by") != "balanced"]
    assert per_item and all(c.get("split_by") is None for c in per_item)  # one split each
    for c in per_item:
        tiles = item_tiles(lens, 2, c["num_splits"], c["BLOCK_N"], 256, False)
        assert c["order"] == longest_first(tiles, 3) and sorted(c["order"]) == list(range(8))
    assert all(c["order"] is None for c in built if c.get("split_by") == "balanced")
    assert launch.config["impl"] == "gluon"
    ordered = launch.config["split_by"] != "balanced"
    assert launch.config["item_order"] == ("longest-first" if ordered else None)
    torch.testing.assert_close(launch(), _decode_reference(q, k, v, lens))

    built.clear()
    launch = attention_decode.prepare_decode(
        q, k, v, cache_seqlens=seqlens, rung="no-longest-first"
    )
    assert built and all(c["order"] is None for c in built)
    assert launch.config["variant"] == "no-longest-first" and launch.config["item_order"] is None

    built = _fake_gluon_launch(monkeypatch, 3)  # every key visible
    launch = attention_decode.prepare_decode(
        q, k, v, cache_seqlens=torch.full((4,), 256, dtype=torch.int32)
    )
    assert built and all(c["order"] is None for c in built)
    assert launch.config["impl"] == "gluon" and launch.config["item_order"] is None


@needs_interpreter
@pytest.mark.parametrize("faster", ["fused", "kernel", "pdl"])
def test_decode_times_every_merge_of_a_gluon_split_and_balanced_runs_are_not_fused(
    monkeypatch, cache, faster
):
    """A Gluon split config's merges are timed against each other, as the `tl` kernel's
    (session 71): the fused one launches with the per-unit counters, the others with none and
    the reduction kernel after it ("pdl": the Gluon CTAs let it launch early, and it waits on
    the GPU; here, under the interpreter, a plain launch); the fastest is kept and recorded as
    tuned. Balanced runs, whose units' partials are segments of several CTAs' runs, are merged
    by the reduction kernel only, in either launch."""
    from harness_kernels.triton.attention_decode_gluon import gluon_decode_configs

    gen = torch.Generator().manual_seed(6)
    q = torch.randn(2, 8, 1, 64, generator=gen).half()
    k, v = (torch.randn(2, 2, 256, 64, generator=gen).half() for _ in range(2))
    lens = [256, 100]
    seqlens = torch.tensor(lens, dtype=torch.int32)
    ref = _decode_reference(q, k, v, lens)
    launched: list[tuple] = []

    def fake_gluon(q, k_cache, v_cache, out, o_part, lse_part, *args, cfg, splits, **kwargs):
        fused = kwargs.get("counters") is not None
        assert kwargs.get("launch_dependents") == (cfg.get("REDUCE") == "pdl")
        launched.append((cfg.get("split_by"), cfg.get("REDUCE"), fused))

        def launch():
            if splits > 1 and not fused:  # equal partials: the reduction kernel gives ref
                o_part[:, :, :, :splits] = ref.float().unsqueeze(3)
                lse_part[:, :, :, :splits] = 0.0
            else:
                out.copy_(ref)

        return launch

    monkeypatch.setattr(attention_decode, "gluon_split_launch", fake_gluon)
    monkeypatch.setattr(attention_decode, "num_sms", lambda device: 3)
    timed = _fake_attention_gpu(
        monkeypatch,
        attention_decode,
        "decode_configs",
        [_cfg(16, 64, 4, 2)],
        lambda cfg: 0.5 if cfg.get("REDUCE") == faster else 1.0,
        gluon=True,
    )
    gluon = {key: val for key, val in gluon_decode_configs(64, None, 16)[0].items()}
    gluon.pop("BLOCK_M")
    launch = attention_decode.prepare_decode(
        q, k, v, cache_seqlens=seqlens, configs=[gluon], num_splits=2
    )
    assert launch.config["impl"] == "gluon" and launch.config["num_splits"] == 2
    assert (launch.config["reduce"], launch.config["reduce_source"]) == (faster, "tuned")
    merges = launch.config["reduce_timings_ms"]
    assert set(merges) == {"kernel", "fused", "pdl"} and min(merges, key=merges.get) == faster
    assert {c.get("REDUCE") for c in timed} >= {"kernel", "fused", "pdl"}
    assert (None, "fused", True) in launched and (None, "kernel", False) in launched
    assert (None, "pdl", False) in launched
    torch.testing.assert_close(launch(), ref)

    launched.clear()
    timed.clear()
    launch = attention_decode.prepare_decode(
        q, k, v, cache_seqlens=seqlens, configs=[dict(gluon, split_by="balanced")]
    )
    assert launch.config["split_by"] == "balanced"
    assert launch.config["reduce"] == ("kernel" if faster == "fused" else faster)
    assert launched and all(not fused for _, _, fused in launched)
    assert {c.get("REDUCE") for c in timed} - {None} == {"kernel", "pdl"}
    torch.testing.assert_close(launch(), ref)


# ---- the own CUTLASS GEMM choice ----------------------------------------------------------------


def test_cutlass_choice_is_cached_on_disk(monkeypatch, cache):
    """gemm_tune.tune with building and timing faked: a second tune after a state reset reads
    the decision, building and timing nothing; another GPU name misses."""
    cands = [
        (CONFIGS["sm90-streamk-128x128"], RunOptions()),
        (CONFIGS["sm90-streamk-128x128"], RunOptions("split-k", 2)),
        (CONFIGS["sm90-pingpong-128x128"], RunOptions(swizzle=1)),
    ]
    fake_ms = {1: 2.0, 2: 1.0, 3: 3.0}  # by candidate position
    built, timed = [], []

    class FakeLaunch:
        def __init__(self, position: int):
            self.position = position

        def __call__(self) -> torch.Tensor:
            return expected

    def prepare(a, b, config, alpha=None, options=None):
        return FakeLaunch(cands.index((config, options)) + 1)

    def bench_cold(launch, device) -> float:
        timed.append(launch.position)
        return fake_ms[launch.position]

    gpu = {"name": "Fake H200"}
    monkeypatch.setattr(cutlass_tune.build, "build_many", lambda specs: built.append(list(specs)))
    monkeypatch.setattr(cutlass_tune, "prepare_gemm", prepare)
    monkeypatch.setattr(cutlass_tune, "bench_cold", bench_cold)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: gpu["name"])
    a, b = torch.randn(256, 128).bfloat16(), torch.randn(64, 128).bfloat16().t()
    expected = a.float() @ b.float()

    first = cutlass_tune.tune(a, b, cands, lambda: expected, ("k", 0))
    assert (first.source, first.options, timed, len(built)) == (
        "tuned",
        RunOptions("split-k", 2),
        [1, 2, 3],
        1,
    )
    assert (cache / "cutlass-gemm" / f"{first.cache_key}.json").is_file()
    cutlass_tune.clear_cache()
    second = cutlass_tune.tune(a, b, cands, lambda: pytest.fail("no reference"), ("k", 1))
    assert (second.source, second.config, second.options) == ("cache", first.config, first.options)
    assert second.timings_ms == first.timings_ms and len(timed) == 3 and len(built) == 1
    assert cutlass_tune.best_ms(second) == 1.0
    gpu["name"] = "Fake H100"
    third = cutlass_tune.tune(a, b, cands, lambda: expected, ("k", 2))
    assert third.source == "tuned" and len(timed) == 6 and third.cache_key != first.cache_key


def test_a_labelled_tune_reports_every_candidates_time_then_reads_them_back(monkeypatch):
    """The Gluon GEMM's tuner names its candidates: provider_config then shows what the choice
    beat (cooperative vs ping-pong), from a fresh tuning and from the disk entry alike."""
    monkeypatch.setattr(attention_tune, "bench_cold", lambda fn, device: fn())
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)

    def build(cfg):
        return lambda: 1.0 / cfg["BLOCK_N"]  # the "time" a launch returns: widest wins

    def label(cfg):
        return f"n{cfg['BLOCK_N']}"

    stored = _key()
    cfg, info = attention_tune.tune(("p", 1), CANDS, build, True, None, stored, label=label)
    assert cfg == {"BLOCK_N": 64} and info["tune_source"] == "tuned"
    assert info["tune_timings_ms"] == {"n16": 0.0625, "n32": 0.03125, "n64": 0.01562}
    attention_tune._TUNE_CACHE.clear()  # as a fresh process
    cfg2, info2 = attention_tune.tune(("p", 1), CANDS, build, True, None, stored, label=label)
    assert cfg2 == cfg and info2["tune_source"] == "cache"
    assert info2["tune_timings_ms"] == info["tune_timings_ms"]
    attention_tune._TUNE_CACHE.clear()
    _, unlabelled = attention_tune.tune(("p", 1), CANDS, build, True, None, stored)
    assert "tune_timings_ms" not in unlabelled  # attention rows keep their config as it was


def test_the_tl_or_gluon_choice_is_retimed_interleaved_then_read_from_disk(monkeypatch):
    """kernel_choice re-times the two tuned winners tl, Gluon, Gluon, tl and keeps the faster
    mean; a fresh process reads the decision instead of timing, and another pair of tuned
    choices (a re-tuned tile) misses."""
    from harness_kernels.triton import kernel_choice

    order: list[str] = []
    speed = {"tl": [1.0, 1.3], "gluon-ws": [1.1, 1.1]}  # tl drifts slower: mean 1.15 vs 1.10

    def bench_cold(fn, device):
        order.append(fn.__name__)
        return speed[fn.__name__].pop(0)

    def tl() -> None: ...

    def gluon() -> None: ...

    tl.__name__, gluon.__name__ = "tl", "gluon-ws"
    monkeypatch.setattr(kernel_choice, "bench_cold", bench_cold)
    kernel_choice.clear_cache()
    args = (tl, gluon, ("tl k1 128x256", "gluon k2 128x192 cooperative"), ((512, 6144, 4096),))
    rest = (torch.device("cpu"), "Fake GPU", ("triton/gemm*.py",))
    first = kernel_choice.choose(*args, *rest)
    assert order == ["tl", "gluon-ws", "gluon-ws", "tl"]
    assert first.kernel == "gluon-ws" and first.source == "timed"
    assert first.tl_ms == pytest.approx(1.15) and first.gluon_ms == pytest.approx(1.1)
    kernel_choice.clear_cache()  # as a fresh process
    second = kernel_choice.choose(*args, *rest)
    assert len(order) == 4 and second.source == "cache" and second.kernel == "gluon-ws"
    assert second.tl_ms == pytest.approx(1.15)
    kernel_choice.clear_cache()
    speed.update({"tl": [1.0, 1.0], "gluon-ws": [2.0, 2.0]})
    other = (tl, gluon, ("tl k1 128x256", "gluon k3 64x256 ping-pong"), args[3])
    assert kernel_choice.choose(*other, *rest).kernel == "tl" and len(order) == 8
    kernel_choice.clear_cache()


def _stand_in_pair(monkeypatch, kernel_choice, capped: dict, burst: dict):
    """(tl, gluon, order): two launches named as kernel_choice's sides, its capped and burst
    timers replaced by readers of `capped` and `burst` (each reading pops the side's next time
    and is logged in `order`), and its decisions forgotten."""
    order: list[str] = []

    def tl() -> None: ...

    def gluon() -> None: ...

    tl.__name__, gluon.__name__ = "tl", "gluon-ws"

    def bench(times):
        def timed(fn, device):
            order.append(fn.__name__)
            return times[fn.__name__].pop(0)

        return timed

    monkeypatch.setattr(kernel_choice, "bench_capped", bench(capped))
    monkeypatch.setattr(kernel_choice, "bench_cold", bench(burst))
    kernel_choice.clear_cache()
    return tl, gluon, order


def test_a_capped_pair_closer_than_the_noise_is_decided_by_an_interleaved_burst_pair(monkeypatch):
    """At the cap one reading scatters by ~3%: a capped pair within NOISE is timed again in
    bursts (tl, Gluon, Gluon, tl) and those decide (H100 8192x10240x8192: capped Gluon 1.5%
    ahead, the sweep then timed it 7% behind); a wider capped gap decides alone. Both pairs and
    the deciding one are kept on disk and read back."""
    from harness_kernels.triton import kernel_choice

    capped = {"tl": [2.084, 2.084], "gluon-ws": [2.052, 2.052]}  # Gluon 1.5% ahead at the cap
    burst = {"tl": [1.91, 1.91], "gluon-ws": [2.09, 2.09]}  # tl 9% ahead in one clock state
    tl, gluon, order = _stand_in_pair(monkeypatch, kernel_choice, capped, burst)
    args = (tl, gluon, ("tl k1 128x256", "gluon k2 128x192 ping-pong"), ((8192, 10240, 8192),))
    rest = (torch.device("cpu"), "Fake GPU", ("triton/gemm*.py",))
    first = kernel_choice.choose(*args, *rest, capped=True)
    assert order == ["tl", "gluon-ws", "gluon-ws", "tl"] * 2
    assert (first.kernel, first.decided_by) == ("tl", "burst")
    assert first.tl_ms == pytest.approx(2.084) and first.gluon_ms == pytest.approx(2.052)
    # the burst pair that decided stays on the choice, so a row can say why tl ran
    assert (first.burst_tl_ms, first.burst_gluon_ms) == pytest.approx((1.91, 2.09))
    kernel_choice.clear_cache()  # as a fresh process
    again = kernel_choice.choose(*args, *rest, capped=True)
    assert (again.kernel, again.decided_by, again.source) == ("tl", "burst", "cache")
    assert (again.burst_tl_ms, again.burst_gluon_ms) == pytest.approx((1.91, 2.09))
    # 5% apart at the cap: the capped pair decides, with no burst pair timed
    kernel_choice.clear_cache()
    capped.update({"tl": [2.15, 2.15], "gluon-ws": [2.05, 2.05]})
    other = (tl, gluon, ("tl k1 128x256", "gluon k3 128x256 cooperative"), args[3])
    wide = kernel_choice.choose(*other, *rest, capped=True)
    assert (wide.kernel, wide.decided_by) == ("gluon-ws", "capped") and len(order) == 12
    assert wide.burst_tl_ms is None and wide.burst_gluon_ms is None
    kernel_choice.clear_cache()


def test_a_gemm_tie_at_the_cap_goes_to_the_tl_kernel_without_a_burst_pair(monkeypatch):
    """ties="tl" (own-triton's GEMM since session 85): a capped pair within NOISE runs the `tl`
    kernel and times no burst pair, even where Gluon is ahead at the cap (H200 fp8
    8192x6144x4096: Gluon 0.4% ahead capped, 2.2% in bursts, 1.5% behind in the sweep). The rule
    keys its decisions apart from the burst rule's, which the burst-ties rung keeps; an unknown
    rule is refused; a gap wider than NOISE still goes to the faster side."""
    from harness_kernels.triton import kernel_choice

    capped = {"tl": [3.312] * 4, "gluon-ws": [3.299] * 4}
    burst = {"tl": [3.166] * 2, "gluon-ws": [3.096] * 2}
    tl, gluon, order = _stand_in_pair(monkeypatch, kernel_choice, capped, burst)
    args = (tl, gluon, ("tl k1 128x256", "gluon k2 128x192 cooperative"), ((8192, 6144, 4096),))
    rest = (torch.device("cpu"), "Fake GPU", ("triton/gemm*.py",))
    tie = kernel_choice.choose(*args, *rest, capped=True, ties="tl")
    assert order == ["tl", "gluon-ws", "gluon-ws", "tl"]  # the capped pair only
    assert (tie.kernel, tie.decided_by, tie.source) == ("tl", "tie", "timed")
    assert (tie.tl_ms, tie.gluon_ms) == pytest.approx((3.312, 3.299))
    assert tie.burst_tl_ms is None
    kernel_choice.clear_cache()  # as a fresh process: read back, nothing timed
    again = kernel_choice.choose(*args, *rest, capped=True, ties="tl")
    assert (again.kernel, again.decided_by, again.source) == ("tl", "tie", "cache")
    assert len(order) == 4
    # the burst rule does not read the tie rule's decision, in this process or on disk: it
    # times its own pairs; and the tie rule's is still its own afterwards
    burst_rule = kernel_choice.choose(*args, *rest, capped=True)
    assert (burst_rule.kernel, burst_rule.decided_by) == ("gluon-ws", "burst")
    assert len(order) == 12
    assert kernel_choice.choose(*args, *rest, capped=True, ties="tl").decided_by == "tie"
    assert len(order) == 12
    with pytest.raises(ValueError, match="ties rule"):
        kernel_choice.choose(*args, *rest, capped=True, ties="gluon")
    # 5% apart at the cap: no tie, the faster side runs under either rule
    kernel_choice.clear_cache()
    capped.update({"tl": [3.45, 3.45], "gluon-ws": [3.29, 3.29]})
    other = (tl, gluon, ("tl k1 128x256", "gluon k3 128x128 ping-pong"), args[3])
    wide = kernel_choice.choose(*other, *rest, capped=True, ties="tl")
    assert (wide.kernel, wide.decided_by) == ("gluon-ws", "capped")
    # off the cap the rules cannot differ: one decision, timed once, serves both
    kernel_choice.clear_cache()
    burst.update({"tl": [1.0, 1.0], "gluon-ws": [0.9, 0.9]})
    short = (tl, gluon, ("tl k1 64x128", "gluon k4 128x64 cooperative"), ((512, 4096, 4096),))
    timed = len(order)
    assert kernel_choice.choose(*short, *rest, ties="tl").kernel == "gluon-ws"
    kernel_choice.choose(*short, *rest)  # the burst rule, in this process: nothing timed
    assert len(order) == timed + 4
    kernel_choice.clear_cache()
    assert kernel_choice.choose(*short, *rest).source == "cache" and len(order) == timed + 4
    kernel_choice.clear_cache()


def test_a_gemm_tie_at_the_cap_is_timed_again_there_and_six_readings_decide(monkeypatch):
    """ties="retime" (own-triton's GEMM since session 101): a capped pair within NOISE is timed
    at the cap for RETIME_ROUNDS more interleaved rounds, and each side's median of six readings
    decides, so one scattered reading cannot (H100 256x57344x8192: Gluon 1.9% ahead in its pair,
    a tie under the old rule, `tl` then 0.894x cuBLAS). Medians within TIE_BAND still run `tl`.
    The decision is kept under its own key, with all six readings, and read back."""
    from harness_kernels.triton import kernel_choice

    assert kernel_choice.RETIME_ROUNDS == 2
    # the first pair 1.5% apart (a tie); the re-time shows Gluon 4% ahead, one tl reading low
    capped = {
        "tl": [0.4131, 0.4150, 0.4170, 0.4010, 0.4180, 0.4175],
        "gluon-ws": [0.4060, 0.4080, 0.4010, 0.4015, 0.4005, 0.4020],
    }
    tl, gluon, order = _stand_in_pair(monkeypatch, kernel_choice, capped, {})
    args = (tl, gluon, ("tl k1 128x128", "gluon k2 128x128 cooperative"), ((256, 57344, 8192),))
    rest = (torch.device("cpu"), "Fake GPU", ("triton/gemm*.py",))
    won = kernel_choice.choose(*args, *rest, capped=True, ties="retime")
    assert order == ["tl", "gluon-ws", "gluon-ws", "tl"] * 3  # the pair, then two more rounds
    assert (won.kernel, won.decided_by, won.source) == ("gluon-ws", "retime", "timed")
    assert (won.tl_ms, won.gluon_ms) == pytest.approx((0.4160, 0.40175))  # the medians
    assert won.burst_tl_ms is None
    kernel_choice.clear_cache()  # as a fresh process: read back, nothing timed
    again = kernel_choice.choose(*args, *rest, capped=True, ties="retime")
    assert (again.kernel, again.decided_by, again.source) == ("gluon-ws", "retime", "cache")
    assert (again.tl_ms, again.gluon_ms) == pytest.approx((0.4160, 0.40175))
    assert len(order) == 12
    # the tl rule keeps its own decisions: it times its own pair and gives the tie to tl
    capped.update({"tl": [0.4131] * 2, "gluon-ws": [0.4054] * 2})
    assert kernel_choice.choose(*args, *rest, capped=True, ties="tl").decided_by == "tie"
    assert len(order) == 16
    # still within TIE_BAND after the re-time: `tl` runs, and the row says "tie"
    kernel_choice.clear_cache()
    capped.update({"tl": [2.100, 2.060, 2.090, 2.080, 2.085, 2.095],
                   "gluon-ws": [2.070, 2.075, 2.080, 2.071, 2.079, 2.069]})  # fmt: skip
    even = (tl, gluon, ("tl k1 128x256", "gluon k3 128x256 ping-pong"), ((8192, 6144, 4096),))
    tie = kernel_choice.choose(*even, *rest, capped=True, ties="retime")
    assert (tie.kernel, tie.decided_by) == ("tl", "tie") and len(order) == 28
    assert tie.gluon_ms < tie.tl_ms < kernel_choice.TIE_BAND * tie.gluon_ms
    # a pair apart by NOISE or more is decided by its two readings alone
    kernel_choice.clear_cache()
    capped.update({"tl": [3.45, 3.45], "gluon-ws": [3.29, 3.29]})
    wide = (tl, gluon, ("tl k1 128x256", "gluon k4 128x128 ping-pong"), ((8192, 6144, 4096),))
    assert kernel_choice.choose(*wide, *rest, capped=True, ties="retime").decided_by == "capped"
    assert len(order) == 32
    kernel_choice.clear_cache()


@needs_interpreter
def test_a_ragged_decode_batch_tunes_apart_from_a_full_one(monkeypatch, cache):
    """Lengths spread below the longest change which split count balances the SMs, so a ragged
    batch gets its own tuning key (session 53: it reused the full batch's 1 split on an H200);
    a full batch's key is what it was before lengths entered it."""
    cands = [_cfg(16, 16, 4, 1), _cfg(16, 32, 4, 1)]
    timed = _fake_attention_gpu(monkeypatch, attention_decode, "decode_configs", cands)
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(4, 4, 1, 64, generator=gen).half()
    k, v = (torch.randn(4, 2, 128, 64, generator=gen).half() for _ in range(2))
    full = torch.full((4,), 128, dtype=torch.int32)
    ragged = torch.tensor([128, 64, 96, 80], dtype=torch.int32)  # 368 / 512: 5.75 eighths
    fill = attention_decode.length_fill
    assert fill(int(full.sum()), 4, 128) == 8 and fill(int(ragged.sum()), 4, 128) == 6
    first = attention_decode.prepare_decode(q, k, v, cache_seqlens=full)
    n_timed = len(timed)
    assert "fill" not in first.config["tune_key"] and first.config["length_fill"] == 1.0
    second = attention_decode.prepare_decode(q, k, v, cache_seqlens=ragged)
    # tuned again, with each split config also timed split by the longest sequence's share
    longest = [c for c in timed[n_timed:] if c.get("split_by") == "longest"]
    split_pairs = [c for c in timed[:n_timed] if c["num_splits"] > 1 and "REDUCE" not in c]
    assert len(longest) == len(split_pairs) > 0 and not second.config["tune_cache_hit"]
    assert len(timed) == 2 * n_timed + len(longest)
    assert second.config["tune_key"] != first.config["tune_key"]
    assert second.config["length_fill"] == 0.719
    again = attention_decode.prepare_decode(q, k, v, cache_seqlens=ragged.flip(0))  # same fill
    assert len(timed) == 2 * n_timed + len(longest) and again.config["tune_cache_hit"]


def test_a_comment_or_docstring_alone_keeps_the_source_hash(tmp_path, monkeypatch):
    """A comment re-tuned every family before (session 93 held a docstring back for it)."""
    (tmp_path / "triton").mkdir()
    kernel = tmp_path / "triton" / "gemm_kernel.py"
    header = tmp_path / "triton" / "gemm_epilogue.h"
    body = 'def f(x):\n    return x + "#"  # a hash sign in a string is code\n'
    kernel.write_text('"""Module."""\n\nBLOCK = 64  # why 64\n\n\n' + body)
    header.write_text("// the epilogue\nint x;\n")
    monkeypatch.setattr(tune_cache, "KERNELS_DIR", tmp_path)

    def hashed() -> str:
        tune_cache.source_hash.cache_clear()
        return tune_cache.source_hash(("triton/gemm*",))

    try:
        before = hashed()
        kernel.write_text(
            '"""Another module docstring,\nover two lines — non-ASCII too."""\n'
            "# a new comment ≥ one line\nBLOCK = 64\n"
            'def f(x):\n    """A new docstring."""\n    return x + "#"\n'
        )
        assert hashed() == before
        kernel.write_text(kernel.read_text().replace('"#"', '"# "'))  # a string is code
        assert hashed() != before
        kernel.write_text('"""Module."""\nBLOCK = 64\n' + body)
        assert hashed() == before
        header.write_text("// another comment\nint x;\n")  # C and CUDA files count whole
        assert hashed() != before
    finally:
        tune_cache.source_hash.cache_clear()


def test_code_text_cuts_a_one_line_docstring_but_keeps_its_def(tmp_path):
    kernel = tmp_path / "k.py"
    kernel.write_text('def f(): """Doc."""\nclass C:\n    "Doc."\n    x = 1  # note\n')
    assert tune_cache.code_text(kernel) == b"def f():\nclass C:\n    x = 1"
    kernel.write_text("def f(:\n    # not Python\n")  # counted whole, never fatal
    assert tune_cache.code_text(kernel) == kernel.read_bytes()


def test_code_text_keeps_a_multiline_strings_blank_lines_and_trailing_spaces(tmp_path):
    """A string's blank line or trailing space is its value (inline PTX, a CUDA source): an
    edit there is a code edit; a comment after the string's closing quotes is still cut."""
    kernel = tmp_path / "k.py"
    kernel.write_text('ASM = """mov.u32 $0, 1;  \n\nret;"""  # note\nx = 1\n')
    assert tune_cache.code_text(kernel) == b'ASM = """mov.u32 $0, 1;  \n\nret;"""\nx = 1'
    before = tune_cache.code_text(kernel)
    kernel.write_text('ASM = """mov.u32 $0, 1;\n\nret;"""  # another note\nx = 1\n')
    assert tune_cache.code_text(kernel) != before  # the trailing spaces were the string's
    kernel.write_text('ASM = """mov.u32 $0, 1;  \n\nret;"""  # another note\nx = 1\n')
    assert tune_cache.code_text(kernel) == before
