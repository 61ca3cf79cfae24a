"""The report in a real browser: headless Chromium (Debian's `chromium`) loads index.html with no
script or resource errors, every <img> decodes, no figure is wider than its box (at a desktop
and a narrow window), and screenshots of the synthetic report and of the committed reports/hopper
(saved under tmp_path) are not blank."""

import html
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
# console.error calls; on load, writes into the DOM what it saw, how many images decoded, every
# figure whose image does not fit its box (wider than the <figure>, past the window's right
# edge, the figure scrolling sideways, or the image squashed), and the page's size.
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
  var root = document.documentElement, overflow = [];
  Array.prototype.forEach.call(document.querySelectorAll("figure"), function (f) {
    var img = f.querySelector("img");
    if (!img) { return; }
    var name = img.getAttribute("src"), box = f.getBoundingClientRect(), r = img.getBoundingClientRect();
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5) { overflow.push(name + ": wider than its figure (" + r.width + " > " + box.width + ")"); }
    if (r.right > root.clientWidth + 0.5) { overflow.push(name + ": past the window's right edge"); }
    if (f.scrollWidth > f.clientWidth) { overflow.push(name + ": its figure scrolls sideways"); }
    if (img.naturalWidth > 0 && Math.abs(r.width / r.height - img.naturalWidth / img.naturalHeight) > 0.02 * img.naturalWidth / img.naturalHeight) {
      overflow.push(name + ": squashed");
    }
  });
  var d = document.createElement("div");
  d.id = "probe";
  d.setAttribute("data-result", JSON.stringify({images: imgs.length, loaded: loaded, errors: window.__errors,
    overflow: overflow, figures: document.querySelectorAll("figure").length,
    page: {width: root.scrollWidth, window: root.clientWidth, height: root.scrollHeight}}));
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


def _probe(report_dir, tmp_path, extra: str = "", width: int = 1280):
    """Load index.html with the probe (and `extra` markup) in Chromium in a window `width` CSS
    pixels wide: (result, stderr)."""
    page = (report_dir / "index.html").read_text()
    head = '<meta charset="utf-8">'
    assert head in page
    probe = report_dir / "_probe.html"  # beside index.html, so relative paths resolve alike
    probe.write_text(page.replace(head, head + PROBE, 1).replace("</body>", extra + "</body>"))
    try:
        run = _chromium(
            f"--window-size={width},2400",
            "--virtual-time-budget=15000",
            "--dump-dom",
            probe.as_uri(),
            tmp_path=tmp_path,
        )
    finally:
        probe.unlink()
    m = re.search(r'<div id="probe" data-result="([^"]*)"', run.stdout)
    assert m, f"probe did not report (rc {run.returncode}): {run.stderr[-2000:]}"
    return json.loads(html.unescape(m.group(1))), run.stderr


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


@pytest.mark.parametrize("width", [1280, 800])
def test_no_figure_overflows_its_box(built, tmp_path, width):
    result, _ = _probe(built.out_dir, tmp_path, width=width)
    assert result["figures"] == len(built.figures)
    assert result["overflow"] == [], result["overflow"]


def test_probe_sees_a_figure_wider_than_its_box(built, tmp_path):
    """The check above can fail: with the images' max-width taken away, a 600-pixel window
    leaves every figure wider than 600 pixels sticking out of its box."""
    result, _ = _probe(
        built.out_dir, tmp_path, "<style>figure img { max-width: none; }</style>", width=600
    )
    wide = [f for f in built.figures if _png_width(f.png) > 600]
    assert wide, "the synthetic report has no figure wider than 600 pixels"
    for f in wide:
        assert any(f.png.name in o and "wider than its figure" in o for o in result["overflow"])


def _png_width(path) -> int:
    from PIL import Image

    with Image.open(path) as img:
        return img.size[0]


def _screenshot(index, shot, tmp_path, width: int = 1280, height: int = 2400):
    """A screenshot of `index` in a `width` x `height` window; returns it in grey levels."""
    from PIL import Image

    run = _chromium(
        f"--screenshot={shot}",
        f"--window-size={width},{height}",
        "--virtual-time-budget=15000",
        index.as_uri(),
        tmp_path=tmp_path,
    )
    assert shot.exists(), run.stderr[-2000:]
    img = Image.open(shot).convert("L")
    assert img.size == (width, height)
    return img


def _not_blank(img) -> None:
    from PIL import ImageStat

    assert ImageStat.Stat(img).stddev[0] > 20  # text, axes and markers, not one flat colour
    dark = sum(img.histogram()[:200]) / (img.size[0] * img.size[1])
    assert 0.01 < dark < 0.6, dark


@pytest.mark.parametrize("name", ["hopper"])
def test_committed_report_loads_fits_and_screenshots(tmp_path, name):
    """reports/<name> (rendered from the committed rows) as committed: every image loads, no
    figure overflows its box at 1280 or 800 pixels, the page does not scroll sideways at 1280,
    and a screenshot of the whole page (tmp_path/<name>.png) is not blank."""
    committed = Path(__file__).resolve().parents[2] / "reports" / name
    if not (committed / "index.html").exists():
        pytest.skip(f"reports/{name} not in this checkout")
    copy = tmp_path / name
    shutil.copytree(committed, copy)
    result, _ = _probe(copy, tmp_path)
    assert result["errors"] == [] and result["images"] > 0
    assert result["loaded"] == result["images"] == result["figures"]
    assert result["overflow"] == [], result["overflow"]
    assert result["page"]["width"] <= result["page"]["window"], result["page"]
    narrow, _ = _probe(copy, tmp_path, width=800)
    assert narrow["overflow"] == [], narrow["overflow"]
    height = min(int(result["page"]["height"]), 30000)
    _not_blank(_screenshot(copy / "index.html", tmp_path / f"{name}.png", tmp_path, height=height))


def test_report_screenshot_is_not_blank(built, tmp_path):
    _not_blank(_screenshot(built.out_dir / "index.html", tmp_path / "shot.png", tmp_path))


def test_linked_svgs_parse(built):
    html = (built.out_dir / "index.html").read_text()
    svgs = re.findall(r'href="(figures/[^"]+\.svg)"', html)
    assert len(svgs) == len(built.figures)
    for rel in svgs:
        root = ET.parse(built.out_dir / rel).getroot()
        assert root.tag.endswith("svg")
