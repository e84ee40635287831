"""lsplits."""
