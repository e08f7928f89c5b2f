"""Sessions as notebooks: export of the execution record (replay comes next)."""
