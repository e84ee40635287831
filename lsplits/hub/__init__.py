"""Publishing: uploads, the metric modules as Spaces, the demo Space."""

from pathlib import Path

SHIPPED = Path(__file__).resolve().parents[1] / "_shipped"
"""The repository's ``metrics/`` and ``spaces/`` as the package carries them: in a checkout ``_shipped/metrics``
and ``_shipped/spaces`` are committed symlinks to those folders, and the wheel holds their files, so
``push-metrics`` and ``push-space`` need no checkout."""
