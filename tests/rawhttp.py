#!/usr/bin/env python3
"""rawhttp: an HTTP/1.1 receiver that writes answers byte by byte, for the
answers tests/hookrecv (libevent's evhttp) cannot give: interim 1xx
answers before the final one, and chunked bodies whose chunk-size line
announces more than any client should buffer. A test program, never
installed.

    rawhttp.py --port-file FILE --log FILE [--cert PEM --key PEM]

It listens on a free port of 127.0.0.1 (written to --port-file once it
listens; with --cert and --key it speaks TLS) and logs one JSON line per
request at its arrival: path, key (Idempotency-Key) and attempt
(Lapse-Attempt). The request path chooses the answer:

    /early/CODE/...     an interim CODE (100 to 199), then 200 "ok", in
                        two writes 50 ms apart
    /status/CODE/...    CODE with an empty body
    /hugechunk/CODE/... CODE, chunked, one chunk announced as 2^40 bytes,
                        then up to 64 MiB of it, then the connection held
                        until the client leaves
    /longline/CODE/...  CODE, chunked, then a chunk-size line of up to
                        64 MiB of '0's that never ends
    /extra/CODE/...     CODE with an empty body, and in the same write a
                        200 that no request asked for
    /closedelim/CODE/...
                        CODE with "Connection: close" and a body that
                        the close ends (no close_notify over TLS)
    /answerfirst/CODE/...
                        CODE with an empty body as soon as the headers
                        are in, the body unread, then the connection
                        closed (the client's write then fails)
    /keepalive/SECS/... 200 with "Keep-Alive: timeout=SECS"; a request
                        that comes on that connection SECS or more later
                        is logged with "lost": true and gets no answer,
                        the connection closed: a server that closed it
                        as the request went out

Connections are kept alive (HTTP/1.1), one thread each; SIGTERM ends it.
"""
import argparse
import json
import os
import signal
import socket
import ssl
import sys
import threading
import time

MIB = 1024 * 1024
HEAD_MAX = 64 * 1024
BODY_MAX = 16 * MIB


def reason(code):
    return {100: "Continue", 103: "Early Hints", 200: "OK"}.get(code, "X")


def read_request(f):
    """(path, headers) of the next request, its body read; None at EOF."""
    line = f.readline(HEAD_MAX)
    if not line:
        return None
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        raise ValueError("bad request line")
    headers, size = {}, len(line)
    while True:
        h = f.readline(HEAD_MAX)
        size += len(h)
        if not h or size > HEAD_MAX:
            raise ValueError("headers cut or too long")
        if h in (b"\r\n", b"\n"):
            break
        name, _, value = h.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    n = int(headers.get("content-length", "0"))
    if n < 0 or n > BODY_MAX:
        raise ValueError("bad Content-Length")
    if parts[1].startswith("/answerfirst/"):
        return parts[1], headers  # its body left unread
    if len(f.read(n)) != n:
        return None
    return parts[1], headers


def code_of(words, lo, hi):
    if len(words) < 2 or not words[1].isdigit():
        return None
    code = int(words[1])
    return code if lo <= code <= hi else None


def stream(conn, first, total, piece):
    conn.sendall(first)
    sent = 0
    while sent < total:
        conn.sendall(piece)
        sent += len(piece)
    conn.settimeout(None)
    while conn.recv(65536):  # held until the client leaves
        pass


def answer(conn, path):
    """Write the answer; False when the connection is done."""
    words = path.strip("/").split("/")
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    if words[0] == "early" and code_of(words, 100, 199):
        code = code_of(words, 100, 199)
        conn.sendall(b"HTTP/1.1 %d %s\r\nLink: </s.css>; rel=preload\r\n"
                     b"\r\n" % (code, reason(code).encode()))
        time.sleep(0.05)
        conn.sendall(ok)
        return True
    if words[0] == "keepalive" and code_of(words, 0, 3600) is not None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nKeep-Alive: timeout=%d\r\n"
                     b"Content-Length: 2\r\n\r\nok"
                     % code_of(words, 0, 3600))
        return True
    if words[0] == "status" and code_of(words, 200, 599):
        conn.sendall(b"HTTP/1.1 %d X\r\nContent-Length: 0\r\n\r\n"
                     % code_of(words, 200, 599))
        return True
    if words[0] == "extra" and code_of(words, 200, 599):
        extra = ok.replace(b"OK", b"Extra")
        conn.sendall(b"HTTP/1.1 %d X\r\nContent-Length: 0\r\n\r\n%s"
                     % (code_of(words, 200, 599), extra))
        return True
    if words[0] == "closedelim" and code_of(words, 200, 599):
        conn.sendall(b"HTTP/1.1 %d X\r\nConnection: close\r\n\r\nbye"
                     % code_of(words, 200, 599))
        return False
    if words[0] in ("hugechunk", "longline") and code_of(words, 200, 599):
        head = (b"HTTP/1.1 %d X\r\nTransfer-Encoding: chunked\r\n\r\n"
                % code_of(words, 200, 599))
        if words[0] == "hugechunk":
            stream(conn, head + b"10000000000\r\n", 64 * MIB,
                   b"x" * 65536)
        else:
            stream(conn, head, 64 * MIB, b"0" * 65536)
        return False
    conn.sendall(b"HTTP/1.1 404 X\r\nContent-Length: 0\r\n\r\n")
    return True


def serve(conn, log, lock):
    try:
        f = conn.makefile("rb")
        closes_at = None  # when a keepalive answer said it would close
        while True:
            req = read_request(f)
            if req is None:
                return
            path, headers = req
            entry = {"path": path, "key": headers.get("idempotency-key"),
                     "attempt": headers.get("lapse-attempt")}
            lost = closes_at is not None and time.monotonic() >= closes_at
            if lost:
                entry["lost"] = True
            with lock:
                log.write(json.dumps(entry) + "\n")
                log.flush()
            if lost:
                return
            closes_at = None
            words = path.strip("/").split("/")
            if words[0] == "keepalive" and code_of(words, 0, 3600) is not None:
                closes_at = time.monotonic() + code_of(words, 0, 3600)
            if path.startswith("/answerfirst/"):
                code = code_of(path.strip("/").split("/"), 200, 599)
                conn.sendall(b"HTTP/1.1 %d X\r\nContent-Length: 0\r\n\r\n"
                             % (code or 404))
                return
            if not answer(conn, path):
                return
    except (OSError, ValueError, ssl.SSLError):
        return
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    a = ap.parse_args()
    ctx = None
    if a.cert or a.key:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    log, lock = open(a.log, "a"), threading.Lock()
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as pf:
        pf.write("%d\n" % ls.getsockname()[1])
    os.rename(tmp, a.port_file)
    while True:
        conn, _ = ls.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if ctx is not None:
            conn.settimeout(10)
            try:
                conn = ctx.wrap_socket(conn, server_side=True)
            except (OSError, ssl.SSLError):
                conn.close()
                continue
            conn.settimeout(None)
        threading.Thread(target=serve, args=(conn, log, lock),
                         daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
