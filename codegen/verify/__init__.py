"""Build generated code for a target, run it, and compare with a reference runtime."""
