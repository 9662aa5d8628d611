"""AWS: identifiers and tags, IAM, limits, networks, and the Node Termination Handler's AWS side."""
