"""Sessions of the bundled demo runs and sentences of the demo corpora, for tests that
translate with a demo workspace (ensure_demo_workspace) made in their own tmp folder."""
from __future__ import annotations

from pathlib import Path

from core.infer.session import TranslationSession
from core.services.demo import DEMO_DIR
from core.workspace.store import Workspace

#: a demo corpus's source side per language
SOURCES = {"es": DEMO_DIR / "demo.es", "en": DEMO_DIR / "en-fr" / "demo.en"}


def session_of(root: Path, name: str) -> TranslationSession:
    """The demo workspace at `root`'s run `name`, loaded."""
    with Workspace.open(root, create=False) as ws:
        return TranslationSession.open(ws, [name])


def sentences(lang: str, n: int) -> list[str]:
    """The first `n` non-empty sentences of the demo corpus in `lang`."""
    return [s.strip() for s in SOURCES[lang].read_text(encoding="utf-8").splitlines()
            if s.strip()][:n]
