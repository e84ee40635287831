"""Pairwise similarity and quality functions: the registry and the AMR graph metrics."""
