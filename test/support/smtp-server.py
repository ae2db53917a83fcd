"""A real SMTP server for tests: Debian's python3-aiosmtpd on a loopback port, with STARTTLS
(required) or implicit TLS, and AUTH PLAIN/LOGIN against one user. Each message received is
written to <maildir>/<n>.json: envelope, the raw message, and whether TLS and AUTH were used.
Started by test/support/smtp.ts; prints READY once it listens."""
import argparse
import json
import os
import signal
import ssl
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--maildir", required=True)
parser.add_argument("--cert", required=True)
parser.add_argument("--key", required=True)
parser.add_argument("--mode", choices=["starttls", "tls"], required=True)
parser.add_argument("--user", required=True)
parser.add_argument("--password", required=True)
args = parser.parse_args()

context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
context.load_cert_chain(args.cert, args.key)
counter = {"n": 0}
lock = threading.Lock()


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = (
        isinstance(auth_data, LoginPassword)
        and auth_data.login.decode() == args.user
        and auth_data.password.decode() == args.password
    )
    # handled=False: aiosmtpd answers 535 itself on a failure.
    return AuthResult(success=ok, handled=False)


class Handler:
    async def handle_DATA(self, server, session, envelope):
        with lock:
            counter["n"] += 1
            n = counter["n"]
        record = {
            "mailFrom": envelope.mail_from,
            "rcptTos": envelope.rcpt_tos,
            "content": envelope.original_content.decode("utf-8", "replace"),
            # session.ssl is set by STARTTLS only; the transport knows implicit TLS too.
            "tls": server.transport.get_extra_info("ssl_object") is not None,
            "authenticated": bool(session.authenticated),
            "login": session.login_data.decode() if isinstance(session.login_data, bytes) else None,
        }
        path = os.path.join(args.maildir, f"{n:04d}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(path + ".tmp", path)
        return "250 Message accepted for delivery"


smtp_options = dict(authenticator=authenticator, auth_required=True)
if args.mode == "starttls":
    controller = Controller(
        Handler(), hostname="127.0.0.1", port=args.port, tls_context=context, require_starttls=True, **smtp_options
    )
else:
    # Implicit TLS: the whole connection is TLS, so AUTH needs no STARTTLS first.
    controller = Controller(
        Handler(), hostname="127.0.0.1", port=args.port, ssl_context=context, auth_require_tls=False, **smtp_options
    )
controller.start()
print("READY", flush=True)
stopped = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stopped.set())
stopped.wait()
controller.stop()
