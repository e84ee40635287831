"""What every command needs while it runs: the one logging setup and the summary of repeated warnings,
progress (a bar on a terminal, a periodic log line elsewhere), stage timings, one-line messages for missing extras,
which third-party exceptions mean a failed download or load (:mod:`~lsplits.runtime.failures`), and worker
processes that signals and stops end cleanly (:mod:`~lsplits.runtime.pool`).
"""
