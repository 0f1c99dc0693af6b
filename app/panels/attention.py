"""Attention screen: sentence pairs from a gold set, the test split or typed in; 2-4
models side by side with synchronised navigation; forced decoding of the reference or
free decoding; gold links overlaid (sure filled, possible outlined) with each model's
extracted alignment; AER per sentence and per corpus; next / previous; sort by the AER
difference between two models. Transformer-family models get a "Layer / head" selector
over their heatmap (forced decoding): the averaged attention, one decoder layer (mean of
its heads) or one head; the pair's AER follows the matrix shown, and the whole-set
table adds a row for it under the averaged attention's. On a gold set each run reads the pairs in its own
orientation: a run of the reversed language pair from the other side, a run of another
pair not at all (a note in its place); "Symmetrise with" shows model 1's links
symmetrised with a reverse-direction run's (app/panels/symmetrize_control.py). The
heatmaps of the pair shown are app/panels/attention_heatmaps.py's."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app import workers
from app.panels.attention_heatmaps import PairHeatmaps
from app.panels.attention_layers import LayerSelector
from app.panels.attention_pairs import PairBrowser
from app.panels.attention_tables import fill_table, tables_box
from app.panels.reading_controls import ReadingControls
from app.panels.symmetrize_control import SymmetrizeControl
from app.widgets.run_list import RunList, usable_runs
from core.evaluate.aer import corpus_aer
from core.evaluate.goldsets import list_gold_sets
from core.services.alignment_runs import baseline_note, run_languages
from core.services.attention_set import (
    Symmetrization,
    attention_views,
    corpus_aer_rows,
    gold_baseline,
)
from core.services.attention_view import PairInput, PairView
from core.services.translation import SessionCache
from core.workspace.store import Workspace


class AttentionPanel(PairBrowser, PairHeatmaps, LayerSelector, QWidget):
    """The Attention screen; its pair list (attention_pairs.PairBrowser), heatmaps of the
    pair shown (attention_heatmaps.PairHeatmaps) and "Layer / head" selectors
    (attention_layers.LayerSelector) are mixins of their own modules."""

    def __init__(self, jobs: workers.JobManager, sessions: SessionCache | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.jobs = jobs
        self.sessions = sessions or SessionCache()
        self._init_state()
        self._build_pair_controls()  # attention_pairs.PairBrowser
        self._build_model_controls()
        self._build_reading_options()
        self._build_pair_list()  # attention_pairs.PairBrowser
        self._build_heatmaps()  # attention_heatmaps.PairHeatmaps
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self._splitter(), 1)
        self._update_controls()
        self._layout_heatmaps(2)

    def _init_state(self) -> None:
        """The pairs, their computed views, what is shown, the runs' names and languages."""
        self.workspace: Workspace | None = None
        self.pairs: list[PairInput] = []
        self.typed: list[PairInput] = []
        self.views: dict[tuple[int, int], PairView] = {}  # (pair index, run id) -> view
        self.shown: list[PairView] = []  # what each heatmap shows (a layer/head or average)
        self.base: list[PairView] = []  # the same pairs' averaged views
        self.order: list[int] = []  # pair indices in list order
        self.current = -1  # pair index shown
        self.job: workers.Job | None = None
        self.names: dict[int, str] = {}
        self.langs: dict[int, tuple[str, str]] = {}  # run -> (source, target) language
        self.loading_pairs = False  # a pairs_job is reading the chosen source
        self._pairs_asked = 0  # counts load_pairs calls: only the newest one's pairs show
        # what the listed pairs were read from (pairs_key), and what is being read
        self._pairs_from: tuple | None = None
        self._asking: tuple | None = None
        self.baseline_alignments: list | None = None
        self.baseline_note = ""  # what the eflomal row says of its training data
        self.baseline_job: workers.Job | None = None

    def _build_model_controls(self) -> None:
        """The models (2-4), forced decoding, the eflomal baseline, Compute attention and
        its progress."""
        self.models = RunList(max_checked=4)
        self.models.show_rows(4)
        self.models.setToolTip("Check 2-4 models to compare side by side")
        self.models.changed.connect(self._models_changed)
        self.forced = QCheckBox("forced decoding of the reference")
        self.forced.setChecked(True)
        self.forced.setToolTip("Off: each model's own translation (free decoding)")
        self.baseline = QCheckBox("statistical baseline (eflomal)")
        self.baseline.setToolTip("Also align the gold pairs with eflomal, trained on the first "
                                 "model's training corpus, and add it to the whole-set table")
        self.run_button = QPushButton("Compute attention")
        self.run_button.setToolTip("Compute attention (Ctrl+R, Run menu)")
        self.run_button.clicked.connect(self.compute)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(180)

    def _build_reading_options(self) -> None:
        """How the heatmaps are read and drawn: the gold and extracted links, the reading
        (reading_controls.py), symmetrising (symmetrize_control.py)."""
        self.show_gold = QCheckBox("gold links")
        self.show_gold.setChecked(True)
        self.show_pred = QCheckBox("extracted alignment")
        self.show_pred.setChecked(True)
        for box in (self.show_gold, self.show_pred):
            box.toggled.connect(lambda _=None: self._apply_overlays())
        self.readings = ReadingControls(self.jobs)
        self.reading, self.no_sink = self.readings.reading, self.readings.no_sink
        self.readings.changed.connect(self._reading_changed)
        self.readings.chosen.connect(self._readings_chosen)
        self.readings.choose_button.clicked.connect(
            lambda: self.readings.choose(self.workspace, self.models.checked()))
        self.symmetrize = SymmetrizeControl()
        self.symmetrize.changed.connect(self._symmetrize_changed)

    def _left_column(self) -> QWidget:
        """What to compare: the pairs' source, the models, computing; the pair list."""
        left = QWidget()
        grid = QGridLayout(left)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(QLabel("Pairs from"), 0, 0)
        grid.addWidget(self.pair_source, 0, 1)
        gold_row = QHBoxLayout()
        gold_row.addWidget(self.gold_set, 1)
        gold_row.addWidget(self.gold_sets_button)
        grid.addLayout(gold_row, 0, 2)
        grid.addWidget(self.src_edit, 1, 0, 1, 3)
        grid.addWidget(self.tgt_edit, 2, 0, 1, 2)
        grid.addWidget(self.add_button, 2, 2)
        grid.addWidget(QLabel("Models (2–4)"), 3, 0, 1, 3)
        grid.addWidget(self.models, 4, 0, 1, 3)
        grid.addWidget(self.forced, 5, 0, 1, 3)
        grid.addWidget(self.baseline, 6, 0, 1, 3)
        run_row = QHBoxLayout()
        run_row.addWidget(self.run_button)
        run_row.addWidget(self.progress, 1)
        grid.addLayout(run_row, 7, 0, 1, 3)
        grid.addWidget(QLabel("Sort"), 8, 0)
        grid.addWidget(self.sort, 8, 1, 1, 2)
        grid.addWidget(self.pair_list, 9, 0, 1, 3)
        grid.setRowStretch(9, 1)
        nav = QHBoxLayout()
        nav.addWidget(self.prev_button)
        nav.addWidget(self.next_button)
        grid.addLayout(nav, 10, 0, 1, 3)
        grid.setColumnStretch(2, 1)
        return left

    def _options(self) -> QWidget:
        """How the heatmaps are read and drawn: overlays, symmetrising, the reading."""
        options = QWidget()
        layout = QVBoxLayout(options)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        row = QHBoxLayout()
        row.addWidget(self.show_gold)
        row.addWidget(self.show_pred)
        row.addSpacing(16)
        row.addWidget(self.symmetrize, 1)
        layout.addLayout(row)
        layout.addWidget(self.readings)
        return options

    def _splitter(self) -> QSplitter:
        """[left column | options over (pair, heatmaps) over (tables)]; the tables keep
        room for three rows, the heatmaps take the rest."""
        centre = QWidget()
        centre_layout = QVBoxLayout(centre)
        centre_layout.setContentsMargins(0, 0, 0, 0)
        centre_layout.addWidget(self.pair_label)
        centre_layout.addWidget(self.heatmap_grid, 1)
        tables = tables_box((("This pair (the matrix shown)", self.aer_table),
                             ("Whole set (averaged attention; + the layer shown)",
                              self.corpus_table)))
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.addWidget(centre)
        vertical.addWidget(tables)
        vertical.setChildrenCollapsible(False)
        vertical.setStretchFactor(0, 1)
        vertical.setStretchFactor(1, 0)
        vertical.setSizes([10000, tables.minimumSizeHint().height()])
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self._options())
        right_layout.addWidget(vertical, 1)
        horizontal = QSplitter(Qt.Orientation.Horizontal)
        horizontal.addWidget(self._left_column())
        horizontal.addWidget(right)
        horizontal.setStretchFactor(1, 1)
        horizontal.setSizes([300, 1100])
        return horizontal

    # --- workspace ------------------------------------------------------------------------------
    def set_workspace(self, workspace: Workspace | None) -> None:
        """Show `workspace`'s runs and pairs; its sessions and typed pairs start afresh."""
        self.workspace = workspace
        self.sessions.clear()
        self.typed = []
        self.gold_chosen = False  # the user's choice of a gold set is this workspace's
        self._pairs_from = None  # another workspace's pairs: read again
        self.refresh()

    def refresh(self) -> None:
        """Reread the runs (names, languages) and gold sets; the pairs are read again only when
        their source changed."""
        runs = usable_runs(self.workspace)
        self.names = {r.id: r.name for r in runs}
        self.langs = {r.id: run_languages(self.workspace, r) for r in runs}
        self.models.blockSignals(True)
        self.models.set_runs(runs)
        if runs and not self.models.checked():
            self.models.set_checked([r.id for r in runs[-2:]])
        self.models.blockSignals(False)
        self._offer_reverse_runs()
        self.gold_set.blockSignals(True)
        current = self.gold_set.currentText()
        self.gold_set.clear()
        if self.workspace is not None:
            self.gold_set.addItems(list_gold_sets(self.workspace))
        pick = self.default_gold_set(current)
        if pick:
            self.gold_set.setCurrentText(pick)
        self.gold_set.blockSignals(False)
        if self.gold_set.count() == 0 and self.pair_source.currentIndex() == 0:
            self.pair_source.blockSignals(True)
            self.pair_source.setCurrentIndex(1)
            self.pair_source.blockSignals(False)
        if self.pairs and self._pairs_from == self.pairs_key():
            self._models_changed()  # the same pairs: their results stay, for the runs checked
        else:
            self.load_pairs()

    def _models_changed(self) -> None:
        """Everything on the screen follows the checked models: the pair list's scores,
        the whole-set table and the heatmaps at once; models checked since the last
        computation are computed (the others' results are kept until then)."""
        checked = self.models.checked()
        self.follow_default_gold_set()
        self._offer_reverse_runs()
        self._layout_heatmaps(max(2, len(checked)))
        self._fill_pair_list()
        self._fill_corpus_table()
        if 0 <= self.current < len(self.pairs):
            self.show_pair(self.current)
        computed = {r for _, r in self.views}
        if self.views and any(r not in computed for r in checked):
            self.compute()
        self._update_controls()

    def _offer_reverse_runs(self) -> None:
        checked = self.models.checked()
        self.symmetrize.offer(self.langs, self.names, checked[0] if checked else None)

    def sym_choice(self) -> Symmetrization | None:
        """What "Symmetrise with" asks for (None: nothing)."""
        return self.symmetrize.choice(self.models.checked())

    def _symmetrize_changed(self) -> None:
        """A reverse run not computed yet is computed (with the checked ones); else the
        links, the pair list and the whole-set table follow at once."""
        sym = self.sym_choice()
        if self.views and sym is not None and not any(r == sym.reverse for _, r in self.views):
            self.compute()
            return
        self._reading_changed()

    def _update_controls(self) -> None:
        source = self.pair_source.currentText()
        self.gold_set.setEnabled(source == "Gold set")
        for w in (self.src_edit, self.tgt_edit, self.add_button):
            w.setVisible(source == "Typed pairs")
        busy = self.job is not None and not self.job.done
        self.run_button.setEnabled(not busy and bool(self.models.checked()) and bool(self.pairs))

    # --- computing ----------------------------------------------------------------------------------
    def compute(self) -> workers.Job | None:
        """Attention of every listed pair under every checked model, in a worker."""
        run_ids = self.models.checked()
        if self.workspace is None or not run_ids or not self.pairs:
            return None
        if self.job is not None and not self.job.done:
            self.job.cancel()
        runs = [(r, f"{r}: {self.names.get(r, '?')}") for r in run_ids]
        sym = self.sym_choice()
        if sym is not None and sym.reverse not in run_ids:  # its links, not shown
            runs.append((sym.reverse, sym.label))
        pairs = list(enumerate(self.pairs))
        self.progress.setRange(0, len(pairs) * len(runs))
        self.progress.setValue(0)
        self.job = self.jobs.submit(attention_views, self.workspace, self.sessions, runs, pairs,
                                    self.forced.isChecked(), name="Attention")
        job = self.job
        job.event.connect(lambda kind, data: job is self.job and self._on_event(kind, data))
        job.finished.connect(lambda views: job is self.job and self._computed(views))
        job.state_changed.connect(lambda _s: self._update_controls())
        self._update_controls()
        self.baseline_alignments, self.baseline_job = None, None
        if self.baseline.isChecked() and all(p.gold is not None for p in self.pairs):
            words = [(p.gold_src or p.source.split(), p.gold_tgt or p.target.split())
                     for p in self.pairs]
            self.baseline_job = self.jobs.submit(
                gold_baseline, self.workspace, run_ids[0], words, pairs=list(self.pairs),
                name="eflomal baseline")
            baseline = self.baseline_job
            baseline.finished.connect(
                lambda found: baseline is self.baseline_job and self._baseline_done(*found))
        return self.job

    def _baseline_done(self, alignments: list, training_pairs: int) -> None:
        self.baseline_alignments = list(alignments)
        self.baseline_note = baseline_note(training_pairs)
        self._fill_corpus_table()

    def _on_event(self, kind: str, data: dict) -> None:
        if kind == "progress" and data.get("total"):
            self.progress.setRange(0, int(data["total"]))
            self.progress.setValue(int(data["done"]))

    def _computed(self, views: dict[tuple[int, int], PairView]) -> None:
        self.views = dict(views)
        keep = self.current if self.current >= 0 else 0
        self._fill_pair_list()
        self._fill_corpus_table()
        if self.order:
            self.pair_list.setCurrentRow(self.order.index(keep) if keep in self.order else 0)
            self.show_pair(self.order[self.pair_list.currentRow()])

    def reading_choice(self, run_id: int | None = None) -> tuple[str, bool]:
        """(reading, no_sink) as the controls say (app/panels/reading_controls.py)."""
        return self.readings.choice(self.workspace, run_id)

    def _readings_chosen(self, _lines: list[str]) -> None:
        # the runs' stored readings changed: sessions loaded before hold the old configs
        # (the Evaluation screen reads its AER at a session's reading)
        self.sessions.clear()
        self._reading_changed()

    def _reading_changed(self) -> None:
        if self.current >= 0 and getattr(self, "base", None):
            self.show_views(self.base, self.gold)
        self._fill_pair_list()
        self._fill_corpus_table()

    def _fill_corpus_table(self) -> None:
        golds = [p.gold for p in self.pairs]
        run_ids = self.models.checked()
        if not self.views or any(g is None for g in golds) or not golds:
            fill_table(self.corpus_table, [], range(2, 5))
            return
        runs = [(r, f"{r}: {self.names.get(r, '?')}") for r in run_ids]
        sym = self.sym_choice()
        readings = {r: self.reading_choice(r) for r in run_ids + ([sym.reverse] if sym else [])}
        rows = corpus_aer_rows(self.views, golds, runs, readings, sym, self.shown_layers())
        if self.baseline_alignments is not None and len(self.baseline_alignments) == len(golds):
            c = corpus_aer(self.baseline_alignments, golds)
            rows.append(["eflomal grow-diag-final-and", len(golds), c.aer, c.precision, c.recall,
                         self.baseline_note])
        fill_table(self.corpus_table, rows, range(2, 5))

