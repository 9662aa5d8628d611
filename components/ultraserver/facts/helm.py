"""What Helm and pulumi-kubernetes do with a release's wait and atomic flags, read in their sources.

- pulumi-kubernetes sets Helm's wait from skipAwait and passes atomic through, on install and on upgrade
  (pulumi/pulumi-kubernetes provider/pkg/provider/helm_release.go lines 608 and 618, 734 and 736 at v4.32.0, the
  newest tag stored; the SDK pinned here is 4.34, unverified at that tag): `client.Wait = !newRelease.SkipAwait`,
  `client.Atomic = newRelease.Atomic`.
- Helm then turns waiting back on for an atomic release: `i.Wait = i.Wait || i.Atomic` in pkg/action/install.go
  line 289 and `u.Wait = u.Wait || u.Atomic` in pkg/action/upgrade.go line 158 (helm/helm v3.20.2, the version
  pulumi-kubernetes v4.32.0 vendors in provider/go.mod).
- Waiting counts every desired pod of a DaemonSet (less maxUnavailable), so a release whose DaemonSets run on GPU
  nodes that waits rolls back (atomic) or fails on every node when a few GPU nodes cannot start its pod.
"""

from __future__ import annotations


def waits(atomic: bool, skip_await: bool) -> bool:
    """Whether Helm waits for the release's resources: unless skipAwait, and always when atomic."""
    return not skip_await or atomic
