"""Prefect tasks: thin wrappers over setrl's stage functions (caching, retries, progress, artifacts)."""
