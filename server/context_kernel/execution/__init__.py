"""Running a cell: the service behind ctx_execute, output collection, trimming and file access."""
