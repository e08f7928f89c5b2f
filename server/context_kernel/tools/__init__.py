"""The thin MCP layer: typed tool functions that call one core service and return MCP content."""
