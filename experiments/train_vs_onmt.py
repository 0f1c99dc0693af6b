"""Issue 17 item 1 in one command: the CPU training speed of the bench model against
OpenNMT-py 3.5.1 (the work, and its options, are core/tooling/train_vs_onmt.py's).

    python experiments/train_vs_onmt.py --rounds 3
    python experiments/train_vs_onmt.py --rounds 3 --json ratios.json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.tooling.train_vs_onmt import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
