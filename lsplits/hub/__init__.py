"""Publishing: uploads, the metric modules as Spaces, the demo Space."""
