"""Session memory: client hooks, events, snapshots across compaction.

Everything imported on the hook path (model, adapters, routing, extract, spool) uses the standard
library only: a hook runs on every tool call and must answer in well under 150 ms, which rules out
SQLAlchemy, anyio and the server stack. Only the rare events (PreCompact, SessionStart) open the
database.
"""
