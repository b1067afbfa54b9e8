#!/usr/bin/env python3
"""A tiny SMTP sink (standard library only: asyncio; no smtpd, which is deprecated in 3.11 and
gone in 3.12; no aiosmtpd needed). Accepts every message and records it:
  OUTDIR/NNNN.eml        the message as received (dot-unstuffed, CRLF kept)
  OUTDIR/messages.jsonl  one line per message: {"n","mail_from","rcpt_to","helo","peer","bytes","file"}

  smtp-sink.py [--host 127.0.0.1] --port 10025 --outdir DIR

Prints "smtp-sink listening on HOST:PORT" once ready. Stop it by its pid (SIGTERM).
It answers EHLO with PIPELINING, 8BITMIME, SMTPUTF8, SIZE, ENHANCEDSTATUSCODES and accepts
MAIL/RCPT parameters without checking them; no AUTH, no STARTTLS (Dovecot's submission relays to it
in plain text on loopback).
"""
import argparse, asyncio, json, os, signal, sys

EHLO_LINES = ["PIPELINING", "8BITMIME", "SMTPUTF8", "SIZE 104857600", "ENHANCEDSTATUSCODES"]


class Sink:
    def __init__(self, outdir):
        self.outdir = outdir
        os.makedirs(outdir, exist_ok=True)
        self.n = len([f for f in os.listdir(outdir) if f.endswith(".eml")])

    def store(self, envelope, data):
        self.n += 1
        name = f"{self.n:04d}.eml"
        with open(os.path.join(self.outdir, name), "wb") as f:
            f.write(data)
        rec = dict(envelope, n=self.n, bytes=len(data), file=name)
        with open(os.path.join(self.outdir, "messages.jsonl"), "a") as f:
            f.write(json.dumps(rec) + "\n")
        return name

    async def handle(self, reader, writer):
        peer = writer.get_extra_info("peername")
        env = {"helo": None, "peer": f"{peer[0]}:{peer[1]}", "mail_from": None, "rcpt_to": []}

        def send(line):
            writer.write(line.encode() + b"\r\n")

        send("220 smtp-sink ESMTP ready")
        try:
            while True:
                await writer.drain()
                raw = await reader.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                verb = line.split(" ", 1)[0].upper()
                arg = line[len(verb):].strip()
                if verb in ("EHLO", "HELO", "LHLO"):
                    env["helo"] = arg
                    if verb == "HELO":
                        send("250 smtp-sink")
                    else:
                        lines = ["smtp-sink"] + EHLO_LINES
                        for l in lines[:-1]:
                            send("250-" + l)
                        send("250 " + lines[-1])
                elif verb == "MAIL":
                    env["mail_from"] = arg.split(":", 1)[1].strip().split(" ")[0] if ":" in arg else arg
                    env["rcpt_to"] = []
                    send("250 2.1.0 Ok")
                elif verb == "RCPT":
                    env["rcpt_to"].append(arg.split(":", 1)[1].strip().split(" ")[0] if ":" in arg else arg)
                    send("250 2.1.5 Ok")
                elif verb == "DATA":
                    if env["mail_from"] is None or not env["rcpt_to"]:
                        send("503 5.5.1 Bad sequence of commands")
                        continue
                    send("354 End data with <CR><LF>.<CR><LF>")
                    await writer.drain()
                    chunks = []
                    while True:
                        l = await reader.readline()
                        if not l:
                            return
                        if l in (b".\r\n", b".\n"):
                            break
                        if l.startswith(b"."):
                            l = l[1:]
                        chunks.append(l)
                    name = self.store(env, b"".join(chunks))
                    print(f"smtp-sink stored {name} from {env['mail_from']} to {env['rcpt_to']}", flush=True)
                    env = dict(env, mail_from=None, rcpt_to=[])
                    send(f"250 2.0.0 Ok: queued as {name}")
                elif verb == "BDAT":
                    send("502 5.5.1 BDAT not implemented")
                elif verb == "RSET":
                    env = dict(env, mail_from=None, rcpt_to=[])
                    send("250 2.0.0 Ok")
                elif verb == "NOOP":
                    send("250 2.0.0 Ok")
                elif verb == "QUIT":
                    send("221 2.0.0 Bye")
                    await writer.drain()
                    break
                else:
                    send("502 5.5.2 Command not recognized")
        finally:
            writer.close()


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=10025)
    p.add_argument("--outdir", required=True)
    a = p.parse_args()
    sink = Sink(a.outdir)
    server = await asyncio.start_server(sink.handle, a.host, a.port)
    print(f"smtp-sink listening on {a.host}:{a.port}", flush=True)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, stop.set_result, None)
    async with server:
        await stop


if __name__ == "__main__":
    asyncio.run(main())
