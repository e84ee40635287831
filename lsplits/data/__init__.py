"""Inputs: tasks (prompt, query, label, filters), loading with stable ids, the builder registry, the synthetic demo data."""
