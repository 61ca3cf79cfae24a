"""scripts/prebuild_owed.py: the CUTLASS libraries an owed spec's run loads, found here as the
runner finds them on the GPU, so that what this box builds is what a call would build."""

from __future__ import annotations

from script_module import load_script

from harness.config import compose_run_config
from harness.plan import plan
from harness.providers import own_cutlass

prebuild_owed = load_script("prebuild_owed")

FP8_GRID = ["sweep=gemm_llama_lowp", "sweep.groups.1.providers=[hipblaslt]"]


def test_an_owed_list_is_read_as_owed_call_reads_it(tmp_path):
    """take_back.owed_specs, which this script reads the lists with."""
    listed = tmp_path / "owed.specs"
    listed.write_text(
        "# a comment\n\n  grid-s1 sweep=gemm_llama 'sweep.groups.0.product.m=[256, 512]' # why\n"
        "mid-s1 sweep=x#y\nbad-s1 'a=x #y'\r\nlast-s1 a=1\r"
    )
    assert prebuild_owed.owed_specs(listed) == [
        ["grid-s1", "sweep=gemm_llama", "sweep.groups.0.product.m=[256, 512]"],
        ["mid-s1", "sweep=x#y"],
        ["last-s1", "a=1"],  # the unclosed quote's line is skipped, with a warning
    ]


def test_the_fp8_grid_loads_the_fp8_libraries_its_own_cutlass_points_need():
    """Session 111's H200 built 42 fp8 libraries for this spec; the same 42 are found here."""
    found = prebuild_owed.libraries_of(FP8_GRID)
    points, _ = plan(compose_run_config(FP8_GRID))
    problems = [p.problem for p in points if p.provider == "own-cutlass"]
    assert problems, "the fp8 grid has own CUTLASS points"
    assert found == own_cutlass.specs_for(problems, ["own-cutlass"])
    assert len(found) == 42
    assert all(spec.label.endswith("-fp8_e4m3-nt") for spec in found)


def test_a_spec_without_own_cutlass_loads_nothing():
    assert (
        prebuild_owed.libraries_of(["sweep=gemm_llama", "sweep.groups.0.providers=[cublas]"]) == []
    )


def test_specs_that_plan_no_cutlass_here_are_passed_over(tmp_path, monkeypatch, capsys):
    """A `ceilings` spec runs `harness ceilings`, and a spec that does not compose is named:
    neither stops the list (here nothing is left to build, so nvcc never runs)."""
    from harness_kernels.cutlass import build

    monkeypatch.setattr(build, "toolchain_problem", lambda: None)
    listed = tmp_path / "owed.specs"
    listed.write_text("roofs-s1 ceilings sweep=x\nodd-s1 sweep=no_such_sweep\n")
    assert prebuild_owed.main([str(listed)]) == 0
    out = capsys.readouterr().out
    assert "odd-s1" in out and "its libraries not built here" in out
    assert "roofs-s1" not in out
    assert "no owed run loads a CUTLASS library" in out
