"""A small AMR parser trained offline on The Little Prince: linearisation, model, training."""
