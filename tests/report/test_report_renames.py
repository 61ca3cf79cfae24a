"""load() gives rows written before a rung became its provider's default today's names, per
tree (RENAMED_AT), and keeps the written name; rows of other trees keep theirs."""

from report_fixtures import speed_row, write_run

from harness.report import data

ATTN = {
    **{"batch": 4, "q_heads": 32, "kv_heads": 8, "q_len": 4096, "kv_len": 4096},
    **{"head_dim": 128, "causal": True, "dtype": "bf16", "kv_layout": "dense", "page_size": 0},
}


def _rows(run: str, sha: str, providers: list[str]) -> list[dict]:
    out = []
    for name in providers:
        row = speed_row("h200", "attention", ATTN, name, run, median_ms=1.0)
        row["git_sha"] = sha
        out.append(row)
    return out


def test_a_tree_in_renamed_at_reads_in_todays_names(tmp_path):
    # session 62's fmha_prefill-dyn-s62 (ce7e05b): fa3 was the static schedule, fa3-dynamic
    # session 62's final fa3, today's fa3-t128 (fa3 took FA3's tile shapes in session 63), as
    # is the fa3 of 7cc8bf9; a run of today's tree keeps its names
    before = "ce7e05bb440dace82f9c5d2efc9815900c323883"
    write_run(tmp_path, "dyn", _rows("dyn", before, ["own-cutlass-fa3", "own-cutlass-fa3-dynamic"]))
    write_run(tmp_path, "s62", _rows("s62", "7cc8bf9" + "0" * 33, ["own-cutlass-fa3"]))
    write_run(tmp_path, "now", _rows("now", "f" * 40, ["own-cutlass-fa3"]))
    df = data.load([tmp_path])
    got = {(r.run_id, r.provider_recorded): r.provider for r in df.itertuples()}
    assert got == {
        ("dyn", "own-cutlass-fa3"): "own-cutlass-fa3-static",
        ("dyn", "own-cutlass-fa3-dynamic"): "own-cutlass-fa3-t128",
        ("s62", "own-cutlass-fa3"): "own-cutlass-fa3-t128",
        ("now", "own-cutlass-fa3"): "own-cutlass-fa3",
    }


def test_every_rename_names_a_provider_of_today_or_a_retired_rung_of_one():
    from harness.providers import load_all

    names = set(load_all().names("attention"))
    for prefix, renames in data.RENAMED_AT.items():
        assert len(prefix) >= 7
        for new in renames.values():
            assert new in names or any(new.startswith(f"{n}-") for n in names), new
