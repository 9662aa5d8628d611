"""ultraserver: Amazon EKS for NVIDIA GB200 UltraServers, as Pulumi components."""
