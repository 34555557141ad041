#!/usr/bin/env python3
"""Host-side checks of one emulated-board run (scripts/board/run --out DIR), stdlib only.

    check-results.py DIR [--skip NAME,...] [--rate-tolerance PCT]

Reads DIR/results/*.json (what the guest's facekit printed) and the USB stick image, asserts
what the issue asks for, prints one line per check and the measured figures, and exits 1 if any
check failed. The guest already ran `facekit capture --check`; these checks re-verify the
numbers independently and cover what the guest cannot judge alone (the stick's contents).
--skip names results whose tests a board does not run (their absence is no failure); a board
whose emulated CPU cannot keep a device's real rate passes a wider --rate-tolerance (the
aarch64 board, see scripts/tests/55-arm-board.sh); 5 % otherwise.
"""
import argparse, json, os, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("--skip", default="")
ap.add_argument("--rate-tolerance", type=float, default=5.0)
ap.add_argument("--depth-fps", type=float, default=25.0)
args = ap.parse_args()
out = args.dir
SKIP = [x for x in args.skip.split(",") if x]
TOL = args.rate_tolerance / 100
res = os.path.join(out, "results")
failed = 0
passed = 0


def check(ok, what):
    global failed, passed
    print(("  ok    " if ok else "  FAIL  ") + what)
    if ok:
        passed += 1
    else:
        failed += 1


def load(name):
    p = os.path.join(res, name + ".json")
    if any(name.startswith(x) for x in SKIP):
        return None
    if not os.path.exists(p):
        check(False, f"{name}: no result (the guest test did not get that far; see {out}/console.log)")
        return None
    with open(p) as f:
        return json.load(f)


def stream(name, layout, camera_format, min_frames):
    r = load(name)
    if r is None:
        return None
    check(r["failures"] == [], f"{name}: facekit --check found nothing wrong {r['failures'] or ''}")
    check(r["frames"] >= min_frames, f"{name}: {r['frames']} frames >= {min_frames}")
    check(r["layout"] == layout, f"{name}: delivered {r['layout']} (want {layout})")
    check(r["cameraFormat"] == camera_format, f"{name}: camera negotiated {r['cameraFormat']} (want {camera_format})")
    check(abs(r["achievedFPS"] - r["negotiatedFPS"]) <= TOL * r["negotiatedFPS"],
          f"{name}: achieved {r['achievedFPS']} fps within {args.rate_tolerance:g}% of negotiated {r['negotiatedFPS']}")
    check(r["sequenceGaps"] == 0, f"{name}: no gaps in sequence numbers")
    check(r["timestampsMonotonic"] and r["counters"]["nonMonotonic"] == 0, f"{name}: timestamps monotonic")
    check(r["counters"]["corrupt"] == 0 and r["queueDropped"] == 0, f"{name}: no corrupt or dropped frames")
    return r


yuyv = stream("capture-yuyv", "640x480 YUYV", "640x480 YUYV", 100)
if yuyv:
    ctl = {c["name"]: c for c in yuyv["controls"]}
    check(ctl.get("gain", {}).get("value") == 42 and ctl["gain"].get("auto") is False,
          "capture-yuyv: gain set to manual 42 (autogain off) and read back")
    check(ctl.get("brightness", {}).get("value") == 140, "capture-yuyv: brightness 140 read back")
auto = load("capture-gain-auto")
if auto:
    g = [c for c in auto["controls"] if c["name"] == "gain"]
    check(len(g) == 1 and g[0]["auto"] is True and g[0]["matches"], "capture-gain-auto: automatic gain switched back on and read back")
mjpeg = stream("capture-mjpeg", "320x240 RGB24", "640x480 MJPG", 100)
unplug = load("capture-unplug")
if unplug:
    c = unplug["counters"]
    check(unplug["frames"] >= 60 and unplug["timestampsMonotonic"] and unplug["counters"]["nonMonotonic"] == 0,
          f"capture-unplug: {unplug['frames']} frames, timestamps monotonic across the replug")
    check(abs(unplug["rateErrorPercent"]) <= 100 * TOL, f"capture-unplug: rate {unplug['achievedFPS']} fps within {args.rate_tolerance:g}% of {unplug['negotiatedFPS']}")
    check(unplug.get("lastSegmentFrames", 0) >= 30, f"capture-unplug: {unplug.get('lastSegmentFrames')} frames from the camera after it came back")
    check(c["disconnects"] >= 1 and c["reconnects"] >= 1 and unplug["segments"] >= 2,
          f"capture-unplug: {c['disconnects']} disconnect, {c['reconnects']} reconnect, {unplug['segments']} stream segments, one process")
    check(any(x["name"] == "gain" and x["value"] == 42 for x in unplug["controls"]),
          "capture-unplug: manual gain re-applied after the camera came back")

dev = load("devices")
if dev:
    cams = {c["card"]: c for c in dev["cameras"]}
    viv = cams.get("vivid")
    check(viv is not None and viv["path"] == "/dev/video0", "devices: vivid camera at /dev/video0")
    if viv:
        fmts = {f["fourcc"]: f for f in viv["formats"]}
        yu = fmts.get("YUYV")
        check(yu is not None and any(s["width"] == 640 and s["height"] == 480 and 25 in s["fps"] for s in yu["sizes"]),
              f"devices: vivid offers YUYV 640x480 at 25 fps ({len(fmts)} formats listed)")
        check(any(c["name"] == "gain" for c in viv["controls"]), "devices: vivid's controls listed (gain)")
    mj = cams.get("facekit-mjpeg-vga")
    check(mj is not None and mj["path"] == "/dev/video10" and [f["fourcc"] for f in mj["formats"]] == ["MJPG"]
          and mj["formats"][0]["sizes"][0]["width"] == 640,
          "devices: v4l2loopback MJPEG camera 640x480 at /dev/video10")
    chips = {g["label"]: g for g in dev["gpioChips"]}
    g = chips.get("facekit-buttons")
    check(g is not None and len(g["lines"]) == 8, "devices: gpio-sim chip 'facekit-buttons' with 8 lines")
    if g:
        names = {l["offset"]: l["name"] for l in g["lines"] if l["name"]}
        check(names == {0: "BTN_START", 1: "BTN_MARK", 5: "LED_SAFE"}, f"devices: GPIO line names {names}")
    sticks = dev["usbSticks"]
    check(len(sticks) == 1 and sticks[0]["path"] == "/dev/sda" and sticks[0]["usb"]
          and [p["path"] for p in sticks[0]["partitions"]] == ["/dev/sda1"],
          "devices: the USB stick /dev/sda with partition sda1, on USB")
un = load("devices-unplugged")
re_ = load("devices-replugged")
if un and re_:
    check(un["usbSticks"] == [], "devices: no USB stick listed after QMP device_del")
    check(len(re_["usbSticks"]) == 1 and re_["usbSticks"][0]["partitions"][0].get("mountpoint") == "/run/stick",
          "devices: stick listed again after device_add, mounted on /run/stick")

if not any("devices".startswith(x) for x in SKIP):   # the devices test wrote it
    img = os.path.join(out, "usb.img")
    try:
        text = subprocess.run(["mcopy", "-n", "-i", img + "@@1M", "::GUEST.TXT", "-"], capture_output=True, text=True,
                              env=dict(os.environ, mtools_skip_check="1")).stdout
    except OSError as e:
        text = str(e)
    check(text.strip() == "written by the guest after replug", "stick image: the guest's file is on the FAT32 partition")

print("  figures:")
for name, r in (("vivid YUYV", yuyv), ("loopback MJPEG", mjpeg), ("unplug/replug", unplug)):
    if r:
        print(f"    {name}: {r['frames']} frames, {r['achievedFPS']} fps achieved vs {r['negotiatedFPS']} negotiated "
              f"({r['rateErrorPercent']:+}%), max interval {r['maxIntervalMs']:.1f} ms, max lag {r['maxLagMs']:.1f} ms")
for size in ("640x480", "1280x720"):
    b = load(f"bench-{size}")
    if not b:
        continue
    for part in b["replay"] + ([b["device"]] if b.get("device") else []):
        src = "replay " if part.get("meanJPEGBytes") else "camera "
        rows = ", ".join(f"{m['decode']} 1/{m['scale']} {m['cpuMsPerFrame']:.1f} ms" +
                         (f" @{m['achievedFPS']:.1f} fps" if m.get("achievedFPS") else "") for m in part["results"])
        print(f"    bench {src}{part['size']}: {rows}")
        # A live MJPEG camera on v4l2loopback: when the emulated CPU stalls, the loopback overwrites
        # the buffer a slow reader holds, and that frame is corrupt — detected, counted, skipped
        # (the capture test checks the counting). The bench allows 1 in 50 of those, not more; a
        # replayed file must decode without any.
        def ok(m):
            limit = 0 if src == "replay " else max(1, m["frames"] // 50)
            return m["frames"] > 0 and m["corrupt"] <= limit
        check(all(ok(m) for m in part["results"]),
              f"bench {src}{part['size']}: every variant decoded frames, corrupt ≤ 2 % (camera) / none (replay)")
# GPIO (board/emulated/tests/gpio.sh): uAPI v2 on gpio-sim through facekit's GPIO module.
gi = load("gpio-info")
if gi:
    g = [c for c in gi if c["label"] == "facekit-gpiotest"]
    check(len(g) == 1 and len(g[0]["lines"]) == 8, "gpio: `gpio info` lists chip 'facekit-gpiotest' with 8 lines")
    if g:
        names = {l["offset"]: l["name"] for l in g[0]["lines"] if l["name"]}
        check(names == {0: "TTL_IN", 1: "BTN", 2: "BOUNCY", 3: "LED", 4: "SYNC"}, f"gpio: line names {names}")
ge = load("gpio-edges")
if ge is not None:
    ev = [e for e in ge if "kind" in e]
    check([e["kind"] for e in ev] == ["rising", "falling"] * 3 and all(e["offset"] == 0 and e["name"] == "TTL_IN" for e in ev),
          f"gpio: three pulses on TTL_IN give 6 alternating edges ({[e['kind'] for e in ev]})")
    check([e["seqno"] for e in ev] == list(range(1, 7)) and [e["lineSeqno"] for e in ev] == list(range(1, 7))
          and not any("gap" in e for e in ge), "gpio: sequence numbers 1..6 (request and line), no gaps")
    ts = [e["timestampNs"] for e in ev]
    check(len(ts) == 6 and all(b - a >= 20_000_000 for a, b in zip(ts, ts[1:])),
          f"gpio: kernel timestamps increase by the shell's ~50 ms steps ({[round((b - a) / 1e6, 1) for a, b in zip(ts, ts[1:])]} ms)")
    clk = load("gpio-clock")
    if clk and ts:
        lo, hi = clk["uptimeBefore"] * 1e9 - 10e6, clk["uptimeAfter"] * 1e9 + 10e6
        check(lo <= ts[0] and ts[-1] <= hi, f"gpio: timestamps {ts[0] / 1e9:.3f}..{ts[-1] / 1e9:.3f} s are CLOCK_MONOTONIC "
              f"(within the guest uptime {clk['uptimeBefore']}..{clk['uptimeAfter']} s around the pulses)")
ga = load("gpio-activelow")
if ga is not None:
    check([(e["kind"], e["offset"]) for e in ga if "kind" in e] == [("rising", 1), ("falling", 1)],
          "gpio: active-low button: press (line low) is rising, release falling")
gd, gn = load("gpio-debounce"), load("gpio-nodebounce")
if gd is not None and gn is not None:
    d = [e["kind"] for e in gd if "kind" in e]
    n = [e["kind"] for e in gn if "kind" in e]
    check(d == ["rising"], f"gpio: bouncing input with 200 ms debounce gives one rising event ({d})")
    check(len(n) >= 3, f"gpio: the same bounce without debounce gives {len(n)} events (the glitches are real edges)")
go = load("gpio-outputs")
if go:
    s_ = go["blinkSamples"]
    changes = sum(1 for a, b in zip(s_, s_[1:]) if a != b)
    check(go["setHigh"] == 1 and go["setActiveLowHigh"] == 0, "gpio: output LED=1 reads 1 in gpio-sim's value; active-low LED=1 reads 0")
    check(changes >= 4 and set(s_) == {"0", "1"}, f"gpio: LED blink:5 seen through sysfs, {changes} changes in 40 samples ({s_})")
    ps = go.get("pulseSamples", "")
    runs = len([r for r in ps.split("0") if r])
    gp = load("gpio-pulses") or []
    widths = [round((p["endNs"] - p["startNs"]) / 1e6, 1) for p in gp]
    check(runs == 3 and len(gp) == 3 and all(400 <= w < 500 for w in widths),
          f"gpio: 3 sync pulses of 400 ms seen through sysfs ({ps}), reported widths {widths} ms")
bg = load("bench-gpio")
if bg:
    check(bg["missedBySeqno"] == 0 and bg["missedByCount"] == 0 and bg["repeatedKinds"] == 0 and bg["eventsReceived"] == bg["edgesDriven"] == 2000,
          f"bench gpio: {bg['eventsReceived']} of {bg['edgesDriven']} edges received, missed {bg['missedBySeqno']} by seqno, {bg['missedByCount']} by count")
    check(bg["markersStored"] == bg["markersInEventLog"] == 1000 and bg["markerTimestampsMatch"],
          f"bench gpio: {bg['markersInEventLog']} markers in events.log with the kernel timestamps")
    m, r = bg["markerLatency"], bg["readLatency"]
    print(f"    bench gpio: {bg['rateHz']} Hz x {bg['seconds']} s ({bg['achievedRateHz']:.2f} Hz achieved): edge -> marker stored "
          f"min {m['minUs']:.0f} / median {m['medianUs']:.0f} / p99 {m['p99Us']:.0f} / max {m['maxUs']:.0f} us; "
          f"edge -> read median {r['medianUs']:.0f} / p99 {r['p99Us']:.0f} us; driver handshake timeouts {bg.get('driverTimeouts')}")
    ol = load("bench-gpio-openloop")
    if ol:
        print(f"    bench gpio open loop (not checked): {ol['eventsReceived']} of {ol['edgesDriven']} edges, missed "
              f"{ol['missedBySeqno']} by seqno / {ol['missedByCount']} by count, {ol.get('repeatedKinds')} repeated edge kinds "
              f"(edge pairs merged while the emulated CPU stalled; "
              f"driver lateness p99 {ol['driverLateness']['p99Us']:.0f} us)")
dv = load("depth-vivid-y16")
if dv:
    k = dv.get("intrinsics") or {}
    check(dv.get("error") is None and dv["frames"] >= 100,
          f"depth: V4L2 driver (out of process) delivered {dv['frames']} Y16 frames from vivid {dv.get('error') or ''}")
    check((k.get("width"), k.get("height")) == (640, 480) and k.get("depthUnits") == 0.001,
          f"depth: intrinsics {k.get('width')}x{k.get('height')}, fx {k.get('fx')}, {k.get('depthUnits')} m per count")
    check(abs(dv["achievedFPS"] - args.depth_fps) <= TOL * args.depth_fps,
          f"depth: {dv['achievedFPS']:.2f} fps within {args.rate_tolerance:g}% of {args.depth_fps:g}")
    check(dv["sequenceGaps"] == 0 and dv["nonMonotonic"] == 0, f"depth: no sequence gaps ({dv['sequenceGaps']}), timestamps monotonic")
    check(dv["sampledFrames"] >= 1 and dv["validFraction"] > 0.5 and dv["distinctValuesFirstFrame"] > 1 and dv["maximum"] > 255,
          f"depth: real 16-bit data ({100 * dv['validFraction']:.1f} % non-zero, {dv['minimum']}..{dv['maximum']}, "
          f"{dv['distinctValuesFirstFrame']} distinct values; {dv['sampledFrames']} frames examined)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
