"""The web: fetching pages safely and turning what they return into indexable text."""
