"""How close a lent-GPU call's tree is to the device tool's 64 MiB, before the call is refused.

A call carries the tracked files, the untracked files git does not ignore and the paths named in
`carry`. Their bytes alone do not predict a refusal: session 84's third call was refused at
62.5 MiB of file bytes and passed at 61.6, with about 2,350 files. Counted as a tar archive
counts them (a 512-byte header per file, each file padded to 512 bytes), the same two states
come to about 64.2 and 63.3 MiB, either side of the limit. This script prints that estimate and
its parts, and exits 1 above the limit (so device_carry.sh can warn before a call is spent).

    python3 scripts/carry_size.py .whl .cache     # the carry paths of the next call
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

LIMIT_MIB = 64.0
BLOCK = 512  # a tar header, and the unit a file's data is padded to


def tar_bytes(size: int) -> int:
    """One file's share of a tar archive: its header plus its data padded to whole blocks."""
    return BLOCK + -(-size // BLOCK) * BLOCK


def git_files(repo: Path, *args: str) -> list[Path]:
    out = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z", *args], check=True, capture_output=True
    ).stdout
    return [repo / p for p in out.decode().split("\0") if p]


def carried_files(repo: Path, carry: list[str]) -> list[Path]:
    files: list[Path] = []
    for name in carry:
        path = repo / name
        files += [p for p in path.rglob("*")] if path.is_dir() else [path]
    return files


def parts(repo: Path, carry: list[str]) -> dict[str, tuple[int, int, int]]:
    """{part: (files, bytes, tar bytes)} for the tracked, the untracked and the carried files."""
    groups = {
        "tracked": git_files(repo),
        "untracked": git_files(repo, "--others", "--exclude-standard"),
        "carry": carried_files(repo, carry),
    }
    out = {}
    for name, files in groups.items():
        sizes = [p.stat().st_size for p in files if p.is_file() and not p.is_symlink()]
        out[name] = (len(sizes), sum(sizes), sum(tar_bytes(s) for s in sizes))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("carry", nargs="*", help="paths the call's carry names")
    parser.add_argument("--repo", default=".", help="the repository root")
    args = parser.parse_args(argv)
    found = parts(Path(args.repo).resolve(), args.carry)
    mib = 1 << 20
    for name, (count, size, tarred) in found.items():
        print(f"{name:10s} {count:6d} files {size / mib:7.2f} MiB  as tar {tarred / mib:7.2f} MiB")
    total = sum(t for _, _, t in found.values()) / mib
    verdict = (
        "fits"
        if total <= LIMIT_MIB
        else "OVER: python3 scripts/device_slim.py aside, or carry less"
    )
    print(f"{'total':10s} as tar {total:.2f} MiB of {LIMIT_MIB:.0f} ({verdict})")
    return 0 if total <= LIMIT_MIB else 1


if __name__ == "__main__":
    sys.exit(main())
