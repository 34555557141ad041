#!/usr/bin/env python3
"""Boots the emulated board once and runs guest tests; Python standard library only.

    qemu.py --kernel VMLINUX --initrd INITRD --tests a,b --out DIR [--timeout S]
            [--append "k=v ..."] [--mem MB] [--smp N] [--accel tcg|kvm]
            [--arch x86_64|aarch64] [--cpu MODEL] [--cut PHASE:MS] [-- extra qemu args]

x86_64: q35, the PVH vmlinux, console ttyS0. aarch64: -M virt, the arm64 Image, console ttyAMA0
(the PL011), -cpu MODEL (e.g. cortex-a72, cortex-a76).

Reads the guest console (board/emulated/init's protocol):
    BOARD: QMP {json}          sent to QEMU's monitor; the reply is logged (USB hot-plug)
    BOARD: JSON <name> {json}  saved as OUT/results/<name>.json for host-side checks
    BOARD: RESULT rc=N         the guest's verdict; exit status is 0 only for rc=0
    BOARD: POWER-CUT           QEMU is killed at once (a power cut); exit status 3
    BOARD: PHASE name ...      with --cut PHASE:MS, QEMU is killed MS ms after the line naming
                               PHASE (a power cut at a chosen moment); exit status 3
    BOARD: CUT-NOW             with --cut, QEMU is killed at once if the timer has not fired yet
    BOARD: SCREENDUMP name     QMP screendump of the display to OUT/screens/name.png (written
                               under another name and renamed, so a guest polling for it over
                               9p sees only a complete file)
Everything is logged with host-relative timestamps to OUT/console.log.
"""
import argparse, json, os, shutil, socket, subprocess, sys, tempfile, threading, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--tests", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--append", default="")
    ap.add_argument("--mem", default="1024")
    ap.add_argument("--smp", default="2")
    ap.add_argument("--accel", default="tcg")
    ap.add_argument("--arch", default="x86_64", choices=["x86_64", "aarch64"])
    ap.add_argument("--cpu", default=None)
    ap.add_argument("--cut", default=None, help="PHASE:MS: kill QEMU MS ms after 'BOARD: PHASE PHASE'")
    ap.add_argument("qemu_args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    extra = [x for x in a.qemu_args if x != "--"]
    os.makedirs(os.path.join(a.out, "results"), exist_ok=True)

    tmp = tempfile.mkdtemp(prefix="facekit-board-")
    try:
        return boot(a, extra, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def boot(a, extra, tmp):
    qmp_path = os.path.join(tmp, "qmp.sock")
    # KVM does not work on nested-virtualisation CI hosts (the guest hangs after SeaBIOS): TCG.
    if a.arch == "aarch64":
        machine = ["qemu-system-aarch64", "-machine", f"virt,accel={a.accel}", "-cpu", a.cpu or "cortex-a72"]
        console = "ttyAMA0"
    else:
        machine = ["qemu-system-x86_64", "-machine", f"q35,accel={a.accel}", "-cpu", a.cpu or "max"]
        console = "ttyS0"
    cmd = machine + ["-m", a.mem, "-smp", a.smp, "-nographic", "-no-reboot", "-nodefaults",
           "-serial", "stdio", "-qmp", f"unix:{qmp_path},server=on,wait=off",
           "-kernel", a.kernel, "-initrd", a.initrd,
           "-append", f"console={console} quiet panic=-1 board.tests={a.tests} {a.append}"] + extra
    t0 = time.monotonic()
    log = open(os.path.join(a.out, "console.log"), "w")
    lock = threading.Lock()

    def out(line):
        s = f"[{time.monotonic() - t0:7.3f}] {line}"
        with lock:
            print(s, flush=True)
            log.write(s + "\n"); log.flush()

    q = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    qmp = None
    for _ in range(200):
        try:
            qmp = socket.socket(socket.AF_UNIX); qmp.connect(qmp_path); break
        except OSError:
            qmp = None; time.sleep(0.05)
    if qmp is None:
        out("HOST: cannot connect to QEMU's QMP socket"); q.kill(); return 1
    qf = qmp.makefile("rw")
    replies, deleted, cv = [], set(), threading.Condition()

    def qmp_reader():
        for l in qf:
            msg = json.loads(l)
            if "event" in msg:
                out(f"HOST: QMP-EVENT {msg['event']} {json.dumps(msg.get('data', {}))}")
                if msg["event"] == "DEVICE_DELETED" and "device" in msg.get("data", {}):
                    with cv:
                        deleted.add(msg["data"]["device"]); cv.notify_all()
            else:
                with cv:
                    replies.append(msg); cv.notify()
    json.loads(qf.readline())
    qf.write(json.dumps({"execute": "qmp_capabilities"}) + "\n"); qf.flush()
    json.loads(qf.readline())
    threading.Thread(target=qmp_reader, daemon=True).start()

    def qmp_cmd(obj):
        with cv:
            replies.clear()
            qf.write(json.dumps(obj) + "\n"); qf.flush()
            cv.wait_for(lambda: replies, timeout=10)
            return replies[0] if replies else {"error": "no reply within 10 s"}

    cut_phase, _, cut_ms = (a.cut or "").partition(":")
    cut = {"done": False}

    def power_cut(why):
        with lock:
            if cut["done"]:
                return
            cut["done"] = True
        q.kill()
        out(f"HOST: power cut (qemu killed) {why} wall={time.monotonic() - t0:.3f}s")

    timer = threading.Timer(a.timeout, lambda: (out(f"HOST: TIMEOUT after {a.timeout:.0f} s, killing qemu"), q.kill()))
    timer.start()
    result = None
    for raw in q.stdout:
        line = raw.decode(errors="replace").rstrip("\r\n")
        if line.startswith("BOARD: JSON "):
            _, _, rest = line.partition("BOARD: JSON ")
            name, _, body = rest.partition(" ")
            try:
                data = json.loads(body)
                with open(os.path.join(a.out, "results", f"{name}.json"), "w") as f:
                    json.dump(data, f, indent=1, sort_keys=True)
                out(f"BOARD: JSON {name} saved ({len(body)} bytes)")
            except ValueError as e:
                out(f"HOST: bad JSON for {name}: {e}: {body[:200]}")
            continue
        out(line)
        if cut_phase and line.startswith("BOARD: PHASE ") and line.split()[2] == cut_phase:
            threading.Timer(int(cut_ms) / 1000, power_cut, [f"phase={cut_phase} delay_ms={cut_ms}"]).start()
        elif cut_phase and line.startswith("BOARD: CUT-NOW"):
            power_cut(f"phase=after-cycle (the timer for {cut_phase}+{cut_ms} ms had not fired)")
        if line.startswith("BOARD: SCREENDUMP "):
            name = line.split()[2]
            if not name.replace("-", "").replace("_", "").isalnum():
                out(f"HOST: bad screenshot name {name!r}")
                continue
            shots = os.path.join(os.path.abspath(a.out), "screens")
            os.makedirs(shots, exist_ok=True)
            tmp_png = os.path.join(shots, f".{name}.png.tmp")
            r = qmp_cmd({"execute": "screendump", "arguments": {"filename": tmp_png, "format": "png"}})
            if "return" in r and os.path.exists(tmp_png):
                os.rename(tmp_png, os.path.join(shots, f"{name}.png"))
            out(f"HOST: SCREENDUMP {name} {json.dumps(r)}")
        elif line.startswith("BOARD: QMP "):
            req = json.loads(line[len("BOARD: QMP "):])
            dev = req.get("arguments", {}).get("id") if req.get("execute") == "device_del" else None
            if dev:
                with cv:
                    deleted.discard(dev)
            r = qmp_cmd(req)
            out(f"HOST: QMP-REPLY {json.dumps(r)}")
            # The guest sees a USB disk go before QEMU has released its drive; a device_add of the
            # same drive in between fails ("Permission conflict on node"). The console is read in
            # order, so waiting here for DEVICE_DELETED delays the guest's next request until then.
            if dev and "return" in r:
                with cv:
                    if not cv.wait_for(lambda: dev in deleted, timeout=10):
                        out(f"HOST: no DEVICE_DELETED for {dev} within 10 s")
        elif line.startswith("BOARD: RESULT rc="):
            result = int(line.split("rc=")[1].split()[0])
        elif line.startswith("BOARD: POWER-CUT"):
            q.kill(); q.wait(); timer.cancel()
            out(f"HOST: power cut (qemu killed) wall={time.monotonic() - t0:.1f}s")
            return 3
    q.wait(); timer.cancel()
    if cut["done"]:
        return 3
    out(f"HOST: qemu exit={q.returncode} result={result} wall={time.monotonic() - t0:.1f}s")
    return 0 if result == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
