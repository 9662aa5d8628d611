"""Pure builders: typed settings and facts in, plain data out (NodeConfig, Helm values, manifests)."""
