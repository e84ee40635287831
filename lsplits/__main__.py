"""``python -m lsplits`` (what ``accelerate launch -m lsplits`` runs)."""

import sys

from lsplits.cli.parser import main

sys.exit(main())
