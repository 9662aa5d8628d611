"""Live checks of an AWS account before a deploy: capacity blocks, zones, AMIs, subnets, quotas."""
