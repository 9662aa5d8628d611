"""Capacity Blocks: windows, scheduled actions, reservation states and events, successive blocks."""
