"""The Attention screen's "Layer / head" selector under each heatmap of a
Transformer-family run: the averaged cross-attention, one decoder layer (mean of its
heads) or one head. `LayerSelector` is mixed into app.panels.attention.AttentionPanel,
whose boxes (`layer_boxes`, `layer_labels`), choices and views it fills and follows; the
whole-set table gets a row for each layer or head shown (`shown_layers`)."""
from __future__ import annotations

from core.services.attention_view import PairView

AVERAGE = (None, None)  # the selector's "average" entry: (layer, head)
LAYER_TIP = ("Cross-attention of one decoder layer (mean of its heads) or of one head; "
             "the AER of this pair follows the matrix shown, and the whole-set table adds "
             "a row for it under the averaged attention's")
FREE_TIP = ("Free decoding keeps only the averaged attention: turn on forced decoding of "
            "the reference to see each layer and head")


class LayerSelector:
    """Fill each heatmap's selector for its view and redraw on a choice."""

    def _fill_layer_box(self, i: int, view: PairView | None) -> None:
        """The selector of heatmap i for `view`: hidden without layers (RNN models, no
        view), disabled under free decoding; keeps the choice when it still exists."""
        box, label = self.layer_boxes[i], self.layer_labels[i]
        choices: list[tuple[int | None, int | None]] = [AVERAGE]
        names = ["average (last layer, mean of heads)"]
        if view is not None and view.layers is not None:
            n_layers, n_heads = view.layers.shape[:2]
            for layer in range(n_layers):
                choices.append((layer, None))
                names.append(f"layer {layer + 1} (mean of heads)")
                for head in range(n_heads):
                    choices.append((layer, head))
                    names.append(f"layer {layer + 1} · head {head + 1}")
        if self.layer_selected[i] not in choices:
            self.layer_selected[i] = AVERAGE
        box.blockSignals(True)
        box.clear()
        box.addItems(names)
        box.setCurrentIndex(choices.index(self.layer_selected[i]))
        box.blockSignals(False)
        self.layer_choices[i] = choices
        layered = view is not None and view.layered
        box.setVisible(layered)
        label.setVisible(layered)
        box.setEnabled(layered and view.layers is not None)
        box.setToolTip(LAYER_TIP if box.isEnabled() else FREE_TIP)

    def set_layer(self, i: int, layer: int | None = None, head: int | None = None) -> None:
        """Show layer `layer` (0-based; None = the averaged attention), head `head` (None =
        the mean of the layer's heads) in heatmap i, as if chosen in its selector."""
        self.layer_boxes[i].setCurrentIndex(self.layer_choices[i].index((layer, head)))

    def _layer_changed(self, i: int, row: int) -> None:
        if not 0 <= row < len(self.layer_choices[i]):
            return
        self.layer_selected[i] = self.layer_choices[i][row]
        if i >= len(self.base):
            return
        self.shown[i] = self._present(self.base[i], self.layer_selected[i], self.current,
                                      self.gold)
        self._draw(i)
        self._apply_overlays()
        self._fill_aer()
        self._fill_corpus_table()

    def shown_layers(self) -> dict[int, tuple[int, int | None]]:
        """{run: (layer, head or None)} of the heatmaps showing one decoder layer or head
        (0-based), for the whole-set table's extra rows (corpus_aer_rows' `layers`)."""
        return {view.run_id: selection
                for view, selection in zip(self.base, self.layer_selected, strict=False)
                if selection != AVERAGE and not view.skipped and view.layers is not None}
