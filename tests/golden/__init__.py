"""Golden snapshots of generated C for small models (see update.py)."""
