"""Live checks of a deployed cluster: node facts, NVLink and EFA fabric checks, read back and judged."""
