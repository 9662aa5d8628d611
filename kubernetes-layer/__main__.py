"""The Kubernetes layer as its own Pulumi project: reads the platform stack's cluster through a StackReference."""

from ultraserver.components.program import run_kubernetes

run_kubernetes()
