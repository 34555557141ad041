#!/usr/bin/env python3
"""Checks a facekit report.html and the PNG a browser rendered of it.

usage: check_report.py REPORT_HTML PNG [--events N] [--manifest EXPORT_DIR] [--thumbnails] [--crop]

The HTML is parsed with html.parser (not searched as text): it must hold exactly the plots the
report draws (one <svg class="plot"> per AU, head pose, distance, coverage, frame intervals,
drops: 19), no <script> element and no attribute that fetches anything (src/href other than a
data: URI or a fragment), N marker lines (<line class="marker">) in each AU timeline when N
markers fall within the session, and, with --manifest, be listed in the export's manifest with
its size and SHA-256. The PNG must be an image of the page: not empty, not one colour, with
ink spread over its height (plots drawn, not a blank page or an error page), and the markers'
red somewhere when there are markers. Exits non-zero naming the first failure.
"""
import argparse, hashlib, json, os, sys
from html.parser import HTMLParser

import cv2
import numpy as np

AUS = ["au1", "au2", "au4", "au5", "au6", "au7", "au9", "au12", "au14", "au15", "au16", "au20", "au23", "au26"]
PLOTS = [f"au-{a}" for a in AUS] + ["head-pose", "distance", "coverage", "intervals", "drops"]


def fail(msg):
    print(f"FAIL {msg}")
    sys.exit(1)


class Report(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.plots = []          # ids of <svg class="plot">, in order
        self.svg_depth = 0
        self.current = None      # id of the plot being read
        self.markers = {}        # plot id -> marker lines
        self.scripts = 0
        self.fetching = []       # (tag, attribute, value) that would load something
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        for name in ("src", "href", "xlink:href", "action", "data", "poster", "srcset"):
            v = a.get(name)
            if v is not None and not (v.startswith("data:") or v.startswith("#")):
                self.fetching.append((tag, name, v))
        if tag == "link" or tag == "iframe" or tag == "object" or tag == "embed":
            self.fetching.append((tag, "", ""))
        if tag == "svg":
            self.svg_depth += 1
            if "plot" in (a.get("class") or "").split():
                self.plots.append(a.get("id"))
                self.current = a.get("id")
        if tag == "line" and self.current and "marker" in (a.get("class") or "").split():
            self.markers[self.current] = self.markers.get(self.current, 0) + 1

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg_depth -= 1
            if self.svg_depth == 0:
                self.current = None

    def handle_data(self, data):
        self.text.append(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("html")
    ap.add_argument("png")
    ap.add_argument("--events", type=int, default=0, help="markers inside the session")
    ap.add_argument("--manifest", help="the export directory whose manifest must list the report")
    ap.add_argument("--thumbnails", action="store_true", help="the session captured images")
    ap.add_argument("--crop", action="store_true",
                    help="first cut the white below the page from the PNG (rendered in a tall window), in place")
    a = ap.parse_args()

    raw = open(a.html, "rb").read()
    r = Report()
    r.feed(raw.decode("utf-8"))
    r.close()
    if r.plots != PLOTS:
        fail(f"{a.html}: plots {r.plots}, expected the {len(PLOTS)} plots {PLOTS}")
    if r.scripts:
        fail(f"{a.html}: {r.scripts} <script> elements")
    if r.fetching:
        fail(f"{a.html}: would fetch {r.fetching[:3]}")
    for p in PLOTS[:14]:
        if r.markers.get(p, 0) != a.events:
            fail(f"{a.html}: {r.markers.get(p, 0)} marker lines in {p}, expected {a.events}")
    text = " ".join(r.text)
    for word in ("Participant", "Model SHA-256", "facekit version", "Tracking coverage", "Frame intervals"):
        if word not in text:
            fail(f"{a.html}: no '{word}' in the text")
    if a.thumbnails and raw.count(b'src="data:image/jpeg;base64,') == 0:
        fail(f"{a.html}: the session has images but the report no thumbnail")
    print(f"ok {a.html}: {len(r.plots)} plots, {a.events} markers in each AU timeline, no script, nothing fetched ({len(raw)} bytes)")

    if a.manifest:
        man = json.load(open(os.path.join(a.manifest, "manifest.json")))
        e = {f["path"]: f for f in man["files"]}.get("report.html")
        if e is None:
            fail(f"{a.manifest}: manifest.json does not list report.html")
        if e["size"] != len(raw) or e["sha256"] != hashlib.sha256(raw).hexdigest():
            fail(f"{a.manifest}: report.html differs from its manifest entry")
        print(f"ok {a.manifest}: report.html in the manifest with its size and SHA-256")

    if os.path.getsize(a.png) == 0:
        fail(f"{a.png} is empty")
    img = cv2.imread(a.png, cv2.IMREAD_COLOR)
    if img is None:
        fail(f"{a.png} is not a PNG that decodes")
    if a.crop:
        rows = np.nonzero(np.any(img < 250, axis=(1, 2)))[0]
        if len(rows) == 0:
            fail(f"{a.png}: blank (every pixel white)")
        if rows[-1] + 1 >= img.shape[0]:
            fail(f"{a.png}: the page runs past the window's bottom; render it taller")
        img = img[: rows[-1] + 17]
        cv2.imwrite(a.png, img)
    h, w, _ = img.shape
    ink = np.any(img < 235, axis=2)              # anything visibly darker than the white page
    share = ink.mean()
    colours = len(np.unique(img.reshape(-1, 3)[:: max(1, h * w // 200000)], axis=0))
    if share < 0.02 or colours < 16:
        fail(f"{a.png}: blank ({share:.2%} ink, {colours} colours)")
    # Plots all the way down: ink in most horizontal bands of the page.
    bands = [ink[y:y + h // 20].mean() > 0.002 for y in range(0, h - h // 20 + 1, h // 20)]
    if sum(bands) < 0.7 * len(bands):
        fail(f"{a.png}: ink in only {sum(bands)} of {len(bands)} bands; the page did not render whole")
    if a.events:
        b, g, rr = (img[..., k].astype(int) for k in range(3))
        red = (rr > 150) & (g < 90) & (b < 90)
        if red.sum() < 50:
            fail(f"{a.png}: no red marker lines drawn")
    print(f"ok {a.png}: {w}x{h}, {share:.1%} ink, {colours} colours, ink in {sum(bands)}/{len(bands)} bands")


if __name__ == "__main__":
    main()
