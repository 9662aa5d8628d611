"""docs/deploy.md names every registry the nodes pull from: the packaged charts' image registries and the toolkit's
own job images, so a cluster without internet egress knows what to mirror.

The charts are read from the packaged copies in ../shared/upstream/charts/ (the one place tests may read outside the
repository); a missing chart fails the test (skipped only in a clone with no packaged charts beside it, never in
.ci/run).
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from helpers.render import packaged_chart
from helpers.stacks import ROOT
from ultraserver.facts.pins import manifests

DEPLOY = (ROOT / "docs" / "deploy.md").read_text()
# Subcharts of kube-prometheus-stack that its defaults install (windows exporter is off: windowsMonitoring.enabled).
PROMETHEUS_PARTS = ("", "charts/grafana/", "charts/kube-state-metrics/", "charts/prometheus-node-exporter/")


def chart_values(archive: str, part: str = "") -> dict[str, Any]:
    with tarfile.open(packaged_chart(archive)) as tar:
        name = archive.rsplit("-", 1)[0]
        member = tar.extractfile(f"{name}/{part}values.yaml")
        assert member is not None
        values: dict[str, Any] = yaml.safe_load(member.read())
    return values


def registries(values: Any) -> Iterator[str]:
    """Every image registry a values tree names (``registry`` next to ``repository``)."""
    if isinstance(values, dict):
        if isinstance(values.get("registry"), str) and "repository" in values:
            yield values["registry"]
        for value in values.values():
            yield from registries(value)
    elif isinstance(values, list):
        for value in values:
            yield from registries(value)


def test_the_dranet_image_and_its_region_are_listed() -> None:
    repository = chart_values("aws-dranet-1.0.0.tgz")["image"]["repository"]
    host, _, path = repository.partition("/")
    assert host == "602401143452.dkr.ecr.us-west-2.amazonaws.com" and f"`{host}`" in DEPLOY
    assert f"{path.rsplit('/', 1)[-1]}:" in DEPLOY and "us-west-2" in DEPLOY


@pytest.mark.parametrize("part", PROMETHEUS_PARTS)
def test_every_kube_prometheus_stack_registry_is_listed(part: str) -> None:
    found = set(registries(chart_values("kube-prometheus-stack-88.5.3.tgz", part)))
    assert found
    assert {r for r in found if f"`{r}`" not in DEPLOY} == set()


@pytest.mark.parametrize("image", sorted(manifests.IMAGE_SOURCES))
def test_every_job_image_registry_is_listed(image: str) -> None:
    host, _, repository = image.split(":", 1)[0].partition("/")
    assert f"`{host}`" in DEPLOY and repository in DEPLOY
