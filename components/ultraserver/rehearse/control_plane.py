"""A real Kubernetes control plane on the loopback address: etcd and kube-apiserver, built from their Go modules
(``rehearse/binaries.py``), for one rehearsal.

kube-apiserver serves HTTPS under a certificate authority made for the rehearsal (``rehearse/tls.py``), authorizes
with RBAC, signs ServiceAccount tokens (TokenRequest), and runs its default admission plugins. The rehearsal
itself is an administrator (a static token in the ``system:masters`` group, kube-apiserver's ``--token-auth-file``):
it stands in for Pulumi and for the controllers this control plane does not run. Each in-cluster script connects
with a token issued for its own ServiceAccount, so RBAC judges it as in a cluster.

What runs here and what does not is in docs/rehearse.md ("Tiers").
"""

from __future__ import annotations

import json
import secrets
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from ultraserver.problems import ConfigError, Described, Problem
from ultraserver.rehearse.emulator import LOOPBACK
from ultraserver.rehearse.tls import new_authority

READY_WITHIN = 120.0
"""Seconds kube-apiserver gets to answer /readyz on a loaded 2-core machine (it is ready in 5-15 s unloaded)."""
ISSUER = "https://kubernetes.default.svc"
"""The ServiceAccount token issuer (EKS uses its OIDC issuer URL; nothing here reads it)."""
SERVICE_RANGE = "10.96.0.0/16"
"""The Service IP range the API server allocates from (allocations only: no traffic goes there)."""
ADMIN = "ultraserver-rehearsal"


class ApiError(Exception):
    """An answer other than 2xx: its status code and the API's Status message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"HTTP {code}: {message}")
        self.code = code
        self.message = message


def free_port() -> int:
    """A TCP port free on the loopback address now."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


class ControlPlane:
    """etcd and kube-apiserver for one rehearsal, in ``folder`` (their data, certificates and logs)."""

    def __init__(self, binaries: Mapping[str, Path], folder: Path) -> None:
        self.binaries = dict(binaries)
        self.folder = folder
        self.authority = new_authority()
        self.admin_token = secrets.token_urlsafe(24)
        self.port = 0
        self._processes: list[subprocess.Popen[bytes]] = []
        self._logs = ExitStack()
        self._tls: ssl.SSLContext | None = None

    @property
    def url(self) -> str:
        """The API server's https:// URL."""
        return f"https://{LOOPBACK}:{self.port}"

    def _start(self, name: str, args: list[str]) -> None:
        self.run(name, self.binaries[name], args)

    def run(self, name: str, program: Path, args: list[str], env: Mapping[str, str] | None = None) -> None:
        """Start a program beside the control plane, its output in ``<name>.log``; stopped with the control plane
        (the last started first)."""
        log = self._logs.enter_context((self.folder / f"{name}.log").open("wb"))
        command = [str(program), *args]
        self._processes.append(
            subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=None if env is None else dict(env))
        )

    def _files(self) -> dict[str, Path]:
        files = {
            "ca": self.folder / "ca.crt",
            "cert": self.folder / "apiserver.crt",
            "key": self.folder / "apiserver.key",
            "sa": self.folder / "service-account.key",
            "tokens": self.folder / "tokens.csv",
        }
        files["ca"].write_bytes(self.authority.ca)
        files["cert"].write_bytes(self.authority.certificate)
        files["key"].write_bytes(self.authority.key)
        signing = ec.generate_private_key(ec.SECP256R1())
        files["sa"].write_bytes(
            signing.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        # The verifying side reads public keys only.
        files["sa.pub"] = self.folder / "service-account.pub"
        files["sa.pub"].write_bytes(
            signing.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        files["tokens"].write_text(f'{self.admin_token},{ADMIN},{ADMIN},"system:masters"\n')
        return files

    def __enter__(self) -> ControlPlane:
        self.folder.mkdir(parents=True, exist_ok=True)
        files = self._files()
        client, peer = free_port(), free_port()
        etcd = f"http://{LOOPBACK}:{client}"
        self._start(
            "etcd",
            [
                "--name=rehearsal",
                f"--data-dir={self.folder / 'etcd'}",
                f"--listen-client-urls={etcd}",
                f"--advertise-client-urls={etcd}",
                f"--listen-peer-urls=http://{LOOPBACK}:{peer}",
                f"--initial-advertise-peer-urls=http://{LOOPBACK}:{peer}",
                f"--initial-cluster=rehearsal=http://{LOOPBACK}:{peer}",
                # A rehearsal's data lives for a minute: no fsync (etcd's own flag for tests).
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
        )
        self.port = free_port()
        self._start(
            "kube-apiserver",
            [
                f"--etcd-servers={etcd}",
                f"--bind-address={LOOPBACK}",
                f"--advertise-address={LOOPBACK}",
                f"--secure-port={self.port}",
                f"--cert-dir={self.folder / 'certs'}",
                f"--tls-cert-file={files['cert']}",
                f"--tls-private-key-file={files['key']}",
                "--authorization-mode=RBAC",
                # As EKS: privileged containers allowed (the device plugins' DaemonSets need them).
                "--allow-privileged=true",
                "--anonymous-auth=false",
                f"--token-auth-file={files['tokens']}",
                f"--service-account-issuer={ISSUER}",
                f"--service-account-key-file={files['sa.pub']}",
                f"--service-account-signing-key-file={files['sa']}",
                f"--service-cluster-ip-range={SERVICE_RANGE}",
                # No Endpoints for the `kubernetes` Service: a loopback address is not a valid endpoint.
                "--endpoint-reconciler-type=none",
                # Pod logs: the kubelet stand-in on the node's InternalIP, its certificate verified (real_api.py).
                "--kubelet-preferred-address-types=InternalIP",
                f"--kubelet-certificate-authority={files['ca']}",
                "--profiling=false",
            ],
        )
        try:
            self._tls = ssl.create_default_context(cafile=str(files["ca"]))
            self._wait_ready()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_WITHIN
        last = ""
        while time.monotonic() < deadline:
            for process, name in zip(self._processes, ("etcd", "kube-apiserver"), strict=True):
                if process.poll() is not None:
                    raise self._failed(f"{name} exited with {process.returncode}", name)
            try:
                self.call("GET", "/readyz")
                self.call("GET", "/api/v1/namespaces/default")
                return
            except (ApiError, OSError) as error:
                last = str(error)
            time.sleep(0.5)
        raise self._failed(f"not ready within {READY_WITHIN:.0f} s ({last})", "kube-apiserver")

    def _failed(self, what: str, name: str) -> ConfigError:
        log = (self.folder / f"{name}.log").read_text(errors="replace").strip().splitlines()[-8:]
        return ConfigError(
            Problem("--api real", Described(f"{name} {what}: " + " | ".join(log)), "a running control plane", "")
        )

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        for process in reversed(self._processes):
            process.terminate()
        for process in reversed(self._processes):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._processes.clear()
        self._logs.close()

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        token: str = "",
    ) -> Any:
        """One request as the administrator (or with ``token``); the decoded answer, ApiError for a non-2xx."""
        data = None if body is None else json.dumps(body).encode()
        headers = {
            "Authorization": f"Bearer {token or self.admin_token}",
            "Content-Type": content_type,
            "Accept": "application/json",
        }
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, context=self._tls, timeout=60) as response:  # noqa: S310
                text = response.read().decode()
        except urllib.error.HTTPError as error:
            raw = error.read().decode(errors="replace")
            try:
                message = json.loads(raw).get("message", raw)
            except ValueError:
                message = raw
            raise ApiError(error.code, message) from None
        try:
            return json.loads(text) if text else {}
        except ValueError:
            return text

    def version(self) -> dict[str, Any]:
        """The API server's /version."""
        return dict(self.call("GET", "/version"))

    def token(self, namespace: str, account: str) -> str:
        """A token for a ServiceAccount (TokenRequest, as the kubelet asks for a pod's projected token)."""
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        }
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token"
        return str(self.call("POST", path, request)["status"]["token"])

    def service_account(self, folder: Path, namespace: str, account: str) -> dict[str, str]:
        """``token`` and ``ca.crt`` in ``folder`` as Kubernetes mounts them in a pod running as the account; the
        pod's ``KUBERNETES_SERVICE_HOST``/``PORT``."""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "token").write_text(self.token(namespace, account))
        (folder / "ca.crt").write_bytes(self.authority.ca)
        return {"KUBERNETES_SERVICE_HOST": LOOPBACK, "KUBERNETES_SERVICE_PORT": str(self.port)}

    def kubeconfig(self, directory: Path) -> Path:
        """A kubeconfig for the administrator (the user who runs ``verify``), the server's CA embedded."""
        import base64

        document = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "rehearsal",
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self.authority.ca).decode(),
                    },
                }
            ],
            "users": [{"name": ADMIN, "user": {"token": self.admin_token}}],
            "contexts": [{"name": "rehearsal", "context": {"cluster": "rehearsal", "user": ADMIN}}],
            "current-context": "rehearsal",
        }
        path = directory / "kubeconfig"
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        return path
