"""scripts/sass_wgmma_overlap.py: what the Gluon FMHA's SASS runs between its scores wait and its
P V wait, on made-up SASS and on one spec compiled ahead of time for sm_90a."""

from __future__ import annotations

import os
import re

from kernel_checkout import run_script
from script_module import load_script

overlap = load_script("sass_wgmma_overlap")

SASS = """
        /*0000*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], RZ, !UPT ;
        /*0010*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
        /*0020*/                   FMNMX R1, R2, R3, !PT ;
        /*0030*/                   FFMA R4, R5, R6, -R7 ;
        /*0040*/              @!P0 MUFU.EX2 R8, R4 ;
        /*0050*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0060*/                   FMUL R9, R9, R10 ;
        /*0070*/                   HGMMA.64x128x16.F32 R24, R152, gdesc[UR8], R24 ;
        /*0080*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
        /*0090*/                   EXIT ;
"""


def test_importing_the_script_leaves_the_interpreter_setting_alone(monkeypatch) -> None:
    # it sets TRITON_INTERPRET=0 for its own compile only: set on import, it switched the
    # interpreter off for every later test in the importing process (session 106's first CI run)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    load_script("sass_wgmma_overlap")
    assert os.environ["TRITON_INTERPRET"] == "1"


def test_counts_what_sits_under_the_pv_wait_and_after_it() -> None:
    ins = overlap.instructions(SASS)
    assert len(ins) == 10 and overlap.opcode(ins[4]) == "MUFU.EX2"
    # one scores wait with a P V wait after it (the last has none): 3 under it, of which one
    # MUFU.EX2 (predicated) and one FFMA; one instruction between the P V wait and the next HGMMA
    assert overlap.overlaps(ins) == [(3, 1, 1, 1)]


def test_one_compiled_spec() -> None:
    done = run_script("sass_wgmma_overlap", "--match", "_c2_pp")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [ln for ln in done.stdout.splitlines() if ln.startswith("attn_prefill_gluon_")]
    assert [r.split()[0] for r in rows] == ["attn_prefill_gluon_full_causal_d128_c2_pp"]
    waits = re.findall(r"\((\d+), (\d+), (\d+), (\d+)\)", rows[0])
    # the consumers' two copies of the masked and unmasked loops: every scores wait is followed
    # by a P V wait with something scheduled between them
    assert len(waits) >= 2 and all(int(w[0]) > 0 for w in waits)
