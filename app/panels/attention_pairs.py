"""The Attention screen's pairs (PairBrowser, a mixin of AttentionPanel): where they
come from (a gold set, the test split of the first checked run, or pairs typed in), read
in a job; the pair list, sorted by corpus order or AER, with each pair's AER under the
first two models; previous / next."""
from __future__ import annotations

from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QComboBox, QLineEdit, QListWidget, QListWidgetItem, QPushButton

from app import workers
from app.panels.attention_layers import AVERAGE
from app.panels.gold_sets_dialog import GoldSetsDialog
from core.evaluate.aer import percent_text
from core.evaluate.goldsets import gold_set_for
from core.services.attention_set import pairs_job
from core.services.attention_view import PairInput

SOURCES = ("Gold set", "Test split", "Typed pairs")
SORTS = ("Corpus order", "AER difference (model 1 − model 2)", "AER of model 1")
TEST_LIMIT = 200  # test-split pairs shown (the first ones)


class PairBrowser:
    """The pairs part of AttentionPanel: it reads the panel's workspace, models, jobs and
    views, and calls its show_pair, show_views, compute and table fillers."""

    def _build_pair_controls(self) -> None:
        """Where the pairs come from (source, gold set; a typed pair and Add pair) and
        how the list is sorted."""
        self.pair_source = QComboBox()
        self.pair_source.addItems(SOURCES)
        self.pair_source.currentIndexChanged.connect(lambda _=None: self.load_pairs())
        self.gold_set = QComboBox()
        self.gold_set.setMinimumWidth(110)
        self.gold_set.currentIndexChanged.connect(lambda _=None: self._gold_set_chosen())
        self.gold_chosen = False  # a set was chosen (not the screen's default_gold_set)
        self.gold_sets_button = QPushButton("Gold sets…")
        self.gold_sets_button.setToolTip("List, import or remove the workspace's gold alignments")
        self.gold_sets_button.clicked.connect(lambda: self.manage_gold_sets())
        self.src_edit, self.tgt_edit = QLineEdit(), QLineEdit()
        self.src_edit.setPlaceholderText("source sentence")
        self.tgt_edit.setPlaceholderText("reference translation (for forced decoding)")
        self.add_button = QPushButton("Add pair")
        self.add_button.clicked.connect(self.add_typed_pair)
        self.sort = QComboBox()
        self.sort.addItems(SORTS)
        self.sort.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.sort.setMinimumContentsLength(12)  # the list keeps its width for the pairs
        self.sort.currentIndexChanged.connect(lambda _=None: self._fill_pair_list())

    def _gold_set_chosen(self) -> None:
        """A set chosen in the box (the screen's own choices block its signals): it stays."""
        self.gold_chosen = True
        self.load_pairs()

    def default_gold_set(self, current: str) -> str:
        """The gold set the box shows after a refresh: `current` when it was chosen or
        fits a checked run's language pair (either way round); else the set of the first
        checked run's pair (goldsets.gold_set_for: on opening the demo, its newest runs
        translate en->fr, and the es->en 'demo-gold', first by name, fits neither)."""
        checked = self.models.checked()
        if self.workspace is None or self.gold_chosen or not checked:
            return current
        if current and any(gold_set_for(self.workspace, self.langs.get(r, ("", "")),
                                        preferred=current) == current for r in checked):
            return current
        return gold_set_for(self.workspace, self.langs.get(checked[0], ("", ""))) or current

    def follow_default_gold_set(self) -> None:
        """After the checked runs changed: where the user chose no gold set and the one
        shown fits none of them, show (and read) default_gold_set's."""
        current = self.gold_set.currentText()
        pick = self.default_gold_set(current)
        if pick == current:
            return
        self.gold_set.blockSignals(True)
        self.gold_set.setCurrentText(pick)
        self.gold_set.blockSignals(False)
        if self.pair_source.currentText() == "Gold set":
            self.load_pairs()

    def manage_gold_sets(self) -> GoldSetsDialog | None:
        """The Gold sets dialog (app.panels.gold_sets_dialog); the screen rereads the sets
        after an import or removal, and shows a newly imported set's pairs."""
        if self.workspace is None:
            return None
        dialog = GoldSetsDialog(self.workspace, self)
        dialog.changed.connect(self.refresh)
        dialog.imported_set.connect(self._show_gold_set)
        dialog.exec()
        return dialog

    def _show_gold_set(self, name: str) -> None:
        self.gold_set.setCurrentText(name)
        self.pair_source.setCurrentIndex(SOURCES.index("Gold set"))

    def _build_pair_list(self) -> None:
        """The pair list, Previous / Next and their keys."""
        self.pair_list = QListWidget()
        self.pair_list.setAlternatingRowColors(True)
        self.pair_list.setToolTip("[AER % of each model shown, in order] after Compute "
                                  "attention; a pair's tooltip names them")
        self.pair_list.currentRowChanged.connect(self._row_changed)
        self.prev_button, self.next_button = QPushButton("◀ Previous"), QPushButton("Next ▶")
        self.prev_button.setToolTip("Previous pair (Alt+Left / PgUp)")
        self.next_button.setToolTip("Next pair (Alt+Right / PgDown)")
        self.prev_button.clicked.connect(lambda: self.step(-1))
        self.next_button.clicked.connect(lambda: self.step(1))
        for key, delta in (("Alt+Left", -1), ("Alt+Right", 1), ("PgUp", -1), ("PgDown", 1)):
            QShortcut(QKeySequence(key), self, lambda d=delta: self.step(d))

    def pairs_key(self) -> tuple:
        """Where the chosen pairs come from: (source, gold set, run whose test split)."""
        source = self.pair_source.currentText()
        run_id = None
        if source == "Test split" and self.models.run_ids():
            run_id = (self.models.checked() or self.models.run_ids())[0]
        return source, self.gold_set.currentText() if source == "Gold set" else "", run_id

    def load_pairs(self) -> workers.Job | None:
        """Fill the pair list from the chosen source: typed pairs at once; a gold set or
        the test split read in a job (the list fills when it ends; a failure opens the
        error dialog). Returns that job."""
        self._pairs_asked += 1
        asked = self._pairs_asked
        self._asking = self.pairs_key()
        self._show_pairs([], asked)
        source = self.pair_source.currentText()
        gold_name = self.gold_set.currentText() if source == "Gold set" else ""
        run_id = None
        if source == "Test split" and self.models.run_ids():
            run_id = (self.models.checked() or self.models.run_ids())[0]
        if source == "Typed pairs":
            self._show_pairs(list(self.typed), asked)
        if self.workspace is None or not (gold_name or run_id is not None):
            return None
        self.loading_pairs = True
        self.pair_label.setText(f"reading {gold_name or 'the test split'} ...")
        # a failure is reported here, not by the manager: a stale request (another
        # source chosen since, or the workspace closed) fails silently
        job = self.jobs.submit(pairs_job, self.workspace, gold_name or None, run_id,
                               0 if gold_name else TEST_LIMIT, name="Read pairs",
                               report_errors=False)
        job.finished.connect(lambda pairs: self._show_pairs(pairs, asked))
        job.failed.connect(lambda message, tb: self._pairs_failed(message, tb, asked))
        return job

    def _show_pairs(self, pairs: list[PairInput], asked: int) -> None:
        if asked != self._pairs_asked:  # the user chose another source meanwhile
            return
        self.loading_pairs = False
        for job in (self.job, self.baseline_job):
            if job is not None and not job.done:
                job.cancel()  # it computes the pairs listed before
        self.job = self.baseline_job = None  # their late results are not these pairs' views
        self.pairs, self.views = list(pairs), {}
        self._pairs_from = self._asking
        self.baseline_alignments = None
        self.current = -1
        self.show_views([])  # the heatmaps and the pair's table go with the results
        self._fill_pair_list()
        self._fill_corpus_table()
        self._update_controls()
        if pairs:
            self.pair_label.setText(f"{len(pairs)} pairs")

    def _pairs_failed(self, message: str, tb: str, asked: int) -> None:
        if asked == self._pairs_asked and self.workspace is not None:
            self.loading_pairs = False
            self.pair_label.setText(f"Cannot load the pairs: {message}")
            workers.show_error(self, "Cannot load the pairs", message, tb)

    def add_typed_pair(self) -> None:
        """Add the typed source and reference as a pair, list the typed pairs, select it and
        compute its attention."""
        src, tgt = self.src_edit.text().strip(), self.tgt_edit.text().strip()
        if not src:
            return
        self.typed.append(PairInput(src, tgt))
        self.pair_source.blockSignals(True)
        self.pair_source.setCurrentText("Typed pairs")
        self.pair_source.blockSignals(False)
        self.load_pairs()  # typed pairs show at once
        self.pair_list.setCurrentRow(self.order.index(len(self.pairs) - 1))
        self.compute()

    def _aer(self, index: int, run_id: int) -> float | None:
        """The pair's AER under the run, read as the controls say (as its heatmap shows)."""
        view = self.views.get((index, run_id))
        if view is None or view.aer is None:
            return None
        return self._present(view, AVERAGE, index, self.pairs[index].gold).aer

    def _fill_pair_list(self) -> None:
        checked = self.models.checked()
        order = list(range(len(self.pairs)))
        sort = self.sort.currentIndex()
        if sort and checked:
            def key(i: int) -> float:
                a = self._aer(i, checked[0])
                if sort == 2:
                    return -(a if a is not None else -1.0)
                b = self._aer(i, checked[1]) if len(checked) > 1 else None
                return -(a - b) if a is not None and b is not None else float("inf")
            order.sort(key=key)
        self.order = order
        self.pair_list.blockSignals(True)
        self.pair_list.clear()
        shown = checked[:4]  # the models with a heatmap, in their order
        for i in order:
            scores = [self._aer(i, r) for r in shown]
            prefix, tip = "", ""
            if scores and all(s is not None for s in scores):
                prefix = "[" + " / ".join(percent_text(s) for s in scores) + "]  "
                tip = "\nAER %: " + ", ".join(
                    f"{self.names.get(r, r)} {percent_text(s)}" for r, s in zip(
                        shown, scores, strict=True))
            text = f"{i + 1}. {prefix}{self.pairs[i].source}"
            item = QListWidgetItem(text)
            item.setToolTip(f"{self.pairs[i].source}\n{self.pairs[i].target}{tip}")
            self.pair_list.addItem(item)
        if self.current in order:
            self.pair_list.setCurrentRow(order.index(self.current))
        self.pair_list.blockSignals(False)

    def _row_changed(self, row: int) -> None:
        if 0 <= row < len(self.order):
            self.show_pair(self.order[row])

    def step(self, delta: int) -> None:
        """Next (+1) / previous (-1) pair in list order."""
        if not self.order:
            return
        row = max(0, min(len(self.order) - 1, self.pair_list.currentRow() + delta))
        self.pair_list.setCurrentRow(row)
