"""Chart sources on the loopback address for the real `helm pull`: a Helm repository (its index.yaml written by
`helm repo index`) and an OCI registry (the part of the distribution API that `helm push` and `helm pull` call),
both over HTTPS under a certificate authority made for the test. Helm trusts it through SSL_CERT_FILE (Go's
crypto/x509 reads that file in place of the system roots on Linux: root_unix.go, `certFileEnv`).
"""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

import pytest
from ultraserver.rehearse.tls import Authority, https_server, new_authority

LOOPBACK = "127.0.0.1"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def _any(self) -> None:
        self.server.seen.append((self.command, self.path))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        code, headers, data = self.server.answer(self.command, self.path, body)
        self.send_response(code)
        for name, value in {"Content-Length": str(len(data)), **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = _any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet."""


Answer = tuple[int, dict[str, str], bytes]


class _Server(http.server.ThreadingHTTPServer):
    answer: Callable[[str, str, bytes], Answer]
    seen: list[tuple[str, str]]


@contextmanager
def serve(answer: Callable[[str, str, bytes], Answer], authority: Authority) -> Iterator[_Server]:
    """An HTTPS server on loopback answering each (method, path, body) with ``answer``."""
    with https_server(_Handler, authority, answer=answer, seen=[]) as server:
        yield cast(_Server, server)


def helm_home(monkeypatch: pytest.MonkeyPatch, folder: Path, authority: Authority) -> None:
    """Helm's cache, config and data in ``folder`` (not the user's), trusting ``authority``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ca.pem").write_bytes(authority.ca)
    monkeypatch.setenv("SSL_CERT_FILE", str(folder / "ca.pem"))
    for kind in ("CACHE", "CONFIG", "DATA"):
        monkeypatch.setenv(f"HELM_{kind}_HOME", str(folder / kind.lower()))


@contextmanager
def chart_repository(helm: Path, charts: list[Path], authority: Authority) -> Iterator[tuple[str, _Server]]:
    """A Helm repository of ``charts`` at https://127.0.0.1:PORT/charts (index.yaml by `helm repo index`)."""
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root) / "charts"
        folder.mkdir()
        for chart in charts:
            shutil.copy(chart, folder / chart.name)

        def answer(method: str, path: str, body: bytes) -> Answer:
            file = folder / urlsplit(path).path.removeprefix("/charts/")
            if method in ("GET", "HEAD") and path.startswith("/charts/") and file.is_file():
                return 200, {"Content-Type": "application/octet-stream"}, file.read_bytes()
            return 404, {}, b"not found"

        with serve(answer, authority) as server:
            url = f"https://{LOOPBACK}:{server.server_address[1]}/charts"
            subprocess.run([str(helm), "repo", "index", str(folder), "--url", url], check=True)  # noqa: S603
            yield url, server


class Registry:
    """Blobs and manifests by repository, as `helm push` stores them and `helm pull` reads them."""

    PATH = re.compile(r"/v2/(?P<name>.+)/(?P<kind>blobs|manifests|tags)/(?P<rest>[^?]*)")

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.manifests: dict[tuple[str, str], tuple[str, bytes]] = {}
        self.uploads: dict[str, bytes] = {}

    def answer(self, method: str, path: str, body: bytes) -> Answer:
        if urlsplit(path).path in ("/v2", "/v2/"):
            return 200, {"Content-Type": "application/json"}, b"{}"
        match = self.PATH.match(urlsplit(path).path)
        if not match:
            return 404, {}, b""
        name, kind, rest = match["name"], match["kind"], match["rest"]
        query = parse_qs(urlsplit(path).query)
        if kind == "tags":
            tags = sorted(ref for (repo, ref), _ in self.manifests.items() if repo == name and ":" not in ref)
            return 200, {"Content-Type": "application/json"}, json.dumps({"name": name, "tags": tags}).encode()
        if kind == "manifests":
            return self._manifest(method, name, rest, body)
        return self._blob(method, name, rest, body, query)

    def _manifest(self, method: str, name: str, ref: str, body: bytes) -> Answer:
        if method == "PUT":
            digest = "sha256:" + hashlib.sha256(body).hexdigest()
            media = json.loads(body).get("mediaType", "application/vnd.oci.image.manifest.v1+json")
            self.manifests[name, ref] = self.manifests[name, digest] = (media, body)
            return 201, {"Docker-Content-Digest": digest, "Location": f"/v2/{name}/manifests/{digest}"}, b""
        if (name, ref) not in self.manifests:
            return 404, {"Content-Type": "application/json"}, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}'
        media, data = self.manifests[name, ref]
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        return 200, {"Content-Type": media, "Docker-Content-Digest": digest}, data

    def _blob(self, method: str, name: str, rest: str, body: bytes, query: dict[str, list[str]]) -> Answer:
        if rest.startswith("uploads"):
            upload = rest.removeprefix("uploads").strip("/")
            if method == "POST":
                upload = uuid.uuid4().hex
                self.uploads[upload] = body
                return 202, {"Location": f"/v2/{name}/blobs/uploads/{upload}", "Range": "0-0"}, b""
            self.uploads[upload] = self.uploads.get(upload, b"") + body
            if method == "PATCH":
                end = len(self.uploads[upload]) - 1
                return 202, {"Location": f"/v2/{name}/blobs/uploads/{upload}", "Range": f"0-{end}"}, b""
            data, digest = self.uploads.pop(upload), query["digest"][0]
            if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
                return 400, {}, b'{"errors":[{"code":"DIGEST_INVALID"}]}'
            self.blobs[digest] = data
            return 201, {"Docker-Content-Digest": digest, "Location": f"/v2/{name}/blobs/{digest}"}, b""
        if rest not in self.blobs:
            return 404, {}, b'{"errors":[{"code":"BLOB_UNKNOWN"}]}'
        return 200, {"Content-Type": "application/octet-stream", "Docker-Content-Digest": rest}, self.blobs[rest]


@contextmanager
def oci_registry(helm: Path, charts: list[Path], authority: Authority) -> Iterator[tuple[str, _Server]]:
    """An OCI registry at oci://127.0.0.1:PORT/charts holding ``charts``, each pushed by `helm push`."""
    registry = Registry()
    with serve(registry.answer, authority) as server:
        url = f"oci://{LOOPBACK}:{server.server_address[1]}/charts"
        for chart in charts:
            subprocess.run([str(helm), "push", str(chart), url], check=True, capture_output=True)  # noqa: S603
        yield url, server


def loopback_authority() -> Authority:
    """A certificate authority and a server certificate for 127.0.0.1."""
    return new_authority(LOOPBACK)
