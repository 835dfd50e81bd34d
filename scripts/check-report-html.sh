#!/usr/bin/env bash
# Renders a report.html in headless Chromium and checks that the screenshot
# exists and is not blank, and that the first screen of a 1280x800 window
# holds what a reader wants first: each section FIRST_SCREEN names (by id;
# default "claims headline") starts on it, heading and what follows, and the
# page does not overflow sideways.
# Usage: [FIRST_SCREEN="claims headline"] scripts/check-report-html.sh REPORT.html [SCREENSHOT.png]
# Exits 0 when all of that holds, non-zero otherwise.
set -euo pipefail

html="${1:?usage: $0 REPORT.html [SCREENSHOT.png]}"
shot="${2:-${html%.html}.screenshot.png}"
[ -f "$html" ] || { echo "no such file: $html" >&2; exit 2; }

browser=""
for candidate in chromium chromium-browser google-chrome; do
    if command -v "$candidate" >/dev/null 2>&1; then browser="$candidate"; break; fi
done
if [ -z "$browser" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get install -y chromium >/dev/null
        browser=chromium
    else
        echo "chromium not found; install it (apt-get install -y chromium)" >&2
        exit 2
    fi
fi

abs="$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
rm -f "$shot"
# A private profile keeps runs independent; no network is needed: the report is self-contained.
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$profile" --window-size=1280,2000 \
    --screenshot="$shot" "file://$abs" >/dev/null 2>&1 || true

[ -s "$shot" ] || { echo "no screenshot written: $shot" >&2; exit 1; }

python3 - "$shot" <<'PY'
import struct, sys, zlib

path = sys.argv[1]
data = open(path, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(f"{path}: not a PNG")
pos, idat, width = 8, b"", 0
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, colour = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
if width < 800 or height < 800 or depth != 8 or colour not in (2, 6):
    sys.exit(f"{path}: unexpected image {width}x{height} depth {depth} colour {colour}")
channels = 3 if colour == 2 else 4
stride = width * channels
raw = zlib.decompress(idat)
# undo the PNG row filters to count the pixels that are not background
prev = bytearray(stride)
rows_with_ink, ink = 0, 0
for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - channels] if i >= channels else 0
        b = prev[i]
        c = prev[i - channels] if i >= channels else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    dark = sum(1 for x in range(0, stride, channels) if min(line[x:x + 3]) < 200)
    ink += dark
    rows_with_ink += dark > 0
    prev = line
share = ink / (width * height)
print(f"{path}: {width}x{height}, {rows_with_ink} rows with content, {share:.1%} of pixels dark")
if rows_with_ink < height // 4 or share < 0.005:
    sys.exit(f"{path}: the page looks blank")
PY
# The first screen: a copy of the page with a probe that writes where each
# section starts, read back from the DOM Chromium dumps (the report itself
# carries no script).
probe="$profile/probe.html"
python3 - "$html" "$probe" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
script = """<script>
(function () {
  var at = function (id) {
    var e = document.getElementById(id);
    if (!e) return null;
    var next = e.nextElementSibling;
    return [e.getBoundingClientRect().top, next ? next.getBoundingClientRect().top : null];
  };
  var ids = {};
  document.querySelectorAll('[id]').forEach(function (e) { ids[e.id] = at(e.id); });
  document.body.setAttribute('data-first-screen', JSON.stringify({
    height: window.innerHeight, ids: ids,
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth
  }));
})();
</script>"""
end = page.rfind("</body>")
if end < 0:
    sys.exit(f"{sys.argv[1]}: no </body>")
open(sys.argv[2], "w", encoding="utf-8").write(page[:end] + script + page[end:])
PY
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$profile" --window-size=1280,800 --dump-dom "file://$probe" \
    >"$profile/dom.html" 2>/dev/null || true
FIRST_SCREEN="${FIRST_SCREEN:-claims headline}" python3 - "$html" "$profile/dom.html" <<'PY'
import html, json, os, re, sys
m = re.search(r'data-first-screen="([^"]*)"', open(sys.argv[2], encoding="utf-8").read())
if not m:
    sys.exit(f"{sys.argv[1]}: the first-screen probe did not run")
facts = json.loads(html.unescape(m.group(1)))
height, problems = facts["height"], []
for want in os.environ["FIRST_SCREEN"].split():
    where = facts["ids"].get(want)
    if where is None:
        problems.append(f"no section #{want}")
    elif where[0] >= height or where[1] is None or where[1] >= height:
        problems.append(f"#{want} starts at {where[0]:.0f} px, its content at {where[1]}, below the first {height} px")
if facts["overflow"] > 0:
    problems.append(f"the page overflows sideways by {facts['overflow']} px")
if problems:
    sys.exit(f"{sys.argv[1]}: first screen (1280x800): " + "; ".join(problems))
print(f"{sys.argv[1]}: first screen holds #{', #'.join(os.environ['FIRST_SCREEN'].split())}; no sideways overflow")
PY
echo "ok: $html renders ($shot)"
