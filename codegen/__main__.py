"""`python -m codegen` is the same as the `kiln` command."""

import sys

from codegen.cli import main

sys.exit(main())
