"""The project's CK code-generation config selects exactly the intended kernel set.

CK's source is not checked out in CI: these tests run the selection against a recorded fixture
of the generator's interface (fixtures/ck_fmha_fwd_interface.json: the kernel-trait tuples CK's
get_fwd_blobs returns at the pinned commit, loaded through a stand-in generator module; see
conftest.py). The tests marked `real_ck` run against CK's own generator instead and are skipped
unless a checkout is present (the submodule, or HARNESS_CK_ROOT).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from harness_kernels.ck import fmha_codegen as cg

PADS_DEFAULT = [("t", "f", "t", "t"), ("t", "t", "t", "t")]  # (spad, skpad, dpad, dvpad)


def _expected(tag: str) -> list[tuple]:
    """hdim 128, batch, row-major V, no bias/LSE/dropout/quant; per dtype and mask CK's two
    padding choices, the unpadded-seqlen-k kernel first (CK's dispatch order)."""
    return [
        (128, dtype, "batch", tag, "row", *pads, "no", "f", "f", "f", mask)
        for dtype, mask, pads in itertools.product(
            ("fp16", "bf16"), ("s_no", "s_mask"), PADS_DEFAULT
        )
    ]


def _traits(kernels) -> list[tuple]:
    return [
        (k.F_hdim, k.F_dtype, k.F_mode, *(getattr(k.F_pipeline, f) for f in cg.PIPELINE_FIELDS))
        for k in kernels
    ]


def test_fixture_is_the_generators_full_default_list_at_hdim_128(fake_ck):
    gen = cg.load_generator(fake_ck)
    _, kernels = gen.get_fwd_blobs(None, 0, "simplified")
    at128 = [k for k in kernels if k.F_hdim == 128]
    assert len(at128) == 294  # fp16 + bf16: 96 batch + 48 group each; fp8: 6
    assert {k.F_hdim for k in kernels} == {32, 64, 128, 256}


@pytest.mark.parametrize(("config", "tag"), [("default", "qr_async"), ("register-trick", "qr")])
def test_selection_is_exactly_the_intended_set(fake_ck, config, tag):
    gen = cg.load_generator(fake_ck)
    kernels = cg.select_kernels(gen, config)
    assert _traits(kernels) == _expected(tag)
    assert gen.CALLS == [(None, cg.RECEIPT, cg.MASK_IMPL)]  # CK's default instance set


def test_register_trick_rewrites_only_the_pipeline(fake_ck):
    gen = cg.load_generator(fake_ck)
    default, trick = cg.select_kernels(gen, "default"), cg.select_kernels(gen, "register-trick")
    for d, t in zip(default, trick, strict=True):
        assert t.F_tile == d.F_tile and t.F_pipeline.tag == "qr" and d.F_pipeline.tag == "qr_async"
        assert (t.F_hdim, t.F_dtype, t.F_mode, t.mask_impl) == (
            d.F_hdim,
            d.F_dtype,
            d.F_mode,
            d.mask_impl,
        )
    assert all(k.F_pipeline.tag == "qr_async" for k in default)  # the originals are untouched


def test_the_unpadded_config_puts_an_unpadded_qr_kernel_ahead_of_the_thesiss(fake_ck):
    """register-trick-unpadded: per dtype and mask, a qr kernel with no padding at all first
    (16-byte accesses where the shape is on the tile grid), then the thesis's two padded ones,
    which `qr` serves with 2-byte accesses, as the fallback."""
    gen = cg.load_generator(fake_ck)
    unpadded = _traits(cg.select_kernels(gen, "register-trick-unpadded"))
    trick = _traits(cg.select_kernels(gen, "register-trick"))
    expected = []
    for i in range(0, len(trick), 2):  # the thesis's kernels come in pairs per (dtype, mask)
        first = trick[i]
        expected.append((*first[:5], *cg.UNPADDED, *first[9:]))
        expected += trick[i : i + 2]
    assert unpadded == expected
    assert {t[3] for t in unpadded} == {"qr"} and len(unpadded) == 12


def test_fp16_only_selection(fake_ck):
    gen = cg.load_generator(fake_ck)
    kernels = cg.select_kernels(gen, "register-trick", cg.Selection(dtypes=("fp16",)))
    assert [t for t in _expected("qr") if t[1] == "fp16"] == _traits(kernels)


def test_generator_drift_is_an_error(fake_ck):
    gen = cg.load_generator(fake_ck)
    original = gen.get_fwd_blobs

    def drifted(*args):  # CK starts emitting qr for hdim 128: the config no longer means much
        pool, kernels = original(*args)
        for k in kernels:
            k.F_pipeline.tag = "qr"
        return pool, kernels

    gen.get_fwd_blobs = drifted
    with pytest.raises(cg.CodegenError, match="expects only qr_async"):
        cg.select_kernels(gen, "default")
    gen.get_fwd_blobs = original
    with pytest.raises(cg.CodegenError, match=r"no kernel for \(dtype, mask\)"):
        cg.select_kernels(gen, "default", cg.Selection(dtypes=("fp16", "fp32")))
    with pytest.raises(
        ValueError, match="allowed: default, register-trick, register-trick-unpadded"
    ):
        cg.select_kernels(gen, "fast")


def test_write_blobs_uses_the_generators_writers(fake_ck, tmp_path):
    gen = cg.load_generator(fake_ck)
    kernels = cg.select_kernels(gen, "register-trick")
    paths = cg.write_blobs(gen, kernels, tmp_path / "gen")
    assert [p.name for p in paths] == [k.filename for k in kernels] + ["fmha_fwd_api.cpp"]
    assert all(p.is_file() for p in paths)
    api = (tmp_path / "gen" / "fmha_fwd_api.cpp").read_text().splitlines()
    assert api[:2] == ["fp16 128 qr f", "fp16 128 qr t"]  # dispatch order kept
    assert len(api) == 8


def test_missing_generator_is_a_clear_error(tmp_path):
    with pytest.raises(cg.CodegenError, match="generator not found"):
        cg.load_generator(tmp_path)


# ---------------------------------------------------------------------------------------------
# Against CK's own generator (skipped without a checkout)
# ---------------------------------------------------------------------------------------------

THESIS_KERNEL = (
    "fmha_fwd_d128_fp16_batch_shb_b128x128x32x128x32x128_r4x1x1_w32x32x16_qr_vr_psddv_mask"
)


def test_real_generator_register_trick_names(real_ck):
    gen = cg.load_generator(real_ck)
    names = [
        k.name for k in cg.select_kernels(gen, "register-trick", cg.Selection(dtypes=("fp16",)))
    ]
    stem = "fmha_fwd_d128_fp16_batch_shb_b128x128x32x128x32x128_r4x1x1_w32x32x16_qr_vr_"
    assert names == [stem + s for s in ("psddv", "psskddv", "psddv_mask", "psskddv_mask")]
    assert THESIS_KERNEL in names  # the kernel the thesis's README prints


def test_real_generator_matches_the_recorded_fixture(real_ck):
    fixture = Path(__file__).parent / "fixtures" / "ck_fmha_fwd_interface.json"
    assert cg.record_interface(cg.load_generator(real_ck)) == fixture.read_text()


def test_real_generator_writes_qr_dispatch(real_ck, tmp_path):
    gen = cg.load_generator(real_ck)
    cg.write_blobs(gen, cg.select_kernels(gen, "register-trick"), tmp_path)
    api = (tmp_path / "fmha_fwd_api.cpp").read_text()
    assert api.count("BlockFmhaPipelineEnum::QRKSVS,") == 8 and "QRKSVS_ASYNC" not in api
    blob = (tmp_path / (THESIS_KERNEL + ".cpp")).read_text()
    assert "ck_tile::BlockFmhaPipelineQRKSVS<" in blob


def test_real_generator_dispatches_the_unpadded_kernel_first_on_the_tile_grid(real_ck, tmp_path):
    """CK's writers, given the unpadded config: its kernel's dispatch condition is the tile grid
    (seqlen and head dim multiples of 128), and it is tried before the padded ones."""
    gen = cg.load_generator(real_ck)
    kernels = cg.select_kernels(gen, "register-trick-unpadded", cg.Selection(dtypes=("fp16",)))
    assert kernels[0].name.endswith("_qr_vr") and kernels[1].name == kernels[0].name + "_psddv"
    cg.write_blobs(gen, kernels, tmp_path)
    api = (tmp_path / "fmha_fwd_api.cpp").read_text()
    grid = "(a.seqlen_q % 128 == 0) && (a.seqlen_k % 128 == 0) && (a.hdim_q % 128 == 0)"
    assert api.index(grid) < api.index("(true /*a.hdim_q % 128 != 0*/)")
    assert api.count("BlockFmhaPipelineEnum::QRKSVS,") == 6 and "QRKSVS_ASYNC" not in api
