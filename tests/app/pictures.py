"""Helpers for tests that read pictures the workbench draws: text bands of a screenshot;
a figure's PNG, SVG (rendered by Qt's SVG renderer) and PDF (rendered by QtPdf) as
pixels of one size; and comparisons of such pixels (a colour's mask, the overlap of two
masks, the layout's difference, the pixels of one colour in a rectangle)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtPdf import QPdfDocument
from PySide6.QtSvg import QSvgRenderer


def ink_bands(image) -> list[tuple[int, int]]:
    """(first, last) row of each horizontal band of dark pixels (text lines)."""
    width, height = image.width(), image.height()
    ptr = image.constBits()
    rgb = np.frombuffer(ptr, np.uint8, count=height * image.bytesPerLine()).reshape(
        height, image.bytesPerLine())[:, :width * 4].reshape(height, width, 4)[..., :3]
    dark = (rgb.astype(int).sum(axis=2) < 300).any(axis=1)
    bands, start = [], None
    for row, ink in enumerate(dark):
        if ink and start is None:
            start = row
        elif not ink and start is not None:
            bands.append((start, row - 1))
            start = None
    return bands


# --- rendering the files --------------------------------------------------------------------
def pixels(image: QImage) -> np.ndarray:
    """height x width x RGB (float) of `image` laid on white."""
    flat = QImage(image.size(), QImage.Format.Format_RGB32)
    flat.fill(QColor("white"))
    painter = QPainter(flat)
    painter.drawImage(0, 0, image)
    painter.end()
    raw = np.frombuffer(flat.constBits(), np.uint8)
    raw = raw.reshape(flat.height(), flat.bytesPerLine() // 4, 4)[:, :flat.width(), :3]
    return raw[:, :, ::-1].astype(float)  # BGRA in memory -> RGB


def svg_pixels(svg: bytes, size: QSize, smooth: bool = False) -> np.ndarray:
    """`svg` rendered by Qt's SVG renderer at `size` on white (smoothing images when
    `smooth`, as some viewers do), as pixels."""
    renderer = QSvgRenderer(svg)
    assert renderer.isValid()
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, smooth)
    renderer.render(painter, QRectF(0, 0, size.width(), size.height()))
    painter.end()
    return pixels(image)


def pdf_pixels(path, size: QSize) -> np.ndarray:
    """The one page of the PDF at `path` rendered by QtPdf at `size`, as pixels."""
    document = QPdfDocument()
    assert document.load(str(path)) == QPdfDocument.Error.None_
    assert document.pageCount() == 1
    return pixels(document.render(0, size))


def exported_pixels(export, tmp_path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PNG (96 dpi: one pixel a screen pixel), SVG and PDF (at the dialog's default
    200 dpi) of one figure, all three as pixels of the PNG's size."""
    export(tmp_path / "f.png", 96)
    export(tmp_path / "f.svg", 200)
    export(tmp_path / "f.pdf", 200)
    png = QImage(str(tmp_path / "f.png"))
    return (pixels(png), svg_pixels((tmp_path / "f.svg").read_bytes(), png.size()),
            pdf_pixels(tmp_path / "f.pdf", png.size()))


# --- comparing pixels --------------------------------------------------------------------------
def colour_mask(rgb: np.ndarray, colour: QColor, tolerance: float = 40) -> np.ndarray:
    """Where `rgb` (height x width x RGB) is within `tolerance` of `colour`."""
    target = np.array([colour.red(), colour.green(), colour.blue()], dtype=float)
    return np.abs(rgb - target).max(axis=2) < tolerance


def overlap(a: np.ndarray, b: np.ndarray, slack: int = 1) -> float:
    """Intersection over union of two masks, each first widened by `slack` pixels (the
    renderers antialias edges and place glyphs a little differently)."""
    def widen(m: np.ndarray) -> np.ndarray:
        out = m.copy()
        for _ in range(slack):
            grown = out.copy()
            grown[1:] |= out[:-1]
            grown[:-1] |= out[1:]
            grown[:, 1:] |= out[:, :-1]
            grown[:, :-1] |= out[:, 1:]
            out = grown
        return out
    a, b = widen(a), widen(b)
    return float((a & b).sum() / max(1, (a | b).sum()))


def coarse_difference(a: np.ndarray, b: np.ndarray, block: int = 4) -> float:
    """Mean absolute difference (0-255) of two images averaged over block x block
    squares: the layout, not the antialiasing of the glyphs."""
    h, w = (a.shape[0] // block) * block, (a.shape[1] // block) * block

    def coarse(p: np.ndarray) -> np.ndarray:
        return p[:h, :w].reshape(h // block, block, w // block, block, 3).mean(axis=(1, 3))
    return float(np.abs(coarse(a) - coarse(b)).mean())


def colour_count(image: QImage, rect: QRectF, colour: QColor, tolerance: int = 40) -> int:
    """How many pixels of `image` inside `rect` (cut to the image) are `colour`, within
    `tolerance` (the sum of the red, green and blue differences)."""
    r = rect.toAlignedRect().intersected(image.rect())

    def near(c: QColor) -> bool:
        return (abs(c.red() - colour.red()) + abs(c.green() - colour.green())
                + abs(c.blue() - colour.blue())) < tolerance

    return sum(1 for x in range(r.left(), r.right()) for y in range(r.top(), r.bottom())
               if near(image.pixelColor(x, y)))
