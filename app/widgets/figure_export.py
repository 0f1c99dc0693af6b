"""A graphics scene (a heatmap, a plot) written as PNG, SVG or PDF. All three formats
paint the scene through one drawing path, `QGraphicsScene.render`, on a device of the
same logical DPI, so the SVG and the PDF show what the PNG (and the screen) shows;
SVG and PDF stay vector. `CellImage` keeps a heatmap's cells sharp in them."""
from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QImage, QPageSize, QPaintEngine, QPainter, QPdfWriter
from PySide6.QtSvg import QSvgGenerator

from app.widgets.svg_strokes import flatten_non_scaling_strokes
from core.atomic import write_bytes_atomic

VECTOR_ENGINES = (QPaintEngine.Type.SVG, QPaintEngine.Type.Pdf)


def export_scene(scene, source: QRectF, path: str | Path, dpi: int = 150) -> Path:
    """Write the `source` rectangle of a graphics scene as PNG, SVG or PDF (by the file
    suffix), atomically. PNG is scaled for `dpi` (the screen counts as 96 dpi); SVG and
    PDF are vector, the figure's size on screen, and do not depend on `dpi`."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".png":
        return write_bytes_atomic(path, render_png(scene, source, dpi))
    if suffix == ".svg":
        return write_bytes_atomic(path, svg_bytes(scene, source))
    if suffix == ".pdf":
        return write_bytes_atomic(path, pdf_bytes(scene, source))
    raise ValueError(f"{path}: export as .png, .svg or .pdf")


def layout_dpi() -> int:
    """The logical DPI the scene is drawn for: Qt's default, which a fresh QImage (the
    PNG) and a QPicture have. pyqtgraph caches axes, bars and keys as QPictures and
    sizes fonts in points; on a device of another DPI (QSvgGenerator's default 72, a
    QPdfWriter at 200 dpi) the pictures are rescaled by the ratio of the DPIs and the
    text resized while images and markers are not: the figure falls apart. The SVG and
    PDF devices therefore get this DPI."""
    return QImage(1, 1, QImage.Format.Format_ARGB32).logicalDpiX()


def render_png(scene, source: QRectF, dpi: int = 150) -> bytes:
    """The `source` rectangle of a graphics scene as PNG bytes, scaled for `dpi` (the
    screen counts as 96 dpi), on white."""
    scale = dpi / 96.0
    image = QImage(max(1, round(source.width() * scale)),
                   max(1, round(source.height() * scale)), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    scene.render(painter, QRectF(0, 0, image.width(), image.height()), source)
    painter.end()
    dots_per_metre = int(round(dpi / 0.0254))
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    return _image_bytes(image, "PNG")


def svg_bytes(scene, source: QRectF) -> bytes:
    """The scene as an SVG the size of the figure on screen; strokes that keep their
    width under zoom are written in page coordinates (svg_strokes) so that renderers
    without `vector-effect` (librsvg) draw them as thin as Qt and browsers do."""
    data, buffer = _buffer()
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setResolution(layout_dpi())
    generator.setSize(source.size().toSize())
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle("figure")
    painter = QPainter(generator)
    scene.render(painter, QRectF(0, 0, source.width(), source.height()), source)
    painter.end()
    buffer.close()
    return flatten_non_scaling_strokes(bytes(data.data()))


def pdf_bytes(scene, source: QRectF) -> bytes:
    """The scene as a one-page PDF the size of the figure on screen."""
    data, buffer = _buffer()
    writer = QPdfWriter(buffer)
    writer.setResolution(layout_dpi())
    # the on-screen figure is 96 dpi: page size in points = pixels * 72 / 96, exactly
    # (not the nearest standard paper size)
    page = QPageSize(QSizeF(source.width() * 0.75, source.height() * 0.75),
                     QPageSize.Unit.Point, "", QPageSize.SizeMatchPolicy.ExactMatch)
    writer.setPageSize(page)
    writer.setPageMargins(QMarginsF(0, 0, 0, 0))
    painter = QPainter(writer)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    # images stay lossless: Qt's default JPEG tints a heatmap's cells
    painter.setRenderHint(QPainter.RenderHint.LosslessImageRendering)
    scene.render(painter, QRectF(0, 0, writer.width(), writer.height()), source)
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

