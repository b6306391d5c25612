"""Capability files (YAML), one per architecture, product or device."""
