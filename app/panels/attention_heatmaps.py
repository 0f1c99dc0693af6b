"""The Attention screen's heatmaps of the pair shown (PairHeatmaps, a mixin of
AttentionPanel): one per checked model (up to 4, app/widgets/heatmap_grid.py), each its
model's view as the controls read it (the layer / head chosen, its run's orientation,
its links symmetrised), gold and extracted links overlaid, context models' gates under
it, their zoom kept in step; the pair's label and its AER table; File > Export figure."""
from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import QLabel

from app.panels.attention_layers import AVERAGE
from app.panels.attention_tables import PAIR_COLUMNS, SET_COLUMNS, aer_table, fill_table
from app.widgets.gate_strip import GateStrip
from app.widgets.heatmap import AttentionHeatmap
from app.widgets.heatmap_grid import HeatmapGrid
from app.widgets.run_colours import label_colour
from core.evaluate.aer import percent_text
from core.services.attention_view import PairView, present_view, view_gold

ALL_MODELS = "All checked models (one figure)"


class PairHeatmaps:
    """The heatmaps part of AttentionPanel: it reads the panel's views, checked models,
    current pair, reading and "Symmetrise with" choices, and the overlay boxes."""

    def _build_heatmaps(self) -> None:
        """The heatmaps (app/widgets/heatmap_grid.py) with their gate strips and "Layer /
        head" selectors, the pair's label, the two AER tables (attention_tables.py)."""
        self.heatmap_grid = HeatmapGrid(4)
        self.heatmaps = self.heatmap_grid.heatmaps
        self.gate_strips = [GateStrip(h) for h in self.heatmaps]  # context models' lambda
        for h in self.heatmaps:
            h.view_changed.connect(lambda ranges, src=h: self._sync(src, ranges))
        # per heatmap: "Layer / head" for Transformer-family models (hidden for RNNs)
        self.layer_boxes = self.heatmap_grid.layer_boxes
        self.layer_labels = self.heatmap_grid.layer_labels
        self.layer_choices: list[list[tuple[int | None, int | None]]] = [
            [AVERAGE] for _ in self.heatmaps]
        self.layer_selected: list[tuple[int | None, int | None]] = [AVERAGE for _ in self.heatmaps]
        for i, box in enumerate(self.layer_boxes):
            box.currentIndexChanged.connect(lambda row, i=i: self._layer_changed(i, row))
            self._fill_layer_box(i, None)
        self.pair_label = QLabel(" ")
        self.pair_label.setWordWrap(True)
        self.pair_label.setObjectName("pairLabel")
        self.aer_table = aer_table(PAIR_COLUMNS)
        self.corpus_table = aer_table(SET_COLUMNS)

    def _layout_heatmaps(self, n: int) -> None:
        self.heatmap_grid.show_count(n)

    def _sync(self, source: AttentionHeatmap, ranges) -> None:
        for h in self.heatmaps:
            if h is not source and h.isVisibleTo(self):
                h.set_view(ranges)

    def show_pair(self, index: int) -> None:
        """Show pair `index` (its sentence over the heatmaps) with each checked model's computed
        view."""
        self.current = index
        pair = self.pairs[index]
        self.pair_label.setText(f"<b>{index + 1}.</b> {html.escape(pair.source)}<br>"
                                f"<i>{html.escape(pair.target)}</i>")  # '<unk>' is text
        views = [self.views[(index, r)] for r in self.models.checked()
                 if (index, r) in self.views]
        self.show_views(views, pair.gold)

    def show_views(self, views: list[PairView], gold: Any = None) -> None:
        """Draw each model's matrix (up to 4; the layer/head each selector shows) with its
        overlays and fill the table."""
        self.base, self.gold = list(views[:4]), gold
        self.shown = []
        for i, view in enumerate(self.base):
            self._fill_layer_box(i, view)
            self.shown.append(self._present(view, self.layer_selected[i], self.current, gold))
        self._layout_heatmaps(max(2, len(self.shown)))
        for i, h in enumerate(self.heatmaps):
            if i >= len(self.shown):
                h.clear()
                h.plot.setTitle("")
                self.gate_strips[i].clear()
                self._fill_layer_box(i, None)
                continue
            self._draw(i)
        self._apply_overlays()
        self._fill_aer()

    def _present(self, view: PairView, selection: tuple[int | None, int | None], index: int,
                 gold: Any) -> PairView:
        """`view` of pair `index` (gold links `gold`, in the gold set's orientation) as its
        heatmap shows it (core.services.attention_view.present_view): the layer/head
        chosen, read as the controls say, in its run's orientation, its links symmetrised
        as "Symmetrise with" says."""
        sym = self.sym_choice()
        reverse = None
        if sym is not None and view.run_id in sym.forward:
            reverse = self.views.get((index, sym.reverse))
        return present_view(view, gold, self.reading_choice(view.run_id), selection, reverse,
                            self.reading_choice(sym.reverse) if sym else ("predict", False),
                            sym.heuristic if sym else "")

    def _draw(self, i: int) -> None:
        h, view = self.heatmaps[i], self.shown[i]
        if view.skipped:  # another language pair: nothing computed
            h.clear()
            h.set_title(f"{view.label}  ·  {view.note}", color="#888888")
            self.gate_strips[i].clear()
            return
        title = view.label if view.selection == AVERAGE else f"{view.label}  ·  {view.selection_label}"
        if view.reading == "head":  # not the attention: the run's alignment head
            title += "  ·  alignment head"
        elif self.reading_choice(view.run_id)[0] == "head":  # asked for, but it has none
            title += "  ·  no alignment head: predicting step"
        if view.aer is not None:
            title += f"  ·  AER {percent_text(view.aer)} %"
        h.set_title(title, color=label_colour(view.label) or "#222222")
        h.set_matrix(view.matrix, view.src_tokens, view.row_labels)
        if view.positions is not None:
            h.set_positions(view.positions, view.window)
        if view.gates is not None:
            self.gate_strips[i].set_gates(view.gates, view.src_tokens)
        else:
            self.gate_strips[i].clear()

    def _apply_overlays(self) -> None:
        for h, view in zip(self.heatmaps, self.shown, strict=False):
            gold = view_gold(view, self.gold)
            if gold is not None and self.show_gold.isChecked() and not view.skipped:
                h.set_gold(gold.sure, gold.possible)
            else:
                h.set_gold(set(), set())
            h.set_predicted(view.predicted if self.show_pred.isChecked() else set())

    def _fill_aer(self) -> None:
        rows = []
        for view in self.shown:
            label = view.label if view.selection == AVERAGE else f"{view.label} ({view.selection_label})"
            rows.append((label, view.aer, view.precision, view.recall, view.note))
        fill_table(self.aer_table, rows, range(1, 4))

    def export_figure(self) -> None:
        """File › Export figure: all shown heatmaps as one figure (the first choice) or
        one model's."""
        from PySide6.QtWidgets import QInputDialog

        from app.panels.figures import export_dialog

        labels = [v.label for v in self.shown] or ["(empty)"]
        if len(labels) > 1:
            choices = [ALL_MODELS] + labels
            label, ok = QInputDialog.getItem(self, "Export heatmap", "Model:", choices, 0, False)
            if not ok:
                return
            if label == ALL_MODELS:
                export_dialog(self, self.heatmap_grid.export_comparison, "attention-comparison")
                return
            export_dialog(self, self.heatmaps[labels.index(label)].export, "attention")
            return
        export_dialog(self, self.heatmaps[0].export, "attention")
