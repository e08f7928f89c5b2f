"""Scenarios for bench/context_savings.py: deterministic data generators and the scenario catalog.

Every generator writes into a directory it is given (a temporary project at run time) and returns
the facts it planted or can compute from what it wrote, so each scenario can check that the answer
really came back to the agent. Nothing here is committed data: the same seed gives the same bytes.
"""
