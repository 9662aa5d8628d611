"""python -m ultraserver.preflight: the standalone preflight entry point."""

import sys

from ultraserver.preflight.checks import main

sys.exit(main())
