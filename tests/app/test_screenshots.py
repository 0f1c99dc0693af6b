"""`make screenshots` (app/screenshots.py) writes every screen at both sizes, each a real
picture of the window (not blank), from a demo workspace."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QImage

TOY_MODELS = Path(__file__).resolve().parents[1] / "fixtures" / "toy-models"


def test_screenshots_of_every_screen_at_both_sizes(qapp, tmp_path):
    from app import screenshots

    assert screenshots.main([str(tmp_path), "--models", str(TOY_MODELS)]) == 0
    screens = ("corpora", "training", "translate", "attention", "evaluation")
    for suffix, size in (("", (1400, 900)), ("-1280x720", (1280, 720))):
        for screen in screens:
            image = QImage(str(tmp_path / f"{screen}{suffix}.png"))
            assert (image.width(), image.height()) == size, (screen, suffix)
            # a drawn screen has many colours (text, tables, heatmaps), a blank one one
            colours = {image.pixel(x, y) for x in range(0, size[0], 37)
                       for y in range(0, size[1], 29)}
            assert len(colours) > 8, (screen, suffix, len(colours))
