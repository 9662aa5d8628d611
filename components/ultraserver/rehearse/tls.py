"""The API server as a pod reaches it: HTTPS on the loopback address, under a certificate authority of the rehearsal's
own, answering only the service account's bearer token, in front of the emulator (which speaks plain HTTP).

The in-cluster scripts (the drift check, the drain) read ``KUBERNETES_SERVICE_HOST``/``PORT`` and the service
account's ``token`` and ``ca.crt``, and verify the server's certificate against that CA; this front gives them all
four, so their in-cluster path runs as in a pod. A request without the token is answered 401, as an API server that
does not accept anonymous requests answers it.
"""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import json
import secrets
import ssl
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ultraserver.rehearse.emulator import LOOPBACK

VALID = datetime.timedelta(days=1)
"""How long the rehearsal's certificates are valid: one rehearsal."""


@dataclass(frozen=True)
class Authority:
    """A certificate authority and the server certificate it signed for the loopback address (PEM)."""

    ca: bytes
    certificate: bytes
    key: bytes


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def new_authority(host: str = LOOPBACK) -> Authority:
    """A fresh CA and a server certificate for ``host`` (an IP address SAN, as a pod reaches the API by address)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_id = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("ultraserver-rehearsal-ca"))
        .issuer_name(_name("ultraserver-rehearsal-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALID)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(ca_id, critical=False)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )  # keyCertSign, cRLSign
        .sign(ca_key, hashes.SHA256())
    )
    server = (
        x509.CertificateBuilder()
        .subject_name(_name("kubernetes"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALID)
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_id), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    return Authority(
        ca.public_bytes(pem),
        server.public_bytes(pem),
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


class _Forward(http.server.BaseHTTPRequestHandler):
    server: _Server

    def _forward(self) -> None:
        front = self.server.front
        authorized = self.headers.get("Authorization") == f"Bearer {front.token}"
        front.seen.append((self.command, self.path, authorized))
        if not authorized:
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Unauthorized", "code": 401}
            self._answer(401, "application/json", json.dumps(status).encode())
            return
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k in ("Content-Type", "Accept")}
        request = urllib.request.Request(front.upstream + self.path, data, headers, method=self.command)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - the emulator's http URL
                self._answer(response.status, response.headers.get("Content-Type", ""), response.read())
        except urllib.error.HTTPError as error:
            self._answer(error.code, error.headers.get("Content-Type", ""), error.read())

    def _answer(self, code: int, content_type: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _forward

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: the rehearsal reports what the scripts print, not each request."""


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    front: TlsFront


@contextmanager
def https_server(
    handler: type[http.server.BaseHTTPRequestHandler], authority: Authority, **attributes: Any
) -> Iterator[http.server.ThreadingHTTPServer]:
    """A threaded HTTP server on loopback behind TLS with ``authority``'s server certificate, serving in a thread of
    its own until the block ends; ``attributes`` are set on the server for ``handler`` to read."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory(prefix="ultraserver-tls-") as folder:
        (Path(folder) / "server.crt").write_bytes(authority.certificate)
        (Path(folder) / "server.key").write_bytes(authority.key)
        context.load_cert_chain(Path(folder) / "server.crt", Path(folder) / "server.key")
    server = _Server((LOOPBACK, 0), handler)
    for name, value in attributes.items():
        setattr(server, name, value)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, name="https-loopback", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class TlsFront:
    """HTTPS on loopback in front of ``upstream`` (http://...), under ``authority``, for one bearer token."""

    def __init__(self, upstream: str, authority: Authority | None = None, token: str = "") -> None:
        self.upstream = upstream.rstrip("/")
        self.authority = authority or new_authority()
        self.token = token or secrets.token_urlsafe(24)
        self.seen: list[tuple[str, str, bool]] = []
        """Each request: method, path, whether it carried the token."""
        self._server: http.server.ThreadingHTTPServer | None = None
        self._running = ExitStack()

    def service_account(self, folder: Path) -> dict[str, str]:
        """Write ``token`` and ``ca.crt`` into ``folder`` as Kubernetes mounts them in a pod; the pod's
        ``KUBERNETES_SERVICE_HOST``/``PORT`` for this front."""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "token").write_text(self.token)
        (folder / "ca.crt").write_bytes(self.authority.ca)
        return {"KUBERNETES_SERVICE_HOST": LOOPBACK, "KUBERNETES_SERVICE_PORT": str(self.port)}

    @property
    def port(self) -> int:
        assert self._server is not None, "the front is not running"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The front's https:// URL."""
        return f"https://{LOOPBACK}:{self.port}"

    def __enter__(self) -> TlsFront:
        self._server = self._running.enter_context(https_server(_Forward, self.authority, front=self))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._running.close()
