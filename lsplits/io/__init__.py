"""Safe outputs: lsplits replaces only what it wrote, and replaces it in one step.

One concept a module:

- :mod:`lsplits.io.atomic`: atomic file and folder writes through a staging folder beside the target
  (``atomic_path``, ``atomic_write_text``, ``atomic_write_parquet``), and the removal of staging folders a
  killed process left.
- :mod:`lsplits.io.records`: how lsplits marks what it writes: a folder's marker file listing its files
  (``lsplits.json`` in a built dataset, ``.lsplits-output.json`` elsewhere), and the settings record written
  next to an output file (``beams.settings.json``).
- :mod:`lsplits.io.guard`: the one output guard. Every command that writes calls ``check_output`` on its
  output path before any work and writes through ``output_folder`` / ``atomic_write_parquet``; a command that
  adds files to a folder another command wrote checks them with ``check_additions`` first.
- :mod:`lsplits.io.locks`: the lock that refuses a second command writing the same output while the first runs.
- :mod:`lsplits.io.storage`: cache folders: where they are by default (``cache_folder``), whether they can be
  written (``check_writable``), and one line for a full or read-only disk (``storage_problem``).
"""
