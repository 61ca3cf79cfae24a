"""Take a lent GPU call's returned files back into the checkout, so that the next call starts
where this one stopped even when it comes on a fresh machine.

A machine is kept between back-to-back calls only sometimes: in session 50 three calls of four,
each launched at once, came on fresh machines, and the one that carried nothing built the CUTLASS
libraries and tuned again (about 290 s of device time lost). So a call returns what it built, and
this puts it where `scripts/device_env.sh` and the `carry` argument pick it up:

    python3 scripts/take_back.py /work/.device/<n>/ [--root .]

- `tune-cache.tgz` (`tar czf ... -C $HARNESS_CACHE_DIR tune`): merged into
  `.cache/tune-<gpu>.tgz`, one per GPU named in the entries' keys (`NVIDIA H200` -> h200). The
  union is kept; a returned entry replaces the carried one of the same name (the machine's is
  newer). Entries of a GPU with no short name are left out, and said so. The merged file is
  also copied to `tune_cache/` in the tree, which is committed: `.cache/` is git-ignored, and a
  session that began on a fresh checkout (session 93) found no tune cache and tuned every family
  again; `device_carry.sh` puts the committed copy back in `.cache/` where that has none.
- `cutlass.tar.xz` (`tar cJf ... -C /tmp/cutlass-cache .`): replaces `.cache/cutlass.tar.xz`
  where it holds every carried library (the machine started from the carried one); one that
  lacks some (a machine that never unpacked it) is merged with it instead. One cut
  short (a call that ran out while packing: session 52's call 3 returned 101 of 159 libraries
  and an xz stream without its end) does not replace it: the libraries it holds whole are
  merged into the carried ones, and the one being read when it ended is left out.
- `results.tgz` (`tar czf ... results/_scratch/<folder>`): unpacked into the tree. A run cut
  short resumes on a fresh machine only if `carry` names `results/_scratch/<folder>`: the folder
  is git-ignored, so it is not carried otherwise. The returned copy of a run is the machine's
  whole run, so a local folder of that run holding row files the returned one lacks holds
  another machine's rows: it is moved aside (`<run>.aside-<n>`, said so) before unpacking, not
  merged. Session 54 merged an H200's 374 rows, left from session 53, with an H100's 384 under one
  run folder that way.
- Unfinished runs (fewer rows, compacted or in row files, than their run.json's last
  `points_planned`) are listed in `.cache/unfinished`, one run folder per line, and dropped from it
  once a call returns them whole. Each is also packed into `.cache/resume/<folder>+<run>.tar.xz`
  (its paths from the checkout's root), which `scripts/device_env.sh` unpacks on the machine:
  carrying `.cache` resumes it. Carried as a folder, session 86's 156 point files of a whole-grid
  run (6.4 MB, 0.55 packed) tipped the call past the 64 MiB it may carry; a run returned whole drops
  its pack. `scripts/gpu_measure.sh` carries `.cache`, and on the machine `--check-resume <folder>`
  refuses to start a listed run whose folder is not there. A run committed unfinished is
  packed the same way from the tree (`--resume-committed results/<gpu>/<run>`), for a fresh
  checkout, whose .cache holds no pack. In session 56 a call came on a fresh
  H100 without its folder and timed again 111 rows that the call before had measured (431 s
  held). That call was launched before take_back.py ran. Had it run, the ledger would have
  refused the run, so take the files back before the next call.
Needs only the standard library (pyarrow for --resume-committed, which runs here only).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import lzma
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

GPU_TAG = re.compile(r"\b(h100|h200|h20|b200|b100|gb200|a100|l40s|mi300x|mi300a|mi325x|mi355x)\b")


def gpu_tag(device: str) -> str | None:
    """The short name of a GPU as `device_env.sh` names its tune cache (None: not one we know)."""
    found = GPU_TAG.search(device.lower())
    return found.group(1) if found else None


def _members(path: Path) -> dict[str, bytes]:
    """The regular files of a tune-cache tgz, by name (tune/<family>/<digest>.json)."""
    out: dict[str, bytes] = {}
    if path.suffix == ".tgz" and not gzip.decompress(path.read_bytes()):
        return out  # `tar czf` of a cache that tuned nothing: gzip of no bytes, not a tar
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            f = tar.extractfile(m) if m.isfile() else None
            if f is not None:
                out[m.name.removeprefix("./")] = f.read()
    return out


def _device_of(data: bytes) -> str:
    try:
        return str(json.loads(data).get("key", {}).get("device", ""))
    except (ValueError, AttributeError):
        return ""


def _write_tgz(path: Path, files: dict[str, bytes]) -> None:
    """The same entries give the same bytes (sorted names, mtime 0 in the tar and the gzip
    header), so the committed copy in tune_cache/ changes only when an entry does."""
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w") as tar:
            for name in sorted(files):
                info = tarfile.TarInfo(name)
                info.size = len(files[name])
                tar.addfile(info, io.BytesIO(files[name]))
    tmp.replace(path)


KEPT_TUNE = Path("tune_cache")  # committed copies of .cache/tune-<gpu>.tgz


def merge_tune_cache(returned: Path, cache_dir: Path) -> list[str]:
    """Merge a returned tune-cache tgz into cache_dir/tune-<gpu>.tgz; lines saying what changed."""
    by_gpu: dict[str, dict[str, bytes]] = {}
    lines = []
    skipped = 0
    for name, data in _members(returned).items():
        tag = gpu_tag(_device_of(data))
        if tag is None:
            skipped += 1
            continue
        by_gpu.setdefault(tag, {})[name] = data
    for tag, files in sorted(by_gpu.items()):
        target = cache_dir / f"tune-{tag}.tgz"
        carried = _members(target) if target.is_file() else {}
        new = len(files.keys() - carried.keys())
        _write_tgz(target, {**carried, **files})
        lines.append(f"{target}: {len(carried)} carried + {new} new = {len(carried) + new} entries")
        kept = cache_dir.parent / KEPT_TUNE / target.name
        kept.parent.mkdir(exist_ok=True)
        shutil.copyfile(target, kept)
        lines.append(f"{kept}: copied there to commit (a fresh checkout's .cache/ has none)")
    if skipped:
        lines.append(f"{skipped} entries of no known GPU left out")
    return lines


Member = tuple[tarfile.TarInfo, bytes]


def library_folders(path: Path) -> tuple[dict[str, list[Member]], str | None]:
    """The members of a CUTLASS cache archive by library folder (its top folder), and why the
    read stopped early (None: the archive is whole). Only folders read to their end are kept:
    the one being read when the archive ended is left out. Top-level files (device_env.sh's
    `.from-<sum>` marker) and hidden folders (build.py's `.build-*` scratch) are left out too."""
    folders: dict[str, list[Member]] = {}
    top = ""
    try:
        with tarfile.open(path, "r|xz") as tar:
            for m in tar:
                parts = Path(m.name.removeprefix("./")).parts
                # the archive's own "." folder, top-level files, and nvcc's `.build-*` scratch
                if not parts or parts[0].startswith(".") or (len(parts) < 2 and not m.isdir()):
                    continue
                top = parts[0]
                f = tar.extractfile(m) if m.isfile() else None
                folders.setdefault(top, []).append((m, f.read() if f is not None else b""))
    except (tarfile.TarError, EOFError, lzma.LZMAError, OSError) as e:
        folders.pop(top, None)
        return folders, f"{type(e).__name__}: {e}"
    return folders, None


def write_libraries(path: Path, folders: dict[str, list[Member]]) -> None:
    """A tar.xz of `folders`, packed by `xz -T0` where there is one (every core) and by Python's
    lzma otherwise."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as out:
        xz = shutil.which("xz")
        proc = (
            subprocess.Popen([xz, "-T0", "-6", "-c"], stdin=subprocess.PIPE, stdout=out)
            if xz
            else None
        )
        with tarfile.open(
            fileobj=proc.stdin if proc else out, mode="w|" if proc else "w|xz"
        ) as tar:
            for name in sorted(folders):
                for info, data in folders[name]:
                    tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
        if proc:
            assert proc.stdin is not None
            proc.stdin.close()
            if proc.wait():
                raise OSError(f"xz exited {proc.returncode} packing {path}")
    tmp.replace(path)


def take_back_libraries(libs: Path, target: Path) -> str:
    """Put a returned CUTLASS cache archive in place of the carried one; one line saying how.
    Where the returned one lacks libraries the carried one holds (cut short while packing, or
    from a machine that never unpacked the carried cache: session 59's GEMM call returned an
    empty one), the two are merged, the returned library winning a name both hold."""
    returned, cut = library_folders(libs)
    carried, carried_cut = library_folders(target) if target.is_file() else ({}, None)
    if cut is None and set(carried) <= set(returned):
        target.unlink(missing_ok=True)  # a copied read-only file would refuse the overwrite
        shutil.copyfile(libs, target)
        return f"{target}: replaced ({libs.stat().st_size} bytes)"
    merged = {**carried, **returned}
    if cut is None:
        write_libraries(target, merged)
        kept = len(set(carried) - set(returned))
        return (
            f"{target}: the returned archive lacks {kept} of the {len(carried)} carried "
            f"libraries; merged: {len(merged)} libraries"
        )
    write_libraries(target, merged)
    return (
        f"{target}: the returned archive is cut short ({cut}); its {len(returned)} whole "
        f"libraries merged with the {len(carried)} carried"
        + (f" (the carried one was cut too: {carried_cut})" if carried_cut else "")
        + f": {len(merged)} libraries"
    )


def set_aside_other_rows(root: Path, names: list[str]) -> list[str]:
    """Move aside each local run folder (one with run.json in the archive `names`) whose row files
    are not all in the archive: those rows came from another machine or an earlier start."""
    returned = set(names)
    lines = []
    for run_json in sorted(n for n in names if Path(n).name == "run.json"):
        folder = root / Path(run_json).parent
        local = {f"{Path(run_json).parent}/rows/{p.name}" for p in folder.glob("rows/*.parquet")}
        if not (other := local - returned):
            continue
        n = 1
        while (aside := folder.with_name(f"{folder.name}.aside-{n}")).exists():
            n += 1
        folder.rename(aside)
        lines.append(
            f"{folder.relative_to(root)}: {len(other)} local row files are not in the returned "
            f"run (another machine's, or an earlier start's): moved to {aside.relative_to(root)}"
        )
    return lines


def take_back(files_at: Path, root: Path) -> list[str]:
    cache_dir = root / ".cache"
    cache_dir.mkdir(exist_ok=True)
    lines = []
    if (tune := files_at / "tune-cache.tgz").is_file():
        lines += merge_tune_cache(tune, cache_dir)
    if (libs := files_at / "cutlass.tar.xz").is_file() and libs.stat().st_size:
        lines.append(take_back_libraries(libs, cache_dir / "cutlass.tar.xz"))
    if (results := files_at / "results.tgz").is_file():
        with tarfile.open(results) as tar:
            names = [m.name for m in tar.getmembers() if m.isfile()]
            lines += set_aside_other_rows(root, names)
            tar.extractall(root, filter="data")  # no absolute paths or links out of the tree
        folders = sorted({"/".join(Path(n).parts[:3]) for n in names})
        lines.append(f"results: {len(names)} files into {', '.join(folders)}")
        lines += note_unfinished(root, names)
    return lines or [f"nothing to take back in {files_at}"]


UNFINISHED = Path(".cache") / "unfinished"
RESUME = Path(".cache") / "resume"


def resume_pack(root: Path, run: str) -> Path:
    """Where a run folder (results/_scratch/<folder>/<run>) is packed to resume: one file per run,
    named by its scratch folder and run id."""
    parts = Path(run).parts
    return root / RESUME / f"{parts[-2]}+{parts[-1]}.tar.xz"


def pack_for_resume(root: Path, run: str, folder: str | None = None) -> Path:
    """Pack a run folder (`folder`, default the run's own), paths from the root as `run`
    (results/_scratch/<folder>/<run>), into its resume pack (xz: the rows' JSON and parquet
    shrink about 12x)."""
    target = resume_pack(root, run)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    with tarfile.open(tmp, "w:xz") as tar:
        tar.add(root / (folder or run), arcname=run)
    tmp.replace(target)
    return target


def planned_points(folder: Path) -> int | None:
    """The points a run folder's last start planned; None where its run.json does not say."""
    try:
        history = json.loads((folder / "run.json").read_text()).get("history") or [{}]
        planned = history[-1].get("points_planned")
    except (OSError, ValueError, AttributeError):
        planned = None
    return planned if isinstance(planned, int) else None


def listed_unfinished(root: Path) -> list[str]:
    """The run folders .cache/unfinished lists, in order."""
    ledger = root / UNFINISHED
    return ledger.read_text().split() if ledger.is_file() else []


def write_unfinished(root: Path, listed: list[str]) -> None:
    ledger = root / UNFINISHED
    ledger.parent.mkdir(exist_ok=True)
    ledger.write_text("".join(f"{r}\n" for r in listed))


def note_unfinished(root: Path, names: list[str]) -> list[str]:
    """Add each returned run with fewer rows than planned to .cache/unfinished, drop each whole one."""
    listed = listed_unfinished(root)
    lines = []
    for run_json in sorted(n for n in names if Path(n).name == "run.json"):
        run = str(Path(run_json).parent)
        # a run resumed from committed rows (--resume-committed) comes back with them
        # compacted in rows.parquet beside the new row files: both count (session 104)
        rows, planned = run_rows(root / run), planned_points(root / run)
        if planned is None:
            continue
        if rows < planned:
            if run not in listed:
                listed.append(run)
            pack = pack_for_resume(root, run)
            lines.append(
                f"{run}: {rows} of {planned} rows, unfinished: packed to resume "
                f"({pack.relative_to(root)}, {pack.stat().st_size / 2**20:.2f} MiB; carry .cache)"
            )
        else:
            if run in listed:
                listed.remove(run)
            resume_pack(root, run).unlink(missing_ok=True)
    write_unfinished(root, listed)
    return lines


def run_rows(folder: Path) -> int:
    """Rows of a run folder: its compacted rows.parquet and any row files beside it (pyarrow,
    which this checkout has; the machine never calls this)."""
    import pyarrow.parquet as pq

    compacted = folder / "rows.parquet"
    rows = pq.ParquetFile(compacted).metadata.num_rows if compacted.is_file() else 0
    return rows + len(list(folder.glob("rows/*.parquet")))


def resume_committed(root: Path, run: str) -> str:
    """Pack a run committed unfinished (results/<folder>/<run>, its rows compacted) to resume as
    a call's would be: paths under results/_scratch/<folder>/, listed in .cache/unfinished. A
    fresh checkout has no .cache (session 102's had none of session 101's packs), so the run an
    owed list resumes is packed again from what git holds; a resume of compacted rows measures
    only the missing points (harness/compact.py). Raises ValueError for a run that is whole."""
    folder = root / run
    parts = Path(run).parts
    if len(parts) != 3 or parts[0] != "results" or parts[1] == "_scratch":
        raise ValueError(f"{run}: not a committed run folder, results/<gpu>/<run>")
    if not (folder / "run.json").is_file():
        raise ValueError(f"{run}: no run.json there")
    rows, planned = run_rows(folder), planned_points(folder)
    if planned is None:
        raise ValueError(f"{run}: its run.json names no points_planned")
    if rows >= planned:
        raise ValueError(f"{run}: {rows} of {planned} rows, whole: nothing to resume")
    scratch = f"results/_scratch/{parts[1]}/{parts[2]}"
    target = pack_for_resume(root, scratch, folder=run)
    listed = listed_unfinished(root)
    if scratch not in listed:
        write_unfinished(root, [*listed, scratch])
    return (
        f"{run}: {rows} of {planned} rows: packed to resume as {scratch} "
        f"({target.relative_to(root)}; carry .cache)"
    )


def owed_specs(listed: Path) -> list[list[str]]:
    """Each gpu_measure.sh spec of an owed list (results/<gpu>/owed.specs) as its words, run id
    first; comments as scripts/owed_call.sh reads them: a line that starts with #, or from a #
    after a space (one inside an override's quotes, with no space before it, stays)."""
    specs = []
    for n, line in enumerate(listed.read_text().split("\n"), 1):  # bash's lines: \n only
        text = re.split(r"\s#", line.strip(), maxsplit=1, flags=re.ASCII)[0]
        if not text or text.startswith("#"):
            continue
        try:
            specs.append(shlex.split(text))
        except ValueError as e:  # an unclosed quote: that spec only, as owed_call.sh would
            print(f"warning: {listed}:{n}: {e}; skipped", file=sys.stderr)
    return specs


def owed_runs(root: Path) -> list[str]:
    """results/<gpu>/<run> of every spec in the owed lists, in order."""
    return [
        f"results/{listed.parent.name}/{spec[0]}"
        for listed in sorted((root / "results").glob("*/owed.specs"))
        for spec in owed_specs(listed)
    ]


def resume_owed(root: Path) -> list[str]:
    """Pack to resume (resume_committed) every run an owed list names that was committed
    unfinished and that .cache/unfinished does not list already: a fresh checkout's .cache has
    no pack, and without one the owed call would start the run again (session 111 committed the
    H200's fp8 grid at 153 of 528 points). A listed run keeps the pack its call came back with."""
    listed = set(listed_unfinished(root))
    lines = []
    for run in owed_runs(root):
        _, gpu, name = Path(run).parts
        if f"results/_scratch/{gpu}/{name}" in listed or not (root / run / "run.json").is_file():
            continue
        try:
            lines.append(resume_committed(root, run))
        except ValueError as e:  # whole: it is taken off its list by hand once committed
            lines.append(f"{e}; take it off results/{gpu}/owed.specs")
    return lines


def check_resume(root: Path, run: str) -> str | None:
    """Why a run must not start here (listed unfinished, its folder absent), or None."""
    if run.rstrip("/") in listed_unfinished(root) and not (root / run / "run.json").is_file():
        return (
            f"{run}: an earlier call left it unfinished and its folder is not here; carry .cache "
            f"(take_back.py packed it in {RESUME}) or the folder, or delete its line in "
            f"{UNFINISHED} to start again"
        )
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "files_at", type=Path, nargs="?", help="the folder a run call's files came back in"
    )
    ap.add_argument("--root", type=Path, default=Path("."), help="the checkout (default: here)")
    ap.add_argument(
        "--check-resume",
        metavar="RUN_FOLDER",
        help="on the machine: exit 3 if this run is listed unfinished and its folder is absent",
    )
    ap.add_argument(
        "--resume-committed",
        metavar="RUN_FOLDER",
        help="here: pack a run committed unfinished (results/<gpu>/<run>) to resume from .cache",
    )
    ap.add_argument(
        "--resume-owed",
        action="store_true",
        help="here: --resume-committed for every run the owed lists name that .cache does not list",
    )
    args = ap.parse_args(argv)
    if args.resume_owed:
        print("\n".join(resume_owed(args.root)) or "owed lists: no committed run to resume")
        return 0
    if args.resume_committed:
        try:
            print(resume_committed(args.root, args.resume_committed))
        except (ValueError, OSError) as e:
            print(f"harness: error: {e}", file=sys.stderr)
            return 2
        return 0
    if args.check_resume:
        why = check_resume(args.root, args.check_resume)
        print(why or f"{args.check_resume}: may start", file=sys.stderr if why else sys.stdout)
        return 3 if why else 0
    if args.files_at is None:
        ap.error("files_at: the folder a run call's files came back in is required")
    if not args.files_at.is_dir():
        print(f"no such folder: {args.files_at}", file=sys.stderr)
        return 2
    print("\n".join(take_back(args.files_at, args.root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
