"""The attention tuners' source sets (attention_tune.PREFILL_SOURCES, DECODE_SOURCES): each holds
every kernels/ file its tuner imports, so a change to any of them re-tunes, and decode's holds
none of the Gluon FMHA's, so a change there keeps decode's tune entries (session 105)."""

from __future__ import annotations

import re
from pathlib import Path

from harness_kernels import tune_cache
from harness_kernels.triton import attention_tune

KERNELS = tune_cache.KERNELS_DIR
# "from .attention_configs import ...", "from .. import capped_retime, tune_cache",
# "from ..bench_cold import ..." (kernels/triton/ files only)
_FROM = re.compile(r"^\s*from (\.+)([A-Za-z_]*) import \(?([A-Za-z_, ]*)", re.MULTILINE)


def _imports(path: Path) -> set[Path]:
    out = set()
    for dots, module, names in _FROM.findall(path.read_text()):
        base = path.parent if dots == "." else path.parent.parent
        targets = [module] if module else [n.strip() for n in names.split(",") if n.strip()]
        out |= {base / f"{t}.py" for t in targets if (base / f"{t}.py").is_file()}
    return out


def _closure(roots: list[str]) -> set[str]:
    seen: set[Path] = set()
    todo = [KERNELS / r for r in roots]
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo += _imports(path)
    return {str(p.relative_to(KERNELS)) for p in seen}


def _files(sources: tuple[str, ...]) -> set[str]:
    return {str(p.relative_to(KERNELS)) for pat in sources for p in KERNELS.glob(pat)}


def test_each_set_holds_every_file_its_tuner_imports():
    # tune_cache.py is the cache itself, not a decision's input (never in a source set)
    decode = _closure(["triton/attention_decode.py"]) - {"tune_cache.py"}
    prefill = _closure(
        ["triton/attention_prefill.py", "triton/attention_gluon.py", "triton/attention_choice.py"]
    ) - {"tune_cache.py", "triton/kernel_choice.py"}  # the choice's own set adds kernel_choice.py
    assert decode <= _files(attention_tune.DECODE_SOURCES), decode - _files(
        attention_tune.DECODE_SOURCES
    )
    assert prefill <= _files(attention_tune.PREFILL_SOURCES), prefill - _files(
        attention_tune.PREFILL_SOURCES
    )


def test_the_gluon_fmha_is_not_in_decodes_set_nor_a_decode_kernel_in_prefills():
    decode, prefill = _files(attention_tune.DECODE_SOURCES), _files(attention_tune.PREFILL_SOURCES)
    assert "triton/attention_gluon_kernel.py" in prefill
    assert "triton/attention_gluon_kernel.py" not in decode
    assert not {f for f in prefill if f.startswith("triton/attention_decode")}
    assert tune_cache.source_hash(attention_tune.DECODE_SOURCES) != tune_cache.source_hash(
        attention_tune.PREFILL_SOURCES
    )
