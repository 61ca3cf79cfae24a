"""fmha_common.h's exp2_poly (HK_EXP_EMU), its algorithm in numpy float32 with the constants read
from the header: what the GPU tests check end to end against fp32 attention, checked here per
value over the whole range a softmax feeds it (x <= 0), on the CPU."""

import re
from pathlib import Path

import numpy as np

HEADER = Path(__file__).resolve().parents[2] / "kernels" / "cutlass" / "fmha_common.h"


def _body() -> str:
    text = HEADER.read_text()
    start = text.index("float exp2_poly(float x)")
    return text[start : text.index("\n}\n", start)]


def _number(pattern: str, body: str) -> str:
    found = re.search(pattern, body)
    assert found, f"exp2_poly no longer matches {pattern!r}"
    return found.group(1)


def exp2_poly(x: np.ndarray) -> np.ndarray:
    """The header's steps in float32 and int32: clamp, shifter, cubic, exponent add."""
    body = _body()
    shifter = np.float32(_number(r"kShifter = ([\d.]+)f", body))
    floor = np.float32(_number(r"fmaxf\(x, (-[\d.]+)f\)", body))
    c3, c2, c1, c0 = (np.float32(v) for v in re.findall(r"(\d\.\d+)f", body.split("fmaf", 1)[1]))
    x = x.astype(np.float32)
    xc = np.maximum(x, floor)
    shifted = (xc + shifter).astype(np.float32)
    f = (xc - (shifted - shifter)).astype(np.float32)
    p = ((c3 * f + c2) * f + c1) * f + c0
    bits = p.astype(np.float32).view(np.uint32) + (shifted.view(np.uint32) << np.uint32(23))
    assert "x < -125.f ? 0.f : y" in body  # below the clamp: 0, as the SFU
    return np.where(x < floor, np.float32(0), bits.view(np.float32))


def test_exp2_poly_is_within_1e4_of_exp2_for_every_softmax_input():
    x = np.concatenate([np.linspace(-125.0, 0.0, 400_001), -np.logspace(-8, 0, 1001), [0.0]])
    x = x.astype(np.float32)
    got = exp2_poly(x).astype(np.float64)
    want = np.exp2(x.astype(np.float64))
    assert np.all(np.isfinite(got)) and np.all(got > 0)  # x >= -125: normal floats
    assert np.max(np.abs(got / want - 1)) < 1e-4  # bf16 keeps 2^-8: the P V operand loses nothing


def test_exp2_poly_of_a_masked_score_is_zero_as_on_the_sfu():
    # -inf (a masked key) and anything below the clamp: 0; at the clamp itself, 2^-125
    got = exp2_poly(np.array([-np.inf, -1e30, -126.5, -125.0], dtype=np.float32))
    assert list(got[:3]) == [0.0, 0.0, 0.0]
    assert got[3] == np.float32(2.0**-125) or abs(got[3] / 2.0**-125 - 1) < 1e-4
