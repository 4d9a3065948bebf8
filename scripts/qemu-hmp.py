#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# qemu-hmp.py - run commands on a running QEMU's human monitor (vm.sh
# --monitor PATH) and print what each printed.
#
# Usage:
#   scripts/qemu-hmp.py SOCKET COMMAND...   each COMMAND one monitor line
#   scripts/qemu-hmp.py SOCKET --virtio-net the state of every virtio-net
#                                           device's queues: the device
#                                           and the driver side of each
#                                           ring (which one stopped?)
#
# Exit status: 0, or 1 when the monitor cannot be reached.
import re
import socket
import sys

PROMPT = b"(qemu) "


def read_until_prompt(s):
    buf = b""
    while not buf.endswith(PROMPT):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf


def clean(raw):
    text = raw.decode("utf-8", "replace")
    # The monitor echoes the line as it redraws it, one character at a
    # time with terminal escapes, up to the first newline: drop that
    # line and the prompt, keep what the command printed.
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]|\x1b[A-Za-z]|\r", "", text)
    lines = text.split("\n")[1:]
    return "\n".join(l for l in lines if l.strip() and not l.startswith("(qemu)"))


def run(path, cmds):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    read_until_prompt(s)
    out = []
    for c in cmds:
        s.sendall(c.encode() + b"\n")
        out.append((c, clean(read_until_prompt(s))))
    s.close()
    return out


def virtio_net(path):
    """Every virtio-net device's status and queues."""
    (_, listing), = run(path, ["info virtio"])
    devs = re.findall(r"(\S+virtio-backend)\s+\[virtio-net\]", listing)
    cmds = []
    for d in devs:
        cmds.append("info virtio-status " + d)
        for q in (0, 1):  # receive, transmit
            cmds.append("info virtio-queue-status %s %d" % (d, q))
    results = run(path, cmds) if cmds else []
    # The split rings in guest memory: what the driver has made
    # available (avail.idx) and the used index it asked to be
    # interrupted at (used_event, after the avail ring); the
    # device's used.idx and the avail index it asked to be
    # kicked at (avail_event, after the used ring).
    for c, text in list(results):
        m = dict(re.findall(r"(avail|used):\s+0x([0-9a-f]+)", text))
        n = re.search(r"\bnum:\s+(\d+)", text)
        if "queue-status" not in c or not n or int(m.get("avail", "0"), 16) == 0:
            continue
        n = int(n.group(1))
        a, u = int(m["avail"], 16), int(m["used"], 16)
        vals = run(path, ["xp /1hu 0x%x" % x for x in
                          (a + 2, a + 4 + 2 * n, u + 2, u + 4 + 8 * n)])
        vals = [v.split(":")[-1].strip() for _, v in vals]
        results.append(("ring in guest memory, " + c.split(" ", 2)[2],
                        "  avail.idx %s used_event %s used.idx %s avail_event %s"
                        % tuple(vals)))
    return listing, results


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: qemu-hmp.py SOCKET COMMAND... | --virtio-net\n")
        return 2
    path = sys.argv[1]
    try:
        if sys.argv[2] == "--virtio-net":
            # The guest paused while its queues are read: one moment's
            # indexes, not several.
            run(path, ["stop"])
            try:
                listing, results = virtio_net(path)
            finally:
                run(path, ["cont"])
            print("== info virtio\n" + listing)
        else:
            results = run(path, sys.argv[2:])
    except OSError as e:
        sys.stderr.write("qemu-hmp.py: %s: %s\n" % (path, e))
        return 1
    for c, text in results:
        print("== " + c)
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
