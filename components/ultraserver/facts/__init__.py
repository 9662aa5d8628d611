"""AWS, EKS and NVIDIA facts with their sources, and pure checks over them. No Pulumi, nothing else of ours."""
