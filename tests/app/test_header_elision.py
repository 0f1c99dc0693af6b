"""Table headers under the workbench's style: a run's name longer than its column is
elided to what fits, inside the section's padding, not drawn past both ends (the
comparison's 'ansards-subs-co…arget (editabl' of the Translate screen)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QHeaderView, QTableWidget


def ink_columns(image, x0: int, x1: int) -> int:
    """How many pixel columns in [x0, x1) hold dark (text) pixels across the middle rows."""
    rows = range(image.height() // 4, 3 * image.height() // 4)
    return sum(any(QColor(image.pixel(x, y)).lightness() < 120 for y in rows)
               for x in range(x0, x1))


def test_a_long_header_is_elided_inside_its_section(qtbot, workbench_style):
    table = QTableWidget(1, 2)
    qtbot.addWidget(table)
    table.setHorizontalHeaderLabels(["hansards-subs-context-target (editable)",
                                     "Baseline: hansards-subs-transformer"])
    header = table.horizontalHeader()
    header.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    for column in (0, 1):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
    table.verticalHeader().setVisible(False)
    table.resize(420, 100)
    table.show()
    qtbot.waitExposed(table)
    # Qt elides a header with the header's own font; the sections are drawn bold, so
    # that font must be the bold one (the style sheet sets it on the header, not on its
    # sections, where Qt measured the text in the lighter font and drew more than fits)
    assert header.font().weight() == QFont.Weight.DemiBold
    image = header.grab().toImage()
    for column in (0, 1):
        left = header.sectionViewportPosition(column)
        right = left + header.sectionSize(column)
        assert ink_columns(image, left + 1, right - 1) > 40, column  # the text is drawn
