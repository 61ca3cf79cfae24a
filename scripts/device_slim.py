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

`aside` deletes only files that git holds unchanged (so `back` restores them byte for byte from
the index) and refuses when one of them has uncommitted changes, or when an earlier `aside` was
not undone. It marks each one skip-worktree, so a `git commit -a` or `git add -A` made before
`back` cannot commit the deletions (and `git status` does not list them); `git rm` and `git mv`
refuse those paths until `back`. It sets aside every tracked parquet under results/ (those under
`_logs/` too) and reports/ but its README; the READMEs and the call scripts under `_logs/` stay.
`--keep` leaves the runs a device script reads (decode_merge_ncu.sh, fused_merge_call.sh); a
`--keep` path that holds no tracked file is refused, as a misspelling would be. `back` writes
back only the files missing from the working tree: a file written at a set-aside path meanwhile
is left as it is, and shows as a change once its mark is cleared.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

# What a call does not need: the committed rows and the rendered report (its html and panels).
SET_ASIDE = ("results/**/*.parquet", "reports/**")
KEPT = ("reports/README.md",)


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> list[str]:
    # literal pathspecs: a run folder named like a glob (run[1]) names itself only
    cmd = ["git", "--literal-pathspecs", "-C", str(repo), *args]
    out = subprocess.run(cmd, check=True, capture_output=True, input=stdin).stdout
    return [p for p in out.decode().split("\0") if p]


def _tracked(repo: Path) -> list[str]:
    """Every tracked file SET_ASIDE matches, present or not, less KEPT."""
    out = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z", "--", *[f":(glob){g}" for g in SET_ASIDE]],
        check=True,
        capture_output=True,
    ).stdout
    return [p for p in out.decode().split("\0") if p and p not in KEPT]


def _marked(repo: Path, paths: list[str]) -> list[str]:
    """Of `paths`, those flagged skip-worktree ("S" in `git ls-files -t`)."""
    if not paths:
        return []
    tagged = _git(repo, "ls-files", "-z", "-t", "--", *paths)
    return [t[2:] for t in tagged if t.startswith("S ")]


def _stdin(paths: list[str]) -> bytes:
    return "".join(p + "\0" for p in paths).encode()


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def candidates(repo: Path, keep: list[str]) -> list[str]:
    """Tracked files matching SET_ASIDE that are present, outside every --keep path."""
    kept = [k.rstrip("/") for k in keep]
    return [
        p for p in _tracked(repo) if (repo / p).is_file() and not any(_under(p, k) for k in kept)
    ]


def changed(repo: Path, paths: list[str]) -> list[str]:
    """Of `paths`, those whose working copy or index differs from HEAD (not safe to delete)."""
    if not paths:
        return []
    unstaged = _git(repo, "diff", "--name-only", "-z", "--", *paths)
    staged = _git(repo, "diff", "--cached", "--name-only", "-z", "--", *paths)
    return sorted(set(unstaged) | set(staged))


def aside(repo: Path, keep: list[str]) -> list[str]:
    tracked = _tracked(repo)
    if marked := _marked(repo, tracked):
        # git diff does not look at a skip-worktree file: one written since the last aside
        # would be deleted unseen
        raise SystemExit(
            f"device_slim: {len(marked)} files are still set aside: run `back` first ({marked[0]})"
        )
    for k in keep:
        if not any(_under(p, k.rstrip("/")) for p in tracked):
            raise SystemExit(f"device_slim: --keep {k}: no tracked file of SET_ASIDE under it")
    paths = candidates(repo, keep)
    dirty = changed(repo, paths)
    if dirty:
        raise SystemExit(f"device_slim: uncommitted changes, commit first: {' '.join(dirty[:5])}")
    # marked first: a crash before the deletions leaves present, marked files, which the next
    # aside refuses and `back` un-marks
    _git(repo, "update-index", "--skip-worktree", "-z", "--stdin", stdin=_stdin(paths))
    for p in paths:
        (repo / p).unlink()
    return paths


def back(repo: Path) -> list[str]:
    """Write back every tracked file of SET_ASIDE missing from the working tree (from the index,
    skip-worktree marks ignored), then clear the marks: restored before un-marked, so no moment
    shows the set-aside files as deletions git would stage."""
    tracked = _tracked(repo)
    missing = [p for p in tracked if not (repo / p).exists()]
    if missing:
        _git(
            repo,
            "checkout-index",
            "-f",
            "--ignore-skip-worktree-bits",
            "-z",
            "--stdin",
            stdin=_stdin(missing),
        )
    if marked := _marked(repo, tracked):
        _git(repo, "update-index", "--no-skip-worktree", "-z", "--stdin", stdin=_stdin(marked))
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
