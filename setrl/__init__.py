"""setrl: an exploration-RL study pipeline for code generation (library; no Prefect here)."""

__version__ = "0.1.0"
