"""context-kernel: run an agent's code in warm Jupyter kernels; keep raw data out of its context."""

__version__ = "0.1.0"
