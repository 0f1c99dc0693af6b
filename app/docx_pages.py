"""A Word document drawn as a page: the `.docx round trip` picture of `make screenshots`
shows the document a translator opened beside the one the workbench exported, both read
back from their files.

The page is drawn from what python-docx (the `dev` extra, which `make` installs) reads in
the file, not from the workbench's own reader: each body paragraph with its style
(headings larger, list items bulleted) and each run's bold / italic / underline, blank
paragraphs kept as blank lines. It is a picture of the file's structure, not a Word
renderer: fonts, tables and pictures are left out.
"""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen, QTextDocument

#: point size of a paragraph by its style name ("Title", "Heading 1" ...); others BODY_PT
HEADING_PT = {"Title": 22, "Heading 1": 17, "Heading 2": 14, "Heading 3": 12}
BODY_PT = 10
PAGE_WIDTH, PAGE_MARGIN = 520, 36  # pixels


def docx_html(path: str | Path) -> str:
    """The body paragraphs of the .docx at `path` as HTML: one <p> per paragraph (an
    empty one for a blank paragraph), sized by its style, runs in <b>/<i>/<u>."""
    import docx  # the dev extra: only the screenshots draw documents

    blocks = []
    for paragraph in docx.Document(str(path)).paragraphs:
        style = paragraph.style.name if paragraph.style is not None else "Normal"
        size = HEADING_PT.get(style, BODY_PT)
        runs = "".join(_run_html(run) for run in paragraph.runs) or "&nbsp;"
        if style.startswith("List"):
            runs = "&#8226;&nbsp;&nbsp;" + runs
        weight = " font-weight:600;" if style in HEADING_PT else ""
        blocks.append(f'<p style="font-size:{size}pt;{weight} margin-bottom:6px">{runs}</p>')
    return "\n".join(blocks)


def _run_html(run) -> str:
    text = html.escape(run.text)
    if not text:
        return ""
    for on, tag in ((run.bold, "b"), (run.italic, "i"), (run.underline, "u")):
        if on:
            text = f"<{tag}>{text}</{tag}>"
    return text


def page_image(path: str | Path, caption: str) -> QImage:
    """The document at `path` drawn as a white page under `caption` (its file name and
    what it is), PAGE_WIDTH pixels wide, as tall as its text."""
    doc = QTextDocument()
    doc.setDefaultFont(QFont("DejaVu Sans", BODY_PT))
    doc.setTextWidth(PAGE_WIDTH - 2 * PAGE_MARGIN)
    doc.setHtml(docx_html(path))
    caption_height = 28
    height = int(doc.size().height()) + 2 * PAGE_MARGIN + caption_height
    image = QImage(PAGE_WIDTH, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#e8e8e8"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setFont(QFont("DejaVu Sans", 9))
    painter.setPen(QColor("#404040"))
    painter.drawText(QRectF(0, 0, PAGE_WIDTH, caption_height),
                     Qt.AlignmentFlag.AlignCenter, caption)
    page = QRectF(4, caption_height, PAGE_WIDTH - 8, height - caption_height - 4)
    painter.fillRect(page, QColor("white"))
    painter.setPen(QPen(QColor("#a0a0a0")))
    painter.drawRect(page)
    painter.translate(PAGE_MARGIN, caption_height + PAGE_MARGIN)
    doc.drawContents(painter)
    painter.end()
    return image


def round_trip_image(before: str | Path, after: str | Path, before_caption: str,
                     after_caption: str) -> QImage:
    """The pages of `before` and `after` side by side (page_image), on one image."""
    left, right = page_image(before, before_caption), page_image(after, after_caption)
    gap = 16
    image = QImage(left.width() + gap + right.width(), max(left.height(), right.height()),
                   QImage.Format.Format_RGB32)
    image.fill(QColor("#e8e8e8"))
    painter = QPainter(image)
    painter.drawImage(0, 0, left)
    painter.drawImage(left.width() + gap, 0, right)
    painter.end()
    return image
