"""``python -m agtaild.daemon``: the same as the ``agtaild`` command."""

import sys

from agtaild.daemon.main import main

sys.exit(main())
