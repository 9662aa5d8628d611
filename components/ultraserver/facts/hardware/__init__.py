"""The hardware: UltraServer and instance types, network cards and EFA layouts, device modes."""
