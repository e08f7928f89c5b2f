"""Sessions as notebooks: export of the execution record, its HTML rendering, and replay."""
