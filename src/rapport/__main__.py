import sys

from rapport.cli import main

sys.exit(main())
