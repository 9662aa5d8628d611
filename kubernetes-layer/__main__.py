"""The Kubernetes layer as its own Pulumi project: reads the platform stack's cluster through a StackReference."""

from ultraserver.resources.program import run_kubernetes

run_kubernetes()
