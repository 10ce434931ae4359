"""`python -m app.cli`: the `assay` command without its windows."""

import sys

from app.cli import main

sys.exit(main())
