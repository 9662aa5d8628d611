"""Pulumi components: wiring only; every decision comes from the builders, facts and config."""
