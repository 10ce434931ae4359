"""The frozen application's entry point: the same `assay` command as `pip install` gives."""

import sys

from ui.main import main

sys.exit(main())
