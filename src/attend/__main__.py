"""`python -m attend` runs the CLI."""

import sys

from attend.cli import main

sys.exit(main())
