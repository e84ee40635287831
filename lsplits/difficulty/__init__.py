"""Show that a split is harder: fine-tune a task model on every config of a built dataset and report
accuracy with intervals, the relative error increase against ``random``, buckets and projections
(the Likelihood Splits paper's Tables 2-5 and 14), into a report folder and the dataset card.

The dataset is opened by :func:`lsplits.building.dataset.open_dataset`. Modules, in the order of the
flow: :mod:`.source` (a fingerprint of a config's content), :mod:`.tasks`
(model class, inputs, targets, metric per task), :mod:`.train` (resumable fine-tuning per config on
accelerate), :mod:`.evaluate` (the statistics), :mod:`.summary` (all numbers of one run),
:mod:`.report` (markdown, PNG, JSON), :mod:`.card` (the card's Difficulty section), and :mod:`.run`, which
checks everything first and then runs them (``lsplits difficulty``, :mod:`lsplits.cli.difficulty`, adds printing).
"""
