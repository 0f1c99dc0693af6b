"""Entry point: no arguments opens the GUI; a sub-command runs the CLI."""
import sys

from core.entry import main

if __name__ == "__main__":
    sys.exit(main())
