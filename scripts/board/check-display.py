#!/usr/bin/env python3
"""Checks the kiosk's screenshots from the emulated board by content (scripts/tests/49-display-board.sh).

    check-display.py SCREENS_DIR EXPECTED_JSON

EXPECTED_JSON: {"box": [x0, y0, x1, y1]} the face's landmark box (normalised) in the clip, from
`facekit process` on the host. For each state's screenshot: the state banner has that state's
colour (Display/StatusRenderer.swift's palette); the camera preview is not blank; the face box
(pure green) surrounds the face where the clip has it; the framing screenshot shows the framing
check's coloured squares; the fbdev demo's banner; the exporting screenshot the progress bar's fill. Prints one PASS/FAIL line per check; exit status 1 on any failure.
"""
import json, sys
from PIL import Image

BANNER = {"framing": 0x1B5E20, "recording": 0xB71C1C, "paused": 0xE65100, "exporting": 0x0D47A1,
          "exported": 0x1B5E20, "error": 0x6A1B9A, "fbdev": 0x1B5E20}
BOX = (0x00, 0xFF, 0x00)
LEVELS = [(0x2E, 0xB8, 0x4B), (0xFF, 0xA0, 0x00), (0xD3, 0x2F, 0x2F)]
failed = 0


def check(what, ok, detail=""):
    global failed
    print(f"{'PASS' if ok else 'FAIL'}: display: {what}{': ' + detail if detail else ''}")
    failed += 0 if ok else 1


def layout(w, h, title_h=32):
    """StatusRenderer.Layout and the preview placement, for a 640x480 camera."""
    margin = max(4, w // 64)
    banner = max(title_h + 8, h // 7)
    px0, py0 = margin, banner + margin
    pw_area = (w - 3 * margin) * 56 // 100
    ph_area = h - py0 - margin
    fw, fh = max(1, pw_area // 2), max(1, ph_area // 2)
    s = min(fw / 640, fh / 480, 1)
    pw, ph = int(640 * s + 1e-9), int(480 * s + 1e-9)
    k = max(1, min(pw_area // pw, ph_area // ph))
    x = px0 + (pw_area - pw * k) // 2
    y = py0 + (ph_area - ph * k) // 2
    return dict(banner=banner, area=(px0, py0, pw_area, ph_area), preview=(x, y, pw * k, ph * k),
                panel_x=px0 + pw_area + margin)


def main():
    shots, expected = sys.argv[1], json.load(open(sys.argv[2]))
    for name, colour in BANNER.items():
        try:
            im = Image.open(f"{shots}/{name}.png").convert("RGB")
        except OSError as e:
            check(f"{name}: screenshot", False, str(e)); continue
        w, h = im.size
        L = layout(w, h)
        px = im.load()
        got = px[w - 3, 4]
        want = ((colour >> 16) & 255, (colour >> 8) & 255, colour & 255)
        check(f"{name}: banner colour", got == want, f"{got} expected {want}")
        x, y, pw, ph = L["preview"]
        region = im.crop((x, y, x + pw, y + ph))
        colours = len(region.getcolors(1 << 24))
        if name == "fbdev":
            continue  # the demo's first tracked frame may not be on screen yet under TCG
        check(f"{name}: preview not blank", colours > 200, f"{colours} distinct colours in the {pw}x{ph} preview")
        greens = [(i, j) for j in range(y, y + ph) for i in range(x, x + pw) if px[i, j] == BOX]
        if name in ("framing", "recording", "paused"):
            if not greens:
                check(f"{name}: face box", False, "no box pixels in the preview"); continue
            gx0, gx1 = min(g[0] for g in greens), max(g[0] for g in greens)
            gy0, gy1 = min(g[1] for g in greens), max(g[1] for g in greens)
            ex0, ey0, ex1, ey1 = (x + expected["box"][0] * pw, y + expected["box"][1] * ph,
                                  x + expected["box"][2] * pw, y + expected["box"][3] * ph)
            centre_off = max(abs((gx0 + gx1) / 2 - (ex0 + ex1) / 2) / pw, abs((gy0 + gy1) / 2 - (ey0 + ey1) / 2) / ph)
            size = ((gx1 - gx0) / max(ex1 - ex0, 1), (gy1 - gy0) / max(ey1 - ey0, 1))
            check(f"{name}: face box around the clip's face", centre_off < 0.08 and all(0.75 < s < 1.35 for s in size),
                  f"box x {gx0}..{gx1} y {gy0}..{gy1}, face x {ex0:.0f}..{ex1:.0f} y {ey0:.0f}..{ey1:.0f} "
                  f"(centre off by {centre_off:.1%} of the preview, size ratio {size[0]:.2f} x {size[1]:.2f})")
        if name == "exporting":
            bar = sum(n for n, p in im.crop((L["panel_x"], 0, w, h)).getcolors(1 << 24) if p == (0x42, 0xA5, 0xF5))
            check("exporting: the export's progress bar", bar > 100, f"{bar} pixels of the bar's fill")
        if name == "framing":
            panel = im.crop((L["panel_x"], L["area"][1], w, L["area"][1] + L["area"][3]))
            squares = sum(n for n, p in panel.getcolors(1 << 24) if p in LEVELS)
            check("framing: the framing check's coloured rows", squares > 5 * 200, f"{squares} pixels in the level colours")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
