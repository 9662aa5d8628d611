"""Render a local HTML file in headless Chromium and read back what the page shows, over the DevTools protocol.

Debian's ``chromium`` package (installed by .ci/run) and ``websocket-client`` (already installed: the
``kubernetes`` client depends on it) are all it takes; no browser download, no Playwright.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websocket

# Offline, quiet, reproducible: no first-run UI, no background fetches, no sync, no GPU, a fresh profile.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# What the page reports about itself once loaded.
PROBE = """JSON.stringify({
  title: document.title,
  graphs: [...document.querySelectorAll('svg.graph')].map(s => {
    const r = s.getBoundingClientRect();
    return {width: r.width, height: r.height, nodes: s.querySelectorAll('g.node').length,
            edges: s.querySelectorAll('path.edge').length};
  }),
  cardPictures: [...document.querySelectorAll('svg.cards')].map(s => {
    const r = s.getBoundingClientRect();
    return {width: r.width, height: r.height, cards: s.querySelectorAll('g.card').length};
  }),
  groupTables: document.querySelectorAll('table.group-table').length,
  requests: performance.getEntriesByType('resource').map(e => e.name),
})"""


def chromium() -> str | None:
    """The Chromium binary, or None when it is not installed."""
    return shutil.which("chromium") or (os.path.exists("/usr/bin/chromium") and "/usr/bin/chromium") or None


@dataclass
class Rendered:
    """What the page showed and every console problem it raised."""

    probe: dict[str, Any]
    problems: list[str] = field(default_factory=list)
    screenshot: bytes = b""


class DevTools:
    """A minimal DevTools-protocol client over one page target."""

    def __init__(self, url: str) -> None:
        self.socket = websocket.create_connection(url, timeout=60)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self.events.append(message)

    def wait_for(self, method: str) -> None:
        while not any(e.get("method") == method for e in self.events):
            self.events.append(json.loads(self.socket.recv()))


def _problems(events: list[dict[str, Any]]) -> list[str]:
    """Console errors and warnings, uncaught exceptions and failed loads the page produced."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
            found.append(f"console.{params['type']}: {params.get('args')}")
        elif method == "Runtime.exceptionThrown":
            found.append(f"exception: {params.get('exceptionDetails')}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            found.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
    return found


@contextmanager
def _browser(binary: str, width: int, height: int) -> Iterator[str]:
    """Start headless Chromium on a free DevTools port; yield its page target's websocket URL."""
    # Chromium's helper processes (crashpad, renderer, GPU) outlive the main one and keep writing to the profile:
    # they run in their own session, all are stopped, and a file one still adds during cleanup is left in /tmp.
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        process = subprocess.Popen(
            [
                binary,
                *FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            deadline = time.monotonic() + 60
            while not (port_file.exists() and port_file.read_text().strip()):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"chromium did not start (exit code {process.poll()})")
                time.sleep(0.1)
            port = port_file.read_text().split()[0]
            # The port file can appear before the first page target does (seen under load): ask until it is listed.
            while True:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as reply:  # noqa: S310
                    pages = [t for t in json.loads(reply.read()) if t.get("type") == "page"]
                if pages:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("chromium started but listed no page target")
                time.sleep(0.1)
            yield pages[0]["webSocketDebuggerUrl"]
        finally:
            _stop_session(process)


def _stop_session(process: subprocess.Popen[bytes]) -> None:
    """Stop Chromium and every process of its session (SIGTERM, then SIGKILL after 30 s)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=30)
            if sig == signal.SIGTERM:
                time.sleep(0.2)  # helpers exit just after the main process; then SIGKILL any left
        except subprocess.TimeoutExpired:
            continue


def render(page: Path, screenshot: bool = False, width: int = 1400, height: int = 1000) -> Rendered:
    """Load ``page`` (a local file), wait for the load event, probe the DOM and collect console problems."""
    binary = chromium()
    if binary is None:
        raise RuntimeError("chromium is not installed")
    with _browser(binary, width, height) as url:
        tools = DevTools(url)
        try:
            for domain in ("Runtime", "Log", "Page"):
                tools.call(f"{domain}.enable")
            tools.call("Page.navigate", url=page.resolve().as_uri())
            tools.wait_for("Page.loadEventFired")
            probe = json.loads(tools.call("Runtime.evaluate", expression=PROBE, returnByValue=True)["result"]["value"])
            shot = b""
            if screenshot:
                data = tools.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
                shot = base64.b64decode(data)
            return Rendered(probe, _problems(tools.events), shot)
        finally:
            tools.socket.close()
