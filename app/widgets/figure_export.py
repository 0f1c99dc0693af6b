"""A graphics scene (a heatmap, a plot), or several side by side (`Part`s: the Attention
screen's comparison), written as PNG, SVG or PDF. All three formats
paint the scene through one drawing path, `QGraphicsScene.render`, on a device of the
same logical DPI, so the SVG and the PDF show what the PNG (and the screen) shows;
SVG and PDF stay vector. `CellImage` keeps a heatmap's cells sharp in them."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QImage, QPageSize, QPaintEngine, QPainter, QPdfWriter
from PySide6.QtSvg import QSvgGenerator

from app.widgets.svg_strokes import flatten_non_scaling_strokes
from core.atomic import write_bytes_atomic

VECTOR_ENGINES = (QPaintEngine.Type.SVG, QPaintEngine.Type.Pdf)


class Part(NamedTuple):
    """One scene's rectangle placed in a figure: `source` of `scene`, drawn with its top
    left corner at `at` (figure pixels, the screen's 96 dpi)."""

    scene: Any
    source: QRectF
    at: QPointF = QPointF(0, 0)


def figure_size(parts: Sequence[Part]) -> QSizeF:
    """The size of the figure that holds every part (from its top left corner, 0, 0)."""
    return QSizeF(max(p.at.x() + p.source.width() for p in parts),
                  max(p.at.y() + p.source.height() for p in parts))


def export_scene(scene, source: QRectF, path: str | Path, dpi: int = 150) -> Path:
    """Write the `source` rectangle of a graphics scene as PNG, SVG or PDF (by the file
    suffix), atomically. PNG is scaled for `dpi` (the screen counts as 96 dpi); SVG and
    PDF are vector, the figure's size on screen, and do not depend on `dpi`."""
    return export_parts([Part(scene, source)], path, dpi)


def export_parts(parts: Sequence[Part], path: str | Path, dpi: int = 150) -> Path:
    """Write one figure made of several scenes' rectangles (e.g. the Attention screen's
    heatmaps side by side) as PNG, SVG or PDF, as export_scene writes one."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".png":
        return write_bytes_atomic(path, parts_png(parts, dpi))
    if suffix == ".svg":
        return write_bytes_atomic(path, parts_svg(parts))
    if suffix == ".pdf":
        return write_bytes_atomic(path, parts_pdf(parts))
    raise ValueError(f"{path}: export as .png, .svg or .pdf")


def layout_dpi() -> int:
    """The logical DPI the scene is drawn for: Qt's default, which a fresh QImage (the
    PNG) and a QPicture have. pyqtgraph caches axes, bars and keys as QPictures and
    sizes fonts in points; on a device of another DPI (QSvgGenerator's default 72, a
    QPdfWriter at 200 dpi) the pictures are rescaled by the ratio of the DPIs and the
    text resized while images and markers are not: the figure falls apart. The SVG and
    PDF devices therefore get this DPI."""
    return QImage(1, 1, QImage.Format.Format_ARGB32).logicalDpiX()


def _paint(painter: QPainter, parts: Sequence[Part], scale: float) -> None:
    """The one drawing path of every format: each part's scene rendered into its place,
    `scale` device pixels per figure pixel."""
    for part in parts:
        target = QRectF(part.at.x() * scale, part.at.y() * scale,
                        part.source.width() * scale, part.source.height() * scale)
        part.scene.render(painter, target, part.source)


def render_png(scene, source: QRectF, dpi: int = 150) -> bytes:
    """The `source` rectangle of a graphics scene as PNG bytes, scaled for `dpi` (the
    screen counts as 96 dpi), on white."""
    return parts_png([Part(scene, source)], dpi)


def parts_png(parts: Sequence[Part], dpi: int = 150) -> bytes:
    """A figure of `parts` as PNG bytes, scaled for `dpi`, on white."""
    scale = dpi / 96.0
    size = figure_size(parts)
    image = QImage(max(1, round(size.width() * scale)),
                   max(1, round(size.height() * scale)), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    _paint(painter, parts, image.width() / size.width())
    painter.end()
    dots_per_metre = int(round(dpi / 0.0254))
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    return _image_bytes(image, "PNG")


def svg_bytes(scene, source: QRectF) -> bytes:
    """The scene as an SVG the size of the figure on screen (parts_svg)."""
    return parts_svg([Part(scene, source)])


def parts_svg(parts: Sequence[Part]) -> bytes:
    """A figure of `parts` as an SVG the size of the figure on screen; strokes that keep
    their width under zoom are written in page coordinates (svg_strokes) so that renderers
    without `vector-effect` (librsvg) draw them as thin as Qt and browsers do."""
    size = figure_size(parts)
    data, buffer = _buffer()
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setResolution(layout_dpi())
    generator.setSize(size.toSize())
    generator.setViewBox(QRectF(0, 0, size.width(), size.height()))
    generator.setTitle("figure")
    painter = QPainter(generator)
    _paint(painter, parts, 1.0)
    painter.end()
    buffer.close()
    return flatten_non_scaling_strokes(bytes(data.data()))


def pdf_bytes(scene, source: QRectF) -> bytes:
    """The scene as a one-page PDF the size of the figure on screen (parts_pdf)."""
    return parts_pdf([Part(scene, source)])


def parts_pdf(parts: Sequence[Part]) -> bytes:
    """A figure of `parts` as a one-page PDF the size of the figure on screen."""
    size = figure_size(parts)
    data, buffer = _buffer()
    writer = QPdfWriter(buffer)
    writer.setResolution(layout_dpi())
    # the on-screen figure is 96 dpi: page size in points = pixels * 72 / 96, exactly
    # (not the nearest standard paper size)
    page = QPageSize(QSizeF(size.width() * 0.75, size.height() * 0.75),
                     QPageSize.Unit.Point, "", QPageSize.SizeMatchPolicy.ExactMatch)
    writer.setPageSize(page)
    writer.setPageMargins(QMarginsF(0, 0, 0, 0))
    painter = QPainter(writer)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    # images stay lossless: Qt's default JPEG tints a heatmap's cells
    painter.setRenderHint(QPainter.RenderHint.LosslessImageRendering)
    _paint(painter, parts, writer.width() / size.width())
    painter.end()
    buffer.close()
    return bytes(data.data())


class CellImage(pg.ImageItem):
    """An ImageItem whose pixels (a heatmap's cells) stay sharp squares in SVG and PDF.
    Viewers smooth a small image they enlarge (librsvg ignores `image-rendering`), which
    turns a 9 x 8 matrix into a blur; on a vector device the image is drawn from a copy
    enlarged without smoothing, each cell a block of pixels, into the same rectangle."""

    LARGEST = 1024  # pixels along the longer side of the enlarged copy

    def paint(self, painter, *args):
        if painter.paintEngine() is None or painter.paintEngine().type() not in VECTOR_ENGINES:
            super().paint(painter, *args)
            return
        if self.image is None:
            return
        self.render()  # the QImage of the current data and levels
        if self.qimage is None:
            return
        w, h = self.qimage.width(), self.qimage.height()
        k = max(1, self.LARGEST // max(w, h, 1))
        big = self.qimage.scaled(w * k, h * k, Qt.AspectRatioMode.IgnoreAspectRatio,
                                 Qt.TransformationMode.FastTransformation)
        painter.drawImage(QRectF(0, 0, w, h), big)


def _buffer() -> tuple[QByteArray, QBuffer]:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    return data, buffer


def _image_bytes(image: QImage, fmt: str) -> bytes:
    data, buffer = _buffer()
    image.save(buffer, fmt)
    buffer.close()
    return bytes(data.data())

