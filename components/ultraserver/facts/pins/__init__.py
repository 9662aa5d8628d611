"""What the toolkit pins: Kubernetes-side versions, charts, add-ons, the AMI, manifests and images."""
