"""Pairwise similarity and quality functions: the registry, the lexical ones (ROUGE, BLEU) and the AMR graph metrics."""
