"""Core of the NMT Attention Workbench: data, models, training, inference, evaluation.

Nothing under core/ imports Qt (PySide6, shiboken6) or pyqtgraph; tests enforce it.
"""
