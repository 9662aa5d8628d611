"""The packaged charts as a Helm repository on the loopback address, for ``rehearse --deploy``: the stack's
``kubernetes.chartMirror`` points at it, so that the Kubernetes provider's own Helm pulls each release's chart as it
pulls it from a deployer's mirror (index.yaml, the pinned version, HTTPS).

Why a repository rather than chart files: the toolkit never hands Helm a local path; a mirror is the path a
deployer without a route to the charts' own repositories takes (docs/deploy.md), and it is the one the rehearsal
can serve with nothing but the packaged charts (the charts' own hosts, an OCI registry among them, are not reachable
here). The index is written by the pinned Helm (``helm repo index``); the server is HTTPS under the rehearsal's
certificate authority (``rehearse/tls.py``), which the provider trusts through ``SSL_CERT_FILE``.
"""

from __future__ import annotations

import http.server
import io
import re
import shutil
import subprocess
import tarfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ultraserver.offline.helm_binary import helm_binary
from ultraserver.rehearse.emulator import LOOPBACK
from ultraserver.rehearse.tls import Authority, https_server

PATH = "/charts"


class _Files(http.server.BaseHTTPRequestHandler):
    server: Any

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        name = self.path.split("?", 1)[0].removeprefix(PATH + "/")
        file = self.server.folder / name
        if "/" in name or not file.is_file():
            self.send_response(404)
            self.end_headers()
            return
        body = file.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet."""


def relabelled(chart: Path, version: str, folder: Path) -> Path:
    """A copy of a packaged chart whose Chart.yaml says ``version`` (nothing else changes), as
    ``<name>-<version>.tgz`` in ``folder``: a version the rehearsal can change a release to when no other version of
    the chart is at hand."""
    name = ""
    out = io.BytesIO()
    with tarfile.open(chart) as source, tarfile.open(fileobj=out, mode="w:gz") as target:
        for member in source.getmembers():
            data = source.extractfile(member) if member.isfile() else None
            if data is not None and member.name.count("/") == 1 and member.name.endswith("/Chart.yaml"):
                text = data.read().decode()
                name = re.search(r"^name:\s*(\S+)", text, re.MULTILINE)[1]  # type: ignore[index]
                raw = re.sub(r"^version:.*$", f"version: {version}", text, count=1, flags=re.MULTILINE).encode()
                member.size = len(raw)
                data = io.BytesIO(raw)
            target.addfile(member, data)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}.tgz"
    path.write_bytes(out.getvalue())
    return path


@contextmanager
def chart_repository(charts: Sequence[Path], authority: Authority, folder: Path) -> Iterator[str]:
    """A Helm repository of ``charts`` (packaged .tgz) at https://127.0.0.1:PORT/charts, its files in ``folder``;
    yields the repository URL."""
    folder.mkdir(parents=True, exist_ok=True)
    for chart in charts:
        if chart.parent != folder:
            shutil.copy(chart, folder / chart.name)
    with https_server(_Files, authority, folder=folder) as server:
        url = f"https://{LOOPBACK}:{server.server_address[1]}{PATH}"
        subprocess.run(  # noqa: S603 - the pinned Helm, fixed arguments
            [str(helm_binary()), "repo", "index", str(folder), "--url", url], check=True, capture_output=True
        )
        yield url
