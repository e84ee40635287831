"""``python -m lsplits`` (what ``accelerate launch -m lsplits`` runs)."""

import sys

from .cli import main

sys.exit(main())
