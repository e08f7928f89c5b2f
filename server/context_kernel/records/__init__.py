"""The session record: its service (ctx_stats, ctx_insight, ctx_purge), the figures, the viewer, what is published."""
