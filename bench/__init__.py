"""Benchmarks: one command each, results committed as Markdown tables."""
