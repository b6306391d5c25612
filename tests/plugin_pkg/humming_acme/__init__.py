"""A third-party humming backend used by the plugin tests (the fictional ACME X1)."""
