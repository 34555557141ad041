#!/usr/bin/env python3
"""The systemd side of sd_notify for the kiosk guest test: binds an abstract unix datagram socket
(NOTIFY_SOCKET=@NAME) and appends each datagram to LOG, newlines as ' | ', one line per message."""
import socket, sys, time

name, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + name)
t0 = time.monotonic()
with open(log, "a", buffering=1) as f:
    f.write("listening\n")
    while True:
        d = s.recv(4096).decode(errors="replace")
        f.write(f"{time.monotonic() - t0:.3f} {d.replace(chr(10), ' | ')}\n")
