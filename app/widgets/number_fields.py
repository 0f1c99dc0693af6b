"""Number fields of the forms: a plain bounded number box, and a learning-rate box that
keeps the value as typed."""
from __future__ import annotations

from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QDoubleSpinBox


def number_field(lo: float, hi: float, value: float, decimals: int = 0,
                 step: float = 1) -> QDoubleSpinBox:
    """A number box from `lo` to `hi` holding `value`, `decimals` shown, arrows by `step`."""
    spin = QDoubleSpinBox()
    spin.setRange(lo, hi)
    spin.setDecimals(decimals)
    spin.setSingleStep(step)
    spin.setValue(value)
    return spin


class RateSpinBox(QDoubleSpinBox):
    """A learning rate as typed: 1.5e-05 or 0.0003 (no rounding to a few decimals, which
    turned a typed 1.5e-5 into 2e-5); the arrows multiply or divide by 2."""

    def __init__(self, lo: float, hi: float, value: float):
        super().__init__()
        self.setDecimals(12)  # the value keeps what was typed; the text is textFromValue's
        self.setRange(lo, hi)
        self.setValue(value)

    def textFromValue(self, value: float) -> str:
        return f"{value:.6g}"

    def valueFromText(self, text: str) -> float:
        try:
            return float(text)
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int):
        stripped = text.strip()
        try:
            value = float(stripped)
        except ValueError:  # half typed ('1e', '1.5e-'): go on typing
            ok = bool(stripped) and all(c in "0123456789.eE+-" for c in stripped)
            return (QValidator.State.Intermediate if ok else QValidator.State.Invalid), text, pos
        inside = self.minimum() <= value <= self.maximum()
        return (QValidator.State.Acceptable if inside else QValidator.State.Intermediate), text, pos

    def stepBy(self, steps: int) -> None:
        self.setValue(self.value() * 2.0 ** steps)
