"""scripts/wheel_parts.py: wheels cut into parts here, gathered over several calls there, joined
byte for byte once the last part arrives (the lent-GPU path for wheels over one call's limit)."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest
from script_module import load_script

wheel_parts = load_script("wheel_parts")


@pytest.fixture
def wheels(tmp_path):
    made = []
    for name, size in (("big-1.0-py3-none-any.whl", 2_500_000), ("small-2.0-py3-none-any.whl", 10)):
        path = tmp_path / "dl" / name
        path.parent.mkdir(exist_ok=True)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:  # a wheel is a zip
            z.writestr(f"{name.split('-')[0]}/data.bin", os.urandom(size))
            z.writestr(f"{name.split('-')[0]}/__init__.py", "x = 1\n" * 1000)
        made.append(path)
    return made


def carry(parts: Path, n: int, call: Path) -> Path:
    """What one lent call brings: only part n of the split."""
    shutil.rmtree(call, ignore_errors=True)
    (call / str(n)).parent.mkdir(parents=True)
    shutil.copytree(parts / str(n), call / str(n))
    return call


def test_split_then_gather_over_calls_rebuilds_the_wheels(tmp_path, wheels, capsys):
    parts, stage, call = tmp_path / "parts", tmp_path / "stage", tmp_path / "call"
    assert wheel_parts.split(wheels, 1, parts) == 0
    manifest = json.loads((parts / "1" / "manifest.json").read_text())
    assert manifest["parts"] == 3 and manifest["wheels"] == sorted(w.name for w in wheels)
    assert all(
        (parts / str(n) / f"wheels.tar.{n:03d}").stat().st_size <= 1 << 20 for n in (1, 2, 3)
    )
    assert "call 3: carry" in capsys.readouterr().out
    assert wheel_parts.gather(carry(parts, 2, call), stage) == 3
    assert wheel_parts.gather(carry(parts, 1, call), stage) == 3
    assert "still to carry: [3]" in capsys.readouterr().out
    assert wheel_parts.gather(carry(parts, 3, call), stage) == 0
    for w in wheels:  # the same members with the same bytes, stored uncompressed
        with zipfile.ZipFile(w) as a, zipfile.ZipFile(stage / "whole" / w.name) as b:
            assert a.namelist() == b.namelist()
            assert all(a.read(n) == b.read(n) for n in a.namelist())
            assert {i.compress_type for i in b.infolist()} == {zipfile.ZIP_STORED}
    assert not list(stage.glob("wheels.tar*"))  # parts removed once joined
    assert wheel_parts.gather(tmp_path / "nothing-carried", stage) == 0  # a later call: whole


def test_a_corrupt_part_is_refused(tmp_path, wheels):
    parts, stage = tmp_path / "parts", tmp_path / "stage"
    wheel_parts.split(wheels, 2, parts)
    part = parts / "1" / "wheels.tar.001"
    data = bytearray(part.read_bytes())
    data[100] ^= 0xFF
    part.write_bytes(bytes(data))
    assert wheel_parts.gather(parts, stage) == 1
    assert not (stage / "whole").exists()


def test_parts_of_another_set_start_over(tmp_path, wheels):
    first, second, stage = tmp_path / "a", tmp_path / "b", tmp_path / "stage"
    wheel_parts.split(wheels, 1, first)
    wheel_parts.gather(carry(first, 1, tmp_path / "call"), stage)
    wheel_parts.split(wheels[1:], 1, second)  # one small part: a different tar
    assert wheel_parts.gather(second, stage) == 0
    assert sorted(p.name for p in (stage / "whole").glob("*.whl")) == [wheels[1].name]


def test_missing_wheel_is_an_error(tmp_path):
    assert wheel_parts.split([tmp_path / "absent.whl"], 1, tmp_path / "parts") == 2
