"""Graph -> Graph passes, one per module, composed in pipeline.py."""
