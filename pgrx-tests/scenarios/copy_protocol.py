#!/usr/bin/env python3
"""A minimal frontend that speaks the COPY-in sub-protocol byte by byte (no libpq), to send
what libpq-based clients never send: thousands of tiny CopyData messages, Flush and Sync in
the middle of a stream, a CopyFail with our own text, an unexpected message type. Each
scenario runs with fastcopy.copy_from off, require (the client's socket read by fastcopy's
socket thread) and require with fastcopy.client_thread off (read by the backend between row
blocks); the outcome (rows loaded, or the SQLSTATE and message of the error, and whether the
connection still answers) must be the same. Prints one ok/FAIL line per scenario; exit 1 on a difference.
  copy_protocol.py SOCKET-DIR PORT
"""
import socket
import struct
import sys

sockdir, port = sys.argv[1], sys.argv[2]


class Conn:
    def __init__(self, options):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(f"{sockdir}/.s.PGSQL.{port}")
        params = b"user\0postgres\0database\0postgres\0options\0" + options.encode() + b"\0\0"
        body = struct.pack("!i", 196608) + params
        self.s.sendall(struct.pack("!i", len(body) + 4) + body)
        self.buf = b""
        self.until_ready()

    def recv_msg(self):
        while len(self.buf) < 5:
            chunk = self.s.recv(65536)
            if not chunk:
                return None, b""
            self.buf += chunk
        t, n = self.buf[0:1], struct.unpack("!i", self.buf[1:5])[0]
        while len(self.buf) < 1 + n:
            chunk = self.s.recv(65536)
            if not chunk:
                return None, b""
            self.buf += chunk
        body, self.buf = self.buf[5:1 + n], self.buf[1 + n:]
        return t, body

    def send(self, t, body=b""):
        if t is None:  # raw bytes, e.g. a message with a bad length word
            self.s.sendall(body)
            return
        if t == b"EOF":  # the client's end of the connection closes
            self.s.shutdown(socket.SHUT_WR)
            return
        self.s.sendall(t + struct.pack("!i", len(body) + 4) + body)

    def until_ready(self):
        """Messages up to ReadyForQuery: (error or None, command tags and first column values)."""
        err, tags = None, []
        while True:
            t, body = self.recv_msg()
            if t is None:
                return (f"{err}, connection closed" if err else "connection closed", tags)
            if t == b"D":
                n = struct.unpack("!i", body[2:6])[0]
                tags.append(body[6:6 + n].decode())
            if t == b"E":
                fields = {f[0:1]: f[1:].decode() for f in body.split(b"\0") if f}
                where = f" ({fields[b'W']})" if b"W" in fields else ""
                err = err or f"{fields.get(b'C')}: {fields.get(b'M')}{where}"
            elif t == b"C":
                tags.append(body.rstrip(b"\0").decode())
            elif t == b"G":
                return ("copy-in", tags)
            elif t == b"Z":
                return (err, tags)

    def query(self, sql):
        self.send(b"Q", sql.encode() + b"\0")
        return self.until_ready()


def scenario(mode, steps):
    opts = {
        "off": "",
        "require": "-c session_preload_libraries=fastcopy -c fastcopy.copy_from=require",
        "require, client_thread off": "-c session_preload_libraries=fastcopy -c fastcopy.copy_from=require"
        " -c fastcopy.client_thread=off",
    }[mode]
    c = Conn(opts)
    c.query("TRUNCATE pr")
    state, _ = c.query("COPY pr FROM STDIN")
    if state != "copy-in":
        return f"no copy-in: {state}"
    for t, body in steps:
        c.send(t, body)
    result = c.until_ready()
    try:
        after = c.query("SELECT 1")
        alive = "alive" if after[0] is None else f"after: {after[0]}"
    except OSError:
        alive = "closed"
    count = Conn("").query("SELECT count(*) FROM pr")[1]  # rows seen from a new session
    return f"{result} {alive} rows={count}"


def rows(n, start=0):
    return [(b"d", f"{i}\tr{i}\n".encode()) for i in range(start, start + n)]


setup = Conn("")
setup.query("DROP TABLE IF EXISTS pr; CREATE TABLE pr (a int, b text)")
fail = 0
cases = {
    "20000 one-row CopyData messages": rows(20000) + [(b"c", b"")],
    "rows split across messages mid-field": [(b"d", b"1\tab"), (b"d", b"c\n2"), (b"d", b"\txyz\n")] + [(b"c", b"")],
    "Flush and Sync inside the stream are ignored": rows(3) + [(b"H", b""), (b"S", b"")] + rows(3, 3) + [(b"c", b"")],
    "CopyFail with the client's text": rows(100) + [(b"f", b"the client gave up\0")],
    "CopyFail in the middle of a line: the CONTEXT names it": rows(100) + [(b"d", b"100\tpart")] + [(b"f", b"gave up\0")],
    "a bad value before the CopyFail fails first": rows(50) + [(b"d", b"x\ty\n")] + rows(50, 51) + [(b"f", b"gave up\0")],
    "an unexpected message type (Query) during COPY": rows(5) + [(b"Q", b"SELECT 1\0")],
    "data after the end marker is read and dropped up to CopyDone": rows(2) + [(b"d", b"\\.\n"), (b"d", b"junk\n")] + [(b"c", b"")],
    "a CopyFail after the end marker still fails the COPY": rows(2) + [(b"d", b"\\.\n"), (b"f", b"late\0")],
    "empty CopyData messages between rows": [m for r in rows(200) for m in (r, (b"d", b""))] + [(b"c", b"")],
    "one 4 MB CopyData message (larger than the socket buffer)":
        [(b"d", b"".join(body for _, body in rows(300000)))] + [(b"c", b"")],
    "a CopyData message with an invalid length word": rows(10) + [(None, b"d" + struct.pack("!i", 2))],
    "the connection ends in the middle of a CopyData message":
        rows(1000) + [(None, b"d" + struct.pack("!i", 104) + b"1000\tpart"), (b"EOF", b"")],
    "the connection ends between two messages": rows(1000) + [(b"EOF", b"")],
    "a Query sent right behind CopyDone (nothing read past CopyDone)":
        rows(30) + [(b"c", b""), (b"Q", b"SELECT count(*) FROM pr\0")],
    "a Sync sent right behind CopyDone": rows(30) + [(b"c", b""), (b"S", b"")],
}
for label, steps in cases.items():
    off = scenario("off", steps)
    for mode in ("require", "require, client_thread off"):
        on = scenario(mode, steps)
        if off == on:
            print(f"ok   protocol ({mode}): {label}: {on}")
        else:
            print(f"FAIL protocol ({mode}): {label}\n       off: {off}\n       {mode}: {on}")
            fail = 1
sys.exit(fail)
