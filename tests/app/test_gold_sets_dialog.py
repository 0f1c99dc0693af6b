"""The Attention screen's Gold sets… dialog (app.panels.gold_sets_dialog): the sets with
their counts; an import from three files gives the same set `align --gold-set` stores and
the screen shows its pairs; missing languages or a bad link file are named, nothing is
stored and the form stays open; Remove asks first and takes the set off the screen."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialog, QMessageBox

from app.panels.attention import AttentionPanel
from app.panels.gold_sets_dialog import GoldImportDialog, GoldSetsDialog
from core.evaluate.goldsets import list_gold_sets, load_gold_set
from core.services.demo import DEMO_GOLDS
from tests.app.conftest import shown_panel, wait_for_pairs

WPT03 = DEMO_GOLDS[1]  # English first, 1-based TALP links, 37 pairs


@pytest.fixture
def panel(qtbot, trained_ws, tmp_path):
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(trained_ws, root)  # the session's workspace stays as it is
    gen = shown_panel(qtbot, AttentionPanel, root, 1400, 900)
    yield next(gen)
    next(gen, None)


def table_rows(dialog: GoldSetsDialog) -> list[list[str]]:
    t = dialog.table
    return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


def fill(form: GoldImportDialog, src, tgt, links, fmt: str, name: str, langs=("en", "fr")):
    form.src.edit.setText(str(src))
    form.tgt.edit.setText(str(tgt))
    form.links.edit.setText(str(links))
    form.format.setCurrentIndex(form.format.findData(fmt))
    form.name.setText(name)
    form.src_lang.setText(langs[0])
    form.tgt_lang.setText(langs[1])


def test_import_lists_stores_and_shows_the_set_as_align_does(qtbot, panel, monkeypatch):
    seen = {}

    def answer_import(form: GoldImportDialog):
        fill(form, *WPT03.files, WPT03.fmt, "trial")
        seen["one_based_box"] = form.one_based.isEnabled()  # TALP is 1-based by definition
        form.one_based.setChecked(True)  # a stale tick from Pharaoh must not shift the links
        form.accept()
        return QDialog.DialogCode.Accepted if form.imported else QDialog.DialogCode.Rejected

    def run_dialog(dialog: GoldSetsDialog):
        seen["before"] = table_rows(dialog)
        seen["imported"] = dialog.import_set()
        seen["after"] = table_rows(dialog)
        return QDialog.DialogCode.Rejected  # Close

    monkeypatch.setattr(GoldImportDialog, "exec", answer_import)
    monkeypatch.setattr(GoldSetsDialog, "exec", run_dialog)
    demo = load_gold_set(panel.workspace, "demo-gold")
    panel.manage_gold_sets()
    assert seen["before"] == [["demo-gold", "es → en", "56", str(demo.n_sure), str(demo.n_possible)]]
    assert seen["imported"] == "trial" and seen["one_based_box"] is False
    trial = load_gold_set(panel.workspace, "trial")
    assert seen["after"][1] == ["trial", "en → fr", "37", str(trial.n_sure), str(trial.n_possible)]
    # counted from the file itself: 'i-j' sure, 'ipj' possible (possible includes sure)
    tokens = WPT03.files[2].read_text(encoding="utf-8").split()
    sure = sum("-" in t for t in tokens)
    assert (trial.n_sure, trial.n_possible) == (sure, len(tokens))
    # the screen reads the new set's pairs at once, with its links
    assert panel.gold_set.currentText() == "trial" and panel.pair_source.currentText() == "Gold set"
    wait_for_pairs(qtbot, panel)
    assert len(panel.pairs) == 37
    assert panel.pairs[4].gold.sure == trial.alignments[4].sure
    assert panel.pairs[4].source.split() == trial.src_tokens[4]


def test_a_bad_link_file_is_named_and_nothing_is_stored(qtbot, panel, tmp_path, errors):
    src, tgt, _ = WPT03.files
    links = tmp_path / "links.talp"
    good = WPT03.files[2].read_text(encoding="utf-8").splitlines()
    good[3] += " 1-99"  # pair 4 has no 99th French word
    links.write_text("\n".join(good) + "\n", encoding="utf-8")
    form = GoldImportDialog(panel.workspace)
    qtbot.addWidget(form)
    fill(form, src, tgt, links, "talp", "broken", langs=("en", ""))
    form.accept()  # the screens match sets to runs by their languages: both are needed
    assert [m for _, m, _ in errors] == ["Give the languages of the two sides (e.g. en and fr): "
                                         "the Attention and Evaluation screens match gold sets "
                                         "to runs by them."]
    errors.clear()
    form.tgt_lang.setText("fr")
    form.accept()
    assert form.imported is None and form.result() != QDialog.DialogCode.Accepted
    [(title, message, _)] = errors
    assert str(links) in message and "99" in message
    assert list_gold_sets(panel.workspace) == ["demo-gold"]
    assert form.name.text() == "broken"  # what the user typed is kept


def test_remove_asks_first_and_takes_the_set_off_the_screen(qtbot, panel, monkeypatch):
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: answers.pop(0)))
    dialog = GoldSetsDialog(panel.workspace)
    qtbot.addWidget(dialog)
    dialog.changed.connect(panel.refresh)
    assert not dialog.remove_button.isEnabled()
    dialog.table.selectRow(0)
    assert dialog.remove_button.isEnabled()
    assert dialog.remove_selected() is False  # 'No': kept
    assert list_gold_sets(panel.workspace) == ["demo-gold"]
    assert panel.gold_set.count() == 1
    assert dialog.remove_selected() is True
    assert list_gold_sets(panel.workspace) == [] and table_rows(dialog) == []
    assert panel.gold_set.count() == 0
    assert not any(p.name.startswith(".demo-gold") for p in (panel.workspace.root / "gold").iterdir())


def test_a_damaged_set_is_listed_as_such_and_can_be_removed(qtbot, panel, monkeypatch):
    meta = panel.workspace.root / "gold" / "demo-gold" / "meta.json"
    meta.write_text('{"src_lang": ', encoding="utf-8")
    panel.refresh()  # the screen still opens its pairs' sources without the set's languages
    monkeypatch.setattr(QMessageBox, "question",
                        staticmethod(lambda *a, **k: QMessageBox.StandardButton.Yes))
    dialog = GoldSetsDialog(panel.workspace)
    qtbot.addWidget(dialog)
    assert table_rows(dialog) == [["demo-gold", "damaged", "–", "–", "–"]]
    assert "meta.json: cannot be read" in dialog.table.item(0, 1).toolTip()
    dialog.table.selectRow(0)
    assert dialog.remove_selected() is True and list_gold_sets(panel.workspace) == []
