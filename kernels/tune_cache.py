"""Tuning decisions kept on disk, so the next process that prepares the same point reuses the
first one's pick instead of timing candidates again.

Why on disk: the harness measures each run in a child process (isolate=true), so an in-process
cache starts empty every run; and two candidates within timing noise of each other can be picked
differently by two processes (an H200, own-triton 16x4096x4096: split-K 4 at 14.7 us in one run,
stream-K at 17.8 us in the next), so an A/A comparison would compare the tuner, not the kernel.

Layout: <dir>/<family>/<digest>.json, one file per decision. A write goes to a temporary file in
the same folder and is renamed over the entry (os.replace), so two processes tuning at once
(sharded runs on two GPUs) never leave a torn file: the last writer wins with a whole decision.

Key (TuneKey): the tuner family, GPU name, driver version, toolchain (Triton, or CUTLASS and
nvcc), a hash of the code of the kernel files the choice depends on (comments and docstrings
aside: source_hash), the problem (shape, dtype, layout, rung:
the tuner's own key) and a hash of the candidate list. Value: which candidate won (its index,
checked against the candidate itself on read), its median ms, how many were tried, the tuner's
per-candidate record, and when and where it was tuned (`host`, and `gpu_uuid`: the GPU that timed
it, which providers report as `tuned_on`). An entry that cannot be read, parsed or matched to its
key is ignored with a warning and re-tuned (then overwritten), never fatal.

$HARNESS_TUNE_CACHE: unset -> $HARNESS_CACHE_DIR/tune, else ~/.cache/kernel-harness/tune (beside
the CUTLASS build cache); a path -> that folder; "off" -> neither read nor written; "refresh" ->
never read, so every point re-tunes, and written (to the default folder).
"""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import functools
import hashlib
import io
import json
import os
import re
import socket
import tempfile
import tokenize
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

KERNELS_DIR = Path(__file__).resolve().parent
SCHEMA = 1  # bump when the entry format changes: older entries then miss
# The GPU each decision this process used was timed on, by entry digest (TuneKey.digest): this
# GPU's UUID for one tuned here, the entry's for one read from disk ("" where unknown: entries
# written before it was recorded, or no GPU). A provider copies it into provider_config
# (`tuned_on`), so a reader can tell a tuner's time taken by an earlier process on the same GPU
# from one taken on another machine of the same name (H200, session 44: one own CUTLASS config
# timed 58.7-66.4 us over eight processes on one machine).
_ORIGIN: dict[str, str] = {}
# The seed of each decision this process timed or read that was seeded (tune_seed.py), by entry
# digest: the seeding GPU and driver, k, how many candidates were timed. save() stores it in the
# decision's record; a provider copies it into provider_config (`tune_seeded_from`).
_SEEDS: dict[str, dict[str, Any]] = {}


def mode() -> str:
    """'on', 'off' (no reads, no writes) or 'refresh' (writes only), from $HARNESS_TUNE_CACHE."""
    env = os.environ.get("HARNESS_TUNE_CACHE", "").strip()
    return env if env in ("off", "refresh") else "on"


def seed_top() -> int:
    """k of seeded tuning (tune_seed.py) from $HARNESS_TUNE_SEED: a whole number above 0, else 0
    (off: every candidate is timed, and a seeded decision on disk is not read)."""
    env = os.environ.get("HARNESS_TUNE_SEED", "").strip()
    return int(env) if env.isdigit() else 0


def note_seed(key: TuneKey, seed: dict[str, Any] | None) -> None:
    """tune_seed.order narrowed `key`'s candidates to `seed`'s (save() records it), or None: it
    times every one (a seed an earlier tune of the key noted no longer holds)."""
    if seed is None:
        _SEEDS.pop(key.digest, None)
    else:
        _SEEDS[key.digest] = seed


def noted_seed(key: TuneKey | None) -> dict[str, Any] | None:
    """The seed noted for `key` (note_seed), or None: its candidates are all timed."""
    return None if key is None else _SEEDS.get(key.digest)


def seeded_from(digest: str | None) -> str:
    """How the decision named `digest` was seeded ("" if it was tuned in full), as a row says it:
    "NVIDIA H100 80GB HBM3 (driver 580.159.04), top 3: 3 of 12 timed"."""
    seed = _SEEDS.get(digest or "")
    if not seed:
        return ""
    return (
        f"{', '.join(seed.get('sources', ['?']))}, top {seed.get('top', '?')}:"
        f" {seed.get('tried', '?')} of {seed.get('of', '?')} timed"
    )


def cache_dir() -> Path:
    """$HARNESS_TUNE_CACHE (a path), else $HARNESS_CACHE_DIR/tune, else ~/.cache/kernel-harness/tune."""
    env = os.environ.get("HARNESS_TUNE_CACHE", "").strip()
    if env and env not in ("off", "refresh"):
        return Path(env).expanduser()
    if root := os.environ.get("HARNESS_CACHE_DIR"):
        return Path(root) / "tune"
    return Path.home() / ".cache" / "kernel-harness" / "tune"


@functools.cache
def source_hash(patterns: tuple[str, ...], root: Path | None = None) -> str:
    """sha256 over the code of the kernel files matching `patterns` (globs under `root`, kernels/
    unless another tree's copy is named: scripts/rekey_tune_cache.py), 16 hex digits. Python
    files count without their comments, docstrings and blank lines (code_text), so a comment
    alone re-tunes nothing; other files (CUDA, headers) count whole."""
    root = KERNELS_DIR if root is None else root
    h = hashlib.sha256()
    for path in sorted({p for pat in patterns for p in root.glob(pat) if p.is_file()}):
        h.update(str(path.relative_to(root)).encode() + b"\0" + code_text(path) + b"\0")
    return h.hexdigest()[:16]


def code_text(path: Path) -> bytes:
    """A kernel file's bytes as the tune-cache key reads them. For Python: the source with every
    comment and docstring cut out, trailing spaces and blank lines dropped (not inside another
    multi-line string, where they are the string's value: inline PTX). ast and tokenize place
    both the same way on Python 3.11 and 3.12 (the CPU box and the GPU image), which an unparsed
    AST would not promise. A file that does not parse counts whole."""
    data = path.read_bytes()
    if path.suffix != ".py":
        return data
    try:
        text = data.decode()
        tree = ast.parse(text)
        docstrings = _docstring_spans(tree)
        cuts = docstrings + _comment_spans(text)
    except (SyntaxError, UnicodeDecodeError, tokenize.TokenError, ValueError):
        return data
    lines = [bytearray(line) for line in data.split(b"\n")]
    for (row0, col0), (row1, col1) in cuts:  # 1-based rows, UTF-8 byte columns; cut to spaces
        for row in range(row0, row1 + 1):
            line = lines[row - 1]
            lo, hi = (col0 if row == row0 else 0), (col1 if row == row1 else len(line))
            line[lo:hi] = b" " * (hi - lo)
    whole, ends = _string_rows(tree, {start for start, _ in docstrings})
    out = []
    for row, line in enumerate(lines, 1):
        if row in whole:  # inside a string: its blank lines and trailing spaces are its value
            out.append(bytes(line))
        elif row in ends:
            out.append(bytes(line[: ends[row]] + line[ends[row] :].rstrip()))
        elif line.strip():
            out.append(bytes(line).rstrip())
    return b"\n".join(out)


def _string_rows(
    tree: ast.Module, docstrings: set[tuple[int, int]]
) -> tuple[set[int], dict[int, int]]:
    """The rows a multi-line string literal (not a docstring) spans: those kept whole (its first
    to its last but one), and its last row's byte column where the literal ends."""
    whole: set[int] = set()
    ends: dict[int, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.JoinedStr | ast.Constant):
            continue
        if isinstance(node, ast.Constant) and not isinstance(node.value, str | bytes):
            continue
        if node.end_lineno is None or node.end_lineno == node.lineno:
            continue
        if (node.lineno, node.col_offset) in docstrings or node.end_col_offset is None:
            continue
        whole.update(range(node.lineno, node.end_lineno))
        ends[node.end_lineno] = max(ends.get(node.end_lineno, 0), node.end_col_offset)
    return whole, ends


Span = tuple[tuple[int, int], tuple[int, int]]


def _docstring_spans(tree: ast.Module) -> list[Span]:
    """Where each module, class and function docstring lies (ast columns are UTF-8 bytes)."""
    spans = []
    for node in ast.walk(tree):
        kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if not isinstance(node, kinds) or not node.body:
            continue
        first = node.body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
            and first.end_lineno is not None
            and first.end_col_offset is not None
        ):
            spans.append(
                ((first.lineno, first.col_offset), (first.end_lineno, first.end_col_offset))
            )
    return spans


def _comment_spans(text: str) -> list[Span]:
    """Where each comment lies, to its line's end (tokenize columns are characters: made bytes)."""
    spans = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            start = len(tok.line[:col].encode())
            spans.append(((row, start), (row, start + len(tok.string.encode()))))
    return spans


@functools.cache
def driver_version() -> str:
    """The GPU driver's version (NVML, else /proc/driver/nvidia/version, else HIP's), or 'none'."""
    try:
        import pynvml

        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else str(v)
    except Exception:  # no NVML here: try the kernel module's own line
        pass
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
        if m := re.search(r"Kernel Module\s+(\S+)", text):
            return m.group(1)
    except OSError:
        pass
    import torch

    return f"hip {torch.version.hip}" if torch.version.hip else "none"


def gpu_uuid() -> str:
    """The current GPU's UUID as the harness writes it in device_uuid ("GPU-..." on NVIDIA, the
    bare UUID on ROCm), or "" without one."""
    try:
        import torch

        if not torch.cuda.is_available():
            return ""
        return _uuid_of(torch.cuda.current_device())
    except Exception:  # noqa: BLE001 - a provenance detail, never worth failing a tune for
        return ""


@functools.cache
def _uuid_of(index: int) -> str:
    import torch

    uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
    if uuid is None:
        return ""
    return str(uuid) if torch.version.hip else f"GPU-{uuid}"


def tuned_on(digest: str | None) -> str:
    """The UUID of the GPU that timed the decision named `digest` (see _ORIGIN), or "". A
    choice made in stages names each stage's entry, comma-separated (own Triton's split-KV
    decode: its tile and its split): their GPU if all name the same one, else ""."""
    origins = {_ORIGIN.get(part, "") for part in (digest or "").split(",")}
    return origins.pop() if len(origins) == 1 else ""


def triton_toolchain() -> str:
    import triton

    return f"triton {triton.__version__}"


def _plain(x: Any) -> Any:
    """JSON-able form of a candidate: dataclasses as dicts, tuples as lists, the rest as str."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if x is None or isinstance(x, bool | int | float | str):
        return x
    return str(x)


def describe(candidate: Any) -> str:
    """Canonical text of one candidate (what an entry's choice is checked against)."""
    return json.dumps(_plain(candidate), sort_keys=True)


def _digest(text: str, digits: int = 16) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:digits]


@dataclass(frozen=True)
class TuneKey:
    """Everything a tuning decision depends on; two processes agree on it for the same point."""

    family: str  # "triton-gemm" | "triton-attention" | "cutlass-gemm"
    device: str  # GPU name, e.g. "NVIDIA H200"
    driver: str  # e.g. "570.86.15"
    toolchain: str  # e.g. "triton 3.6.0", "cutlass 4.2.0, nvcc 12.8.93"
    source_hash: str  # of the kernel files the choice depends on
    problem: str  # repr of the tuner's key: shapes, dtypes, layout, rung
    candidates: str  # hash of the candidate list, in order

    @property
    def digest(self) -> str:
        """20 hex digits naming the entry file (and recorded in provider_config as tune_key)."""
        return _digest(json.dumps(asdict(self), sort_keys=True), 20)

    @property
    def path(self) -> Path:
        return cache_dir() / self.family / f"{self.digest}.json"


def make_key(
    family: str,
    device: str,
    problem: tuple,
    candidates: Sequence[Any],
    *,
    toolchain: str,
    sources: tuple[str, ...],
) -> TuneKey | None:
    """The key of one decision, or None when the cache is off."""
    if mode() == "off":
        return None
    return TuneKey(
        family=family,
        device=device,
        driver=driver_version(),
        toolchain=toolchain,
        source_hash=source_hash(sources),
        problem=repr(problem),
        candidates=_digest("\n".join(describe(c) for c in candidates)),
    )


@dataclass
class Decision:
    """A decision read back from disk."""

    index: int  # of the chosen candidate in the list the key hashed
    tuned_ms: float
    candidates_tried: int
    record: dict[str, Any] = field(default_factory=dict)  # the tuner's own (timings, rejects)
    tuned_at: str = ""
    host: str = ""
    gpu_uuid: str = ""  # of the GPU that timed it ("" in entries older than the field)


def load(key: TuneKey | None, candidates: Sequence[Any]) -> Decision | None:
    """The stored decision for `key`, or None: absent, cache off or refreshing, or unusable (a
    warning says why; the caller re-tunes and overwrites it)."""
    if key is None or mode() != "on":
        return None
    path = key.path
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:  # ValueError: not UTF-8
        warnings.warn(f"tune cache: cannot read {path} ({e}); re-tuning", stacklevel=3)
        return None
    try:
        entry = json.loads(text)
        if entry.get("schema") != SCHEMA or entry.get("key") != asdict(key):
            raise ValueError("schema or key differs from this point's")
        index = int(entry["choice_index"])
        if not 0 <= index < len(candidates) or describe(candidates[index]) != entry["choice"]:
            raise ValueError("the chosen config is not this point's candidate")
        found = Decision(
            index,
            float(entry["tuned_ms"]),
            int(entry["candidates_tried"]),
            dict(entry.get("record") or {}),
            str(entry.get("tuned_at", "")),
            str(entry.get("host", "")),
            str(entry.get("gpu_uuid", "")),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        warnings.warn(f"tune cache: ignoring {path} ({e}); re-tuning", stacklevel=3)
        return None
    seed = found.record.get("seeded_from")
    # a narrowed search: with seeding off, or a wider k now, the point is tuned again
    if seed and (seed_top() <= 0 or not isinstance(seed, dict) or seed.get("top", 0) < seed_top()):
        return None
    _ORIGIN[key.digest] = found.gpu_uuid
    if seed:
        _SEEDS[key.digest] = seed
    else:
        _SEEDS.pop(key.digest, None)
    return found


def save(
    key: TuneKey | None,
    candidates: Sequence[Any],
    index: int,
    tuned_ms: float,
    record: dict[str, Any] | None = None,
) -> None:
    """Store the decision (atomically: temporary file, then rename); a failed write warns only.
    Either way this process knows the decision was timed on this GPU (tuned_on)."""
    if key is None:
        return
    _ORIGIN[key.digest] = gpu_uuid()
    if mode() == "off":
        return
    seed = _SEEDS.get(key.digest)
    if seed is not None:
        record = dict(record or {}, seeded_from=seed)
    entry = {
        "schema": SCHEMA,
        "key": asdict(key),
        "choice_index": index,
        "choice": describe(candidates[index]),
        "tuned_ms": tuned_ms,
        "candidates_tried": seed["tried"] if seed is not None else len(candidates),
        "record": _plain(record or {}),
        "tuned_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "gpu_uuid": _ORIGIN[key.digest],
    }
    path = key.path
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp", delete=False
        ) as f:
            tmp = f.name
            json.dump(entry, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except OSError as e:
        warnings.warn(f"tune cache: cannot write {path} ({e}); not cached", stacklevel=3)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
