"""The report in a real browser: headless Chromium (Debian's `chromium`) loads index.html with no
script or resource errors, every <img> decodes, and a screenshot is not blank."""

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="needs chromium (apt-get install chromium)"
)

# Runs first in <head>: records script errors, failed resource loads (capture phase) and
# console.error calls; on load, writes what it saw and how many images decoded into the DOM.
PROBE = """<script>
window.__errors = [];
window.addEventListener("error", function (e) {
  var t = e.target || {};
  window.__errors.push(e.message || ("failed to load " + (t.src || t.href || t.tagName)));
}, true);
window.addEventListener("unhandledrejection", function (e) { window.__errors.push("rejection"); });
var _consoleError = console.error;
console.error = function () { window.__errors.push([].join.call(arguments, " ")); _consoleError.apply(console, arguments); };
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var loaded = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  var d = document.createElement("div");
  d.id = "probe";
  d.setAttribute("data-result", JSON.stringify({images: imgs.length, loaded: loaded, errors: window.__errors}));
  document.body.appendChild(d);
});
</script>"""


def _chromium(*args, tmp_path):
    cmd = [
        CHROMIUM,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={tmp_path / 'profile'}",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _probe(report_dir, tmp_path, extra: str = ""):
    """Load index.html with the probe (and `extra` markup) in Chromium: (result, stderr)."""
    page = (report_dir / "index.html").read_text()
    head = '<meta charset="utf-8">'
    assert head in page
    probe = report_dir / "_probe.html"  # beside index.html, so relative paths resolve alike
    probe.write_text(page.replace(head, head + PROBE, 1).replace("</body>", extra + "</body>"))
    try:
        run = _chromium(
            "--virtual-time-budget=15000", "--dump-dom", probe.as_uri(), tmp_path=tmp_path
        )
    finally:
        probe.unlink()
    m = re.search(r'<div id="probe" data-result="([^"]*)"', run.stdout)
    assert m, f"probe did not report (rc {run.returncode}): {run.stderr[-2000:]}"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&")), run.stderr


def test_probe_sees_a_missing_image_and_a_script_error(built, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(built.out_dir, broken)
    first = built.figures[0].png.name
    (broken / "figures" / first).unlink()
    result, _ = _probe(broken, tmp_path, "<script>notDefinedAnywhere();</script>")
    assert result["loaded"] == result["images"] - 1
    assert any(first in e for e in result["errors"]), result["errors"]
    assert any("notDefinedAnywhere" in e for e in result["errors"]), result["errors"]


def test_report_loads_in_chromium_without_errors(built, tmp_path):
    result, stderr = _probe(built.out_dir, tmp_path)
    assert result["errors"] == [], result["errors"]
    assert result["images"] == len(built.figures) and result["loaded"] == result["images"]
    console = [ln for ln in stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert console == [], console


def test_committed_h200_report_loads_without_errors(tmp_path):
    """reports/h200 (rendered from the committed H200 rows) as committed: every image loads."""
    committed = Path(__file__).resolve().parents[2] / "reports/h200"
    if not (committed / "index.html").exists():
        pytest.skip("reports/h200 not in this checkout")
    copy = tmp_path / "h200"
    shutil.copytree(committed, copy)
    result, _ = _probe(copy, tmp_path)
    assert result["errors"] == [] and result["images"] > 0
    assert result["loaded"] == result["images"]


def test_report_screenshot_is_not_blank(built, tmp_path):
    from PIL import Image, ImageStat

    shot = tmp_path / "shot.png"
    run = _chromium(
        f"--screenshot={shot}",
        "--window-size=1280,2400",
        "--virtual-time-budget=15000",
        (built.out_dir / "index.html").as_uri(),
        tmp_path=tmp_path,
    )
    assert shot.exists(), run.stderr[-2000:]
    img = Image.open(shot).convert("L")
    assert img.size == (1280, 2400)
    assert ImageStat.Stat(img).stddev[0] > 20  # text, axes and markers, not one flat colour
    dark = sum(img.histogram()[:200]) / (img.size[0] * img.size[1])
    assert 0.01 < dark < 0.6, dark


def test_linked_svgs_parse(built):
    html = (built.out_dir / "index.html").read_text()
    svgs = re.findall(r'href="(figures/[^"]+\.svg)"', html)
    assert len(svgs) == len(built.figures)
    for rel in svgs:
        root = ET.parse(built.out_dir / rel).getroot()
        assert root.tag.endswith("svg")
