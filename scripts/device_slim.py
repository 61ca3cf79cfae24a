"""Take the committed run data out of the working tree for a lent-GPU call, and put it back.

A lent call carries every tracked file that is in the working tree, up to 64 MiB counted as a
tar archive (scripts/carry_size.py). By session 86 the committed runs' parquet was 43.5 of the
tree's 57.6 MiB, and every new run tipped the count over: sessions moved superseded runs out of
the tree, or set results/h100 and reports/ aside by hand, before a call. Nothing a sweep, a probe
or `pytest -m gpu` runs on the machine reads a committed run (rows go to results/_scratch; the
ceilings and the report are read here), so a call needs none of it:

    python3 scripts/device_slim.py aside      # before the call: committed *.parquet, reports/ out
    python3 scripts/device_slim.py back       # after it: restored from git
    python3 scripts/device_slim.py aside --keep results/h200/fmha_decode_serving-b16-s66

`aside` deletes only files that git holds unchanged (so `back`, a `git checkout`, restores them
byte for byte) and refuses when one of them has uncommitted changes. It marks each one
skip-worktree, so a `git commit -a` or `git add -A` made before `back` cannot commit the
deletions (and `git status` does not list them). It keeps every README,
log and call script (`results/*/_logs/` is where a call's script lives) and what `--keep` names:
the device scripts that read committed runs (decode_merge_ncu.sh, fused_merge_call.sh) need
their runs kept. `back` restores only what is missing from the working tree and still in git's
index, so a run moved out with `git rm` stays out.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

# What a call does not need: the committed rows and the rendered report (its html and panels).
SET_ASIDE = ("results/*.parquet", "results/**/*.parquet", "reports/**")


def _git(repo: Path, *args: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p]


def candidates(repo: Path, keep: list[str]) -> list[str]:
    """Tracked files matching SET_ASIDE that are present, outside every --keep path."""
    tracked = _git(repo, "ls-files", "-z", "--", *[f":(glob){g}" for g in SET_ASIDE])
    kept = [k.rstrip("/") for k in keep]
    return [
        p
        for p in tracked
        if (repo / p).is_file() and not any(p == k or p.startswith(k + "/") for k in kept)
    ]


def changed(repo: Path, paths: list[str]) -> list[str]:
    """Of `paths`, those whose working copy or index differs from HEAD (not safe to delete)."""
    if not paths:
        return []
    unstaged = _git(repo, "diff", "--name-only", "-z", "--", *paths)
    staged = _git(repo, "diff", "--cached", "--name-only", "-z", "--", *paths)
    return sorted(set(unstaged) | set(staged))


def aside(repo: Path, keep: list[str]) -> list[str]:
    paths = candidates(repo, keep)
    dirty = changed(repo, paths)
    if dirty:
        raise SystemExit(f"device_slim: uncommitted changes, commit first: {' '.join(dirty[:5])}")
    _update_index(repo, "--skip-worktree", paths)
    for p in paths:
        (repo / p).unlink()
    return paths


def _update_index(repo: Path, flag: str, paths: list[str]) -> None:
    if paths:
        names = "".join(p + "\0" for p in paths).encode()
        cmd = ["git", "-C", str(repo), "update-index", flag, "-z", "--stdin"]
        subprocess.run(cmd, input=names, check=True)


def back(repo: Path) -> list[str]:
    """Restore what `aside` took (and any other tracked file of SET_ASIDE missing from the
    working tree but still in the index): the skip-worktree marks cleared, the files checked out."""
    globs = [f":(glob){g}" for g in SET_ASIDE]
    tagged = _git(repo, "ls-files", "-z", "-t", "--", *globs)  # "S <path>": skip-worktree
    marked = [t[2:] for t in tagged if t.startswith("S ")]
    _update_index(repo, "--no-skip-worktree", marked)
    missing = _git(repo, "ls-files", "-z", "--deleted", "--", *globs)
    if missing:
        subprocess.run(["git", "-C", str(repo), "checkout", "--", *missing], check=True)
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["aside", "back"])
    parser.add_argument("--keep", nargs="*", default=[], help="paths (runs) to leave in the tree")
    parser.add_argument("--repo", default=".", help="the repository root")
    args = parser.parse_args(argv)
    repo = Path(args.repo).resolve()
    if args.action == "aside":
        done = aside(repo, args.keep)
        print(f"set aside {len(done)} files; `python3 scripts/device_slim.py back` restores them")
    else:
        done = back(repo)
        print(f"restored {len(done)} files from git")
    return 0


if __name__ == "__main__":
    sys.exit(main())
