"""Building a Likelihood Split dataset: the pipeline, config strategies, Hub-layout export, card, statistics and plots, the demo run."""
