"""Paced traffic for scripts/conformance/meter_split.sh.

send IFACE PPS SECS: sends 1500-byte IPv4/TCP frames with DSCP 18 (what os-ken's
DSCP-remark meter cases send) out of IFACE at exactly PPS frames a second for SECS
seconds, paced by the clock, and prints how many it sent.

count IFACE SECS: counts the IPv4 frames received on IFACE for SECS seconds by DSCP and
prints the counts as JSON.
"""

import collections
import json
import socket
import struct
import sys
import time


def frame():
    dst, src = bytes.fromhex("222222222222"), bytes.fromhex("121111111111")
    payload = b"\x11" * (1500 - 54)
    tcp = struct.pack("!HHIIBBHHH", 1234, 80, 0, 0, 5 << 4, 2, 8192, 0, 0)
    length = 20 + len(tcp) + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 18 << 2, length, 0, 0, 64, 6, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    return dst + src + b"\x08\x00" + ip + tcp + payload


def send(ifname, pps, secs):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    f = frame()
    n = 0
    t0 = time.monotonic()
    while True:
        now = time.monotonic()
        if now - t0 >= secs:
            break
        due = int((now - t0) * pps)
        while n < due:
            s.send(f)
            n += 1
        time.sleep(0.0005)
    elapsed = time.monotonic() - t0
    print(json.dumps({"sent": n, "seconds": round(elapsed, 3), "pps": round(n / elapsed, 1)}))


def count(ifname, secs):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(3))
    s.setsockopt(socket.SOL_SOCKET, 33, 256 << 20)  # SO_RCVBUFFORCE: no drops in the socket
    s.bind((ifname, 0))
    s.settimeout(0.2)
    by_dscp = collections.Counter()
    end = time.monotonic() + secs
    while time.monotonic() < end:
        try:
            f, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        if addr[2] != socket.PACKET_OUTGOING and f[12:14] == b"\x08\x00":
            by_dscp[str(f[15] >> 2)] += 1
    print(json.dumps(dict(by_dscp)))


if __name__ == "__main__":
    if sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        count(sys.argv[2], float(sys.argv[3]))
