"""`make screenshots` (app/screenshots.py) writes every screen at both sizes, each a real
picture of the window (not blank), from a demo workspace; and the four-model comparison
with its exported figure; the .docx round trip's two pages."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QImage

from app.docx_pages import PAGE_WIDTH
from app.widgets.heatmap_legend import GOLD
from tests.app.pictures import ink_bands

TOY_MODELS = Path(__file__).resolve().parents[1] / "fixtures" / "toy-models"


def test_screenshots_of_every_screen_at_both_sizes(qapp, tmp_path):
    from app import screenshots

    assert screenshots.main([str(tmp_path), "--models", str(TOY_MODELS)]) == 0
    screens = ("corpora", "training", "translate", "attention", "evaluation",
               "attention-4-models")
    for suffix, size in (("", (1400, 900)), ("-1280x720", (1280, 720))):
        for screen in screens:
            image = QImage(str(tmp_path / f"{screen}{suffix}.webp"))
            assert (image.width(), image.height()) == size, (screen, suffix)
            # a drawn screen has many colours (text, tables, heatmaps), a blank one one
            colours = {image.pixel(x, y) for x in range(0, size[0], 37)
                       for y in range(0, size[1], 29)}
            assert len(colours) > 8, (screen, suffix, len(colours))
    # the comparison figure: four heatmaps, two by two, each with its gold markers
    figure = QImage(str(tmp_path / "attention-4-models-figure.png"))
    assert figure.width() > 600 and figure.height() > 400
    orange = QColor(GOLD)
    for qx in (0, 1):
        for qy in (0, 1):
            quarter = [(x, y) for x in range(qx * figure.width() // 2,
                                             (qx + 1) * figure.width() // 2, 2)
                       for y in range(qy * figure.height() // 2,
                                      (qy + 1) * figure.height() // 2, 2)]
            assert sum(QColor(figure.pixel(x, y)) == orange for x, y in quarter) > 20, (qx, qy)
    # the .docx round trip: the letter and its export, two pages with text on each,
    # the exported one with as many lines as the source (app.docx_pages)
    pages = QImage(str(tmp_path / "translate-docx.webp"))
    assert pages.width() == 2 * PAGE_WIDTH + 16
    left, right = pages.copy(0, 0, PAGE_WIDTH, pages.height()), pages.copy(
        PAGE_WIDTH + 16, 0, PAGE_WIDTH, pages.height())
    assert len(ink_bands(left)) >= 6 and len(ink_bands(right)) >= 6


def test_a_screen_picture_is_saved_without_loss(qapp, tmp_path):
    """save_picture writes WebP losslessly: every pixel reads back as it was drawn (a
    gradient and a one-pixel line, where a lossy coder would blur)."""
    from app.screenshots import save_picture

    image = QImage(300, 200, QImage.Format.Format_RGB32)
    for x in range(300):
        for y in range(200):
            image.setPixelColor(x, y, QColor((x * 7) % 256, (y * 13) % 256, (x + y) % 256))
    for x in range(300):
        image.setPixelColor(x, 100, QColor(255, 0, 0))
    path = save_picture(image, tmp_path / "shot.webp")
    back = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB32)
    assert back == image
    assert path.stat().st_size < 300 * 200 * 3  # compressed
