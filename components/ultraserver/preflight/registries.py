"""What a chart's repository lists: the Helm repository index, or an OCI registry's tags, and the newest release.

- A Helm repository serves ``<repo>/index.yaml`` with ``entries: {<chart>: [{version: ...}, ...]}`` (Helm docs,
  "The Chart Repository Guide", index file).
- An OCI registry lists a repository's tags at ``GET /v2/<name>/tags/list`` as ``{"name": ..., "tags": [...]}``
  (OCI distribution spec, "Listing Tags"). A registry that wants a token answers 401 with
  ``WWW-Authenticate: Bearer realm=...,service=...,scope=...``; an anonymous token comes from the realm with the
  service and scope as query parameters and is sent back as ``Authorization: Bearer`` (the Docker registry token
  authentication spec; public.ecr.aws works so, registry.k8s.io answers without a token). Helm stores a chart
  version's ``+`` as ``_`` in the tag (Helm docs, "Use OCI-based registries").

Pre-releases (a version with ``-``) are not offered as the newest: the toolkit pins releases.
"""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from email.message import Message
from urllib.error import HTTPError

import yaml

from ultraserver.facts.pins.charts import PinnedChart, version_tuple

Fetch = Callable[[str, Mapping[str, str]], bytes]
"""GET a URL with headers and return the body; raise OSError (urllib's HTTPError is one) when it fails."""

TIMEOUT_SECONDS = 30


def http_get(url: str, headers: Mapping[str, str]) -> bytes:
    """GET over HTTPS with urllib (no third-party client); a 4xx/5xx raises HTTPError."""
    if not url.startswith(("https://", "http://")):
        raise OSError(f"not an HTTP URL: {url}")
    request = urllib.request.Request(url, headers=dict(headers))
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:  # noqa: S310 - scheme checked above
        body: bytes = answer.read()
        return body


def _release(version: str) -> bool:
    return "-" not in version.lstrip("v") and version_tuple(version) is not None


def newest_of(versions: list[str]) -> str:
    """The newest release among version texts ('' when none is a release)."""
    releases = [v for v in versions if _release(v)]
    return max(releases, key=lambda v: version_tuple(v) or ()) if releases else ""


def index_versions(index: bytes, chart: str) -> list[str]:
    """The versions a Helm repository index lists for one chart."""
    document = yaml.safe_load(index) or {}
    entries = document.get("entries", {}) if isinstance(document, dict) else {}
    return [str(e.get("version", "")) for e in entries.get(chart, []) if isinstance(e, dict)]


_CHALLENGE = re.compile(r'([a-z]+)="([^"]*)"')


def _token(challenge: str, fetch: Fetch) -> str:
    """An anonymous bearer token for a registry's WWW-Authenticate challenge."""
    fields = dict(_CHALLENGE.findall(challenge))
    realm = fields.pop("realm", "")
    if not challenge.lower().startswith("bearer") or not realm:
        raise OSError(f"the registry asks for credentials this check does not have ({challenge or 'no challenge'})")
    answer = json.loads(fetch(f"{realm}?{urllib.parse.urlencode(fields)}", {}))
    return str(answer.get("token") or answer.get("access_token") or "")


def oci_tags(reference: str, fetch: Fetch) -> list[str]:
    """The tags of an OCI repository (``oci://host/path/chart``), with a token when the registry asks for one."""
    host, _, name = reference.removeprefix("oci://").partition("/")
    url = f"https://{host}/v2/{name}/tags/list"
    try:
        body = fetch(url, {})
    except HTTPError as exc:
        headers: Message | None = exc.headers
        challenge = headers.get("WWW-Authenticate", "") if exc.code == 401 and headers is not None else ""
        if not challenge:
            raise
        body = fetch(url, {"Authorization": f"Bearer {_token(challenge, fetch)}"})
    return [str(tag).replace("_", "+") for tag in json.loads(body).get("tags") or []]


def newest_chart_version(entry: PinnedChart, fetch: Fetch) -> str:
    """The newest release of a pinned chart in its own repository; OSError when the repository gives no usable
    answer (unreachable, refused, or not an index / tag list)."""
    try:
        if entry.repo.startswith("oci://"):
            return newest_of(oci_tags(f"{entry.repo.rstrip('/')}/{entry.name}", fetch))
        return newest_of(index_versions(fetch(f"{entry.repo.rstrip('/')}/index.yaml", {}), entry.name))
    except (ValueError, AttributeError, yaml.YAMLError) as exc:
        raise OSError(f"the repository's answer is not a chart list ({type(exc).__name__})") from None
