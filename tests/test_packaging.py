"""Every package folder is listed in pyproject.toml, so a non-editable install ships it too."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    found = set()
    for name, folder in cfg["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *rel)))
    assert found == listed, f"missing: {sorted(found - listed)}, stale: {sorted(listed - found)}"


def test_the_kernel_hash_covers_the_kernels_that_are_imported(tmp_path, monkeypatch):
    """The rows' kernel_source_hash describes the harness_kernels that runs: an editable install
    maps it to its own checkout, which a second clone's `harness` on PYTHONPATH does not own."""
    import importlib.machinery
    import importlib.util

    from harness import provenance

    here = importlib.util.find_spec("harness_kernels")
    assert (
        here is not None
        and provenance.KERNELS_DIR == Path(next(iter(here.submodule_search_locations))).resolve()
    )
    elsewhere = importlib.machinery.ModuleSpec("harness_kernels", None, is_package=True)
    elsewhere.submodule_search_locations = [str(tmp_path)]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: elsewhere)
    assert provenance._kernels_dir() == tmp_path.resolve()
