"""The README's main command on a machine without a GPU: the smoke sweep, then its report."""

from harness import store
from harness.cli import main


def test_main_job_on_cpu_measures_and_reports(tmp_path, capsys):
    args = [
        "main",
        "device=cpu",
        "providers=[torch-cpu,sdpa-math]",
        "progress=false",
        f"results_dir={tmp_path / 'results'}",
        "run_id=m",
        f"report_dir={tmp_path / 'report'}",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "CPU (Triton interpreter / torch CPU): not GPU numbers" in out
    assert out.count("report: ") == 1
    assert " MFLOP/s |" in out or " GFLOP/s |" in out  # rates with an SI unit, not 1.2e-06
    rows = store.read_rows(tmp_path / "results" / "m")
    assert len(rows) == 12 and (rows.device_type == "cpu").all() and set(rows.status) == {"ok"}
    html = (tmp_path / "report" / "index.html").read_text()
    assert "<img" in html and rows.device_name.iloc[0] in html
