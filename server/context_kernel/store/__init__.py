"""All SQL lives here: the SQLite database, its migrations and the repositories that hand out dataclasses."""
