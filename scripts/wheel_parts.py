"""Carry wheels too large for one lent GPU call in parts, over back-to-back calls.

A call carries at most 64 MiB, the tracked tree included, and a machine keeps /tmp while it
stays warm (30 s after a call), so a large wheel set travels as a tar cut into parts, one part
per call, gathered under /tmp on the machine and joined once the last part is there.

Here:   python scripts/wheel_parts.py split [--mib 48] WHEEL...
        rewrites each wheel uncompressed (ZIP_STORED: the same members, so the same RECORD),
        packs them into one tar compressed as a whole with xz (solid: 157 MiB of FlashAttention-4
        and FlashInfer wheels become 86 MiB, two calls instead of four), cuts it into
        .whl-parts/1/, .whl-parts/2/, ... (each at most --mib MiB, each with manifest.json: the
        compressed tar's sha256, size, part count and wheel names) and prints, per call, what to
        carry and how large the call is.
There:  python3 scripts/wheel_parts.py gather
        copies the carried .whl-parts/<n>/ into /tmp/wheel-parts; once every part is there,
        joins them, checks the sha256 and unpacks the (stored) wheels into /tmp/wheel-parts/whole, which
        scripts/device_env.sh installs beside .whl/. Exit status 0: whole (also when gathered by
        an earlier call); 3: parts still missing (which ones is printed); 1: a bad sum.
.whl-parts/ is git-ignored; needs only the standard library (the machine's python3).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PARTS = Path(".whl-parts")
STAGE = Path("/tmp/wheel-parts")
CALL_LIMIT_MIB = 64
MIB = 1 << 20


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            h.update(block)
    return h.hexdigest()


def _tree_mib() -> float:
    """Size of the tracked tree, which every call carries (0 outside a git checkout)."""
    ls = subprocess.run(["git", "ls-files", "-z"], capture_output=True)
    names = ls.stdout.decode().split("\0") if ls.returncode == 0 else []
    return sum(Path(f).stat().st_size for f in names if Path(f).is_file()) / MIB


def _stored(wheel: Path, dest: Path) -> Path:
    """The wheel rewritten without compression: xz then compresses all wheels as one stream,
    which deflate-per-member hid from it. Member names, order and bytes are kept (pip checks the
    RECORD hashes of the contents, not of the zip)."""
    out = dest / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)  # before the type changes: read() decompresses by it
            info.compress_type = zipfile.ZIP_STORED
            dst.writestr(info, data)
    return out


def _xz(raw: Path, packed: Path) -> None:
    """xz -T0 where there is one (all cores); the standard library's lzma otherwise."""
    xz = shutil.which("xz")
    if xz:
        with packed.open("wb") as out:
            subprocess.run([xz, "-T0", "-6", "-c", str(raw)], stdout=out, check=True)
        return
    with raw.open("rb") as src, lzma.open(packed, "wb", preset=6) as dst:
        shutil.copyfileobj(src, dst, MIB)


def split(wheels: list[Path], mib: int, parts: Path = PARTS) -> int:
    missing = [str(w) for w in wheels if not w.is_file()]
    if missing:
        print(f"wheel_parts: error: not a file: {missing}", file=sys.stderr)
        return 2
    shutil.rmtree(parts, ignore_errors=True)
    parts.mkdir(parents=True)
    raw, tar = parts / "wheels.tar", parts / "wheels.tar.xz"
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(raw, "w") as t:
        for w in sorted(wheels, key=lambda p: p.name):
            t.add(_stored(w, Path(tmp)), arcname=w.name)
    _xz(raw, tar)
    raw.unlink()
    size, limit = tar.stat().st_size, mib * MIB
    count = -(-size // limit)
    manifest = {
        "sha256": _sha256(tar),
        "bytes": size,
        "parts": count,
        "wheels": sorted(w.name for w in wheels),
    }
    with tar.open("rb") as f:
        for n in range(1, count + 1):
            folder = parts / str(n)
            folder.mkdir()
            (folder / f"wheels.tar.{n:03d}").write_bytes(f.read(limit))
            (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    tar.unlink()
    tree = _tree_mib()
    print(f"{len(wheels)} wheels, {size / MIB:.1f} MiB in {count} parts of <= {mib} MiB")
    for n in range(1, count + 1):
        part = (parts / str(n) / f"wheels.tar.{n:03d}").stat().st_size / MIB
        total = tree + part
        flag = "" if total < CALL_LIMIT_MIB else f"  OVER {CALL_LIMIT_MIB} MiB: split smaller"
        print(f"call {n}: carry {parts}/{n} ({part:.1f} MiB + tree {tree:.1f} MiB"
              f" = {total:.1f} MiB){flag}")  # fmt: skip
    print(
        "each call runs `python3 scripts/wheel_parts.py gather` (device_env.sh does, in the last)"
    )
    return 0


def gather(parts: Path = PARTS, stage: Path = STAGE) -> int:
    stage.mkdir(parents=True, exist_ok=True)
    for folder in sorted(d for d in parts.iterdir() if d.is_dir()) if parts.is_dir() else []:
        manifest = json.loads((folder / "manifest.json").read_text())
        staged = stage / "manifest.json"
        if staged.exists() and json.loads(staged.read_text())["sha256"] != manifest["sha256"]:
            shutil.rmtree(stage)  # parts of another wheel set: start over
            stage.mkdir(parents=True)
        for f in folder.iterdir():
            shutil.copy2(f, stage / f.name)
    if not (stage / "manifest.json").exists():
        print("wheel_parts: no parts carried or gathered", file=sys.stderr)
        return 3
    manifest = json.loads((stage / "manifest.json").read_text())
    whole = stage / "whole"
    if (whole / "SHA256").is_file() and (whole / "SHA256").read_text() == manifest["sha256"]:
        print(f"wheel_parts: whole already: {len(manifest['wheels'])} wheels in {whole}")
        return 0
    count = manifest["parts"]
    have = sorted(int(p.suffix[1:]) for p in stage.glob("wheels.tar.*"))
    lacking = [n for n in range(1, count + 1) if n not in have]
    if lacking:
        print(f"wheel_parts: have parts {have} of {count}; still to carry: {lacking}")
        return 3
    tar = stage / "joined.tar.xz"
    with tar.open("wb") as out:
        for n in range(1, count + 1):
            part = stage / f"wheels.tar.{n:03d}"
            out.write(part.read_bytes())
            part.unlink()
    if _sha256(tar) != manifest["sha256"]:
        print(
            "wheel_parts: error: joined parts do not match the manifest's sha256", file=sys.stderr
        )
        tar.unlink()
        return 1
    shutil.rmtree(whole, ignore_errors=True)
    with tarfile.open(tar, "r:xz") as t:
        t.extractall(whole, filter="data")
    tar.unlink()
    (whole / "SHA256").write_text(manifest["sha256"])
    print(f"wheel_parts: {count} parts joined: {len(manifest['wheels'])} wheels in {whole}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("split", help="here: cut wheels into .whl-parts/<n>/")
    s.add_argument("--mib", type=int, default=48, help="largest part, MiB (default 48)")
    s.add_argument("wheels", nargs="+", type=Path)
    g = sub.add_parser("gather", help="there: stage carried parts in /tmp; join when complete")
    for p in (s, g):
        p.add_argument("--parts", type=Path, default=PARTS, help=f"default {PARTS}")
    g.add_argument("--stage", type=Path, default=STAGE, help=f"default {STAGE}")
    args = parser.parse_args(argv)
    if args.command == "split":
        return split(args.wheels, args.mib, args.parts)
    return gather(args.parts, args.stage)


if __name__ == "__main__":
    sys.exit(main())
