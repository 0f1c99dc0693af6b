"""`make screenshots`: the README's pictures, regenerated from the demo workspace so they
never drift from the program.

    python -m app.screenshots docs/screenshots [--models DIR]

Opens the workbench on a fresh copy of the demo workspace (the bundled runs of
resources/demo/models, or --models DIR), drives each screen as a user would (corpus
selected; training curves of every run; a document translated; the attention of the
bundled runs on a gold pair, with gold and eflomal; the runs evaluated on the demo test
split) and saves each screen at 1400 x 900 as `<screen>.webp` and at 1280 x 720 as
`<screen>-1280x720.webp` (lossless WebP: save_picture). Then four models of one pair on
the Attention screen: `attention-4-models.webp` (and `-1280x720`), and
`attention-4-models-figure.png`, the
comparison as File › Export figure › "All checked models" writes it: the bundle's four
English -> French runs on a WPT-03 trial pair, or (a bundle without them, such as the
tests' toy runs) its es -> en runs and a small Transformer trained here for
COMPARISON_STEPS steps, whose attention means nothing.
With English-French runs in the bundle it also saves `attention-hansards.webp` (the
Hansards runs with their alignment heads on a WPT-03 trial pair, symmetrised, beside
eflomal), `attention-layers.webp` (one head of one decoder layer of the sentence
Transformer beside a Luong run's head, on the team's documents) and
`translate-context.webp` (the target-context model beside its sentence-level
baseline on one of the team's English documents), and `translate-docx.webp`, a Word
document's round trip: a Spanish letter (.docx: a heading, bold and italic runs, a blank
paragraph, a bulleted list) opened on the Translate screen, translated by the last
bundled es -> en run, exported as .docx, both files drawn as pages side by side
(app.docx_pages). Runs on the
offscreen platform where there is no display.
Settings go to a temporary folder: the user's own are neither read nor changed.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the Qt and core imports wait for the platform settings
    from core.workspace.store import Workspace

SIZES = ((1400, 900, ""), (1280, 720, "-1280x720"))
PICTURE = "webp"  # the screens' format (save_picture); the exported figure stays a PNG
#: a short letter for the Translate screen (our own sentences, like the demo corpus)
LETTER = ("Ayer compré una mesa nueva para la cocina. Es pequeña pero muy bonita. Mi "
          "hermano la trajo en su coche y la subimos juntos. Ahora comemos allí todos los "
          "días.\n")
GOLD_PAIR = 3  # which gold pair the Attention screen shows
WPT03_PAIR = 2  # which WPT-03 trial pair attention-hansards.webp shows
FOUR_MODELS_PAIR = 5  # a 12-word WPT-03 pair: four heatmaps of it stay readable
LAYERS_PAIR = 1  # which pair of the team's documents attention-layers.webp shows
#: the team's English document translate-context.webp shows (resources/demo/en-fr)
CONTEXT_DOCUMENT = "d05"
COMPARISON_STEPS = 30  # training steps of the fourth run of the four-model picture


def wait(app, job, timeout: float = 600.0) -> None:
    """Process events until `job` is done (and its result has reached the GUI thread)."""
    start = time.monotonic()
    while job is not None and not job.done:
        app.processEvents()
        time.sleep(0.02)
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"{job.name} did not finish in {timeout:.0f} s")
    for _ in range(20):
        app.processEvents()
        time.sleep(0.01)
    if job is not None and job.error:
        raise RuntimeError(f"{job.name} failed: {job.error}")


def save_picture(image, path: Path) -> Path:
    """Write `image` (a QImage or QPixmap) to `path` as lossless WebP (Qt's writer at
    quality 100): the same pixels as a PNG in 40 % of its bytes (a 1400 x 900 screen:
    84 against 211 kB), and the repository has 45 MB in all. -> path."""
    from PySide6.QtGui import QImageWriter

    writer = QImageWriter(str(path), b"webp")
    writer.setQuality(100)  # lossless
    picture = image.toImage() if hasattr(image, "toImage") else image
    if not writer.write(picture):
        raise OSError(f"{path}: could not be written ({writer.errorString()})")
    return path


def shoot(app, window, out: Path, name: str) -> Path:
    """Let `window` settle, then save it as `out`/`name`.webp; returns the file."""
    for _ in range(10):
        app.processEvents()
    return save_picture(window.grab(), out / f"{name}.{PICTURE}")


def comparison_run(workspace: Workspace) -> int:
    """A small Transformer of the demo corpus trained for COMPARISON_STEPS steps on the
    CPU (a few seconds): the fourth model of the four-model picture. Returns its id."""
    from core.config import load_preset
    from core.jobs import JobContext
    from core.services.training import create_run, train_run

    cfg = load_preset("transformer-cpu")
    cfg.name = f"transformer-{COMPARISON_STEPS}-steps"
    m = cfg.model
    m.d_model, m.ff_size, m.heads, m.enc_layers, m.dec_layers = 32, 64, 2, 1, 2
    cfg.data.vocab, cfg.data.batch_tokens, cfg.data.batch_size = "word", 0, 32
    cfg.data.dev_sample = 5
    cfg.train.max_steps = cfg.train.valid_every = COMPARISON_STEPS
    cfg.train.device = "cpu"
    run_id = create_run(workspace, "demo", cfg)
    train_run(workspace, run_id, JobContext())
    return run_id


def show_wpt03_pair(app, window, run_ids: list[int], baseline: bool = True,
                    pair: int = WPT03_PAIR, reverse: int | None = None) -> None:
    """The Attention screen with `run_ids` checked on WPT-03 trial pair `pair`,
    symmetrised with run `reverse` when it is offered."""
    from core.services.demo import WPT03_GOLD

    att = window.attention
    window.tabs.setCurrentWidget(att)
    att.baseline.setChecked(False)  # no eflomal job for the old pairs' runs
    att.models.set_checked([])
    att.pair_source.setCurrentText("Gold set")
    att.gold_set.setCurrentText(WPT03_GOLD)
    wait(app, att.load_pairs())
    att.models.set_checked(run_ids)
    offered = att.symmetrize.run.findData(reverse) if reverse is not None else -1
    if offered >= 0:
        att.symmetrize.run.setCurrentIndex(offered)
    att.baseline.setChecked(baseline)
    wait(app, att.compute())
    wait(app, getattr(att, "baseline_job", None))
    att.pair_list.setCurrentRow(pair)


def shoot_comparison(app, window, out: Path) -> list[Path]:
    """The Attention screen with four models checked, at both sizes, and the comparison
    exported as one figure: the bundle's four English -> French runs (two Luong runs with
    their heads, the two Transformers) on a WPT-03 trial pair; with a bundle that has
    not four, its es -> en runs and a fourth trained here (comparison_run)."""
    att = window.attention
    en_fr = _runs_of_pair(window, "en", "fr")
    if len(en_fr) >= 4:
        show_wpt03_pair(app, window, [r.id for r in en_fr][:4], baseline=False,
                        pair=FOUR_MODELS_PAIR)
    else:
        comparison_run(window.workspace)
        window._refresh_runs()  # the new run listed; the pairs are read again
        while att.loading_pairs:
            app.processEvents()
            time.sleep(0.02)
        att.models.set_checked([r.id for r in _runs_of_pair(window, "es", "en")][:4])
        wait(app, att.compute())
        wait(app, getattr(att, "baseline_job", None))
        att.pair_list.setCurrentRow(GOLD_PAIR)
    window.tabs.setCurrentWidget(att)
    written = []
    for width, height, suffix in SIZES:
        window.resize(width, height)
        written.append(shoot(app, window, out, "attention-4-models" + suffix))
        if not suffix:
            written.append(att.heatmap_grid.export_comparison(
                out / "attention-4-models-figure.png", dpi=96))
    return written


def main(argv: list[str] | None = None) -> int:
    """`make screenshots`: the README's pictures, written to the folder given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--models", type=Path, default=None,
                        help="bundled runs to install (default: resources/demo/models)")
    args = parser.parse_args(argv)
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.gc_guard import collect_on_gui_thread
    from app.main_window import MainWindow, apply_style
    from core.services.demo import MODELS_DIR, ensure_demo_workspace

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="nmt-shots-") as tmp:
        QSettings.setDefaultFormat(QSettings.Format.IniFormat)
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
        app = QApplication.instance() or QApplication(sys.argv[:1])
        app.setOrganizationName("nmt-workbench-screenshots")
        apply_style(app)
        collect_on_gui_thread()
        root = ensure_demo_workspace(Path(tmp) / "demo", models_dir=args.models or MODELS_DIR)
        letter = Path(tmp) / "carta.txt"
        letter.write_text(LETTER, encoding="utf-8")
        window = MainWindow(root)
        window.show()
        # the es -> en runs (the demo corpus, its letter and its gold); the en-fr ones
        # have pictures of their own (english_french_shots)
        ids = [r.id for r in _runs_of_pair(window, "es", "en")]
        # the work each screen shows, done once
        window.tabs.setCurrentWidget(window.translate)
        window.translate.models.set_checked(ids[-1:])  # the last bundled run
        wait(app, window.translate.open_document(letter))
        wait(app, window.translate.translate())
        window.translate.table.setCurrentCell(0, 0)
        window.tabs.setCurrentWidget(window.attention)
        att = window.attention
        att.models.set_checked(ids[:3])
        att.pair_source.setCurrentText("Gold set")
        att.gold_set.setCurrentText("demo-gold")
        wait(app, att.load_pairs())
        if hasattr(att, "baseline"):
            att.baseline.setChecked(True)
        wait(app, att.compute())
        wait(app, getattr(att, "baseline_job", None))
        att.pair_list.setCurrentRow(GOLD_PAIR)
        window.tabs.setCurrentWidget(window.evaluation)
        wait(app, window.evaluation.evaluate_selected(ids))
        window.evaluation.table.selectAll()
        window.tabs.setCurrentWidget(window.training)
        window.training.runs_table.selectAll()
        window.training.show_curves(ids)
        written = []
        for width, height, suffix in SIZES:
            window.resize(width, height)
            for name, panel in (("corpora", window.corpora), ("training", window.training),
                                ("translate", window.translate),
                                ("attention", window.attention),
                                ("evaluation", window.evaluation)):
                window.tabs.setCurrentWidget(panel)
                written.append(shoot(app, window, args.out, name + suffix))
        written += shoot_comparison(app, window, args.out)
        written += english_french_shots(app, window, args.out, Path(tmp))
        written.append(docx_round_trip(app, window, args.out, Path(tmp), ids[-1]))
        window.close()
        window.workspace.close() if window.workspace is not None else None
    for path in written:
        print(f"wrote {path}")
    return 0


def letter_docx(path: Path) -> Path:
    """The Spanish letter of translate-docx.webp as a Word document (the team's own
    sentences, like the demo corpus): a heading, a paragraph whose runs are bold and
    italic, a blank paragraph, two list items, a closing line."""
    import docx  # the dev extra, which `make` installs

    d = docx.Document()
    d.add_heading("Una carta para mi hermano", level=1)
    p = d.add_paragraph()
    p.add_run("Ayer compré una mesa nueva. ").bold = True
    p.add_run("Es pequeña pero muy bonita.").italic = True
    p.add_run(" Mi hermano la trajo en su coche.")
    d.add_paragraph("")
    d.add_paragraph("Comemos allí todos los días.", style="List Bullet")
    item = d.add_paragraph("Tengo que ", style="List Bullet")
    item.add_run("trabajar mañana.").bold = True
    d.add_paragraph("Gracias por todo.")
    d.save(path)
    return path


def docx_round_trip(app, window, out: Path, tmp: Path, run_id: int) -> Path:
    """translate-docx.webp: letter_docx opened on the Translate screen, translated by run
    `run_id`, exported as .docx through the screen, and both files drawn side by side."""
    from app.docx_pages import round_trip_image

    source = letter_docx(tmp / "carta.docx")
    tr = window.translate
    window.tabs.setCurrentWidget(tr)
    tr.compare.enabled.setChecked(False)
    tr.models.set_checked([run_id])
    wait(app, tr.open_document(source))
    wait(app, tr.translate())
    export = tr.export(tmp / "carta_en.docx")  # a job: the file is written off the GUI thread
    wait(app, export)
    written = export.result
    image = round_trip_image(source, written[0], "carta.docx: opened (es)",
                             f"{written[0].name}: exported by the workbench (en)")
    return save_picture(image, out / f"translate-docx.{PICTURE}")


def _runs_of_pair(window, src: str, tgt: str) -> list:
    """The workspace's runs whose corpus is src -> tgt, oldest first."""
    ws = window.workspace
    return [r for r in ws.list_runs() if r.corpus_id is not None
            and (ws.get_corpus(r.corpus_id).src_lang, ws.get_corpus(r.corpus_id).tgt_lang)
            == (src, tgt)]


def english_french_shots(app, window, out: Path, tmp: Path) -> list[Path]:
    """attention-hansards.webp, attention-layers.webp and translate-context.webp, when the
    bundle has the runs."""
    from core.config import RunConfig
    from core.families import family_traits
    from core.services.demo import EN_FR_DIR

    en_fr, fr_en = _runs_of_pair(window, "en", "fr"), _runs_of_pair(window, "fr", "en")

    def self_taught(r) -> bool:  # an aligner-free head (guided by runs' own attention)
        return bool(RunConfig.from_dict(r.config).train.guide_runs)

    # the heads over the guided runs first; the aligner-free one is the contrast below
    heads = sorted((r for r in en_fr if RunConfig.from_dict(r.config).model.alignment_head),
                   key=self_taught)
    written = []
    window.resize(1400, 900)
    if heads:
        att = window.attention
        # the head run and its reverse side by side, the reverse one read from the
        # other side of the gold (its own orientation)
        reverse_heads = [r for r in fr_en if RunConfig.from_dict(r.config).model.alignment_head
                         and not self_taught(r)]
        # and the unsupervised contrast run (its attention never guided), when bundled
        unguided = [r for r in en_fr if family_traits(r.family).alignment_head and (
            self_taught(r) or not RunConfig.from_dict(r.config).train.guided_alignment)]
        show_wpt03_pair(app, window, [heads[0].id] + [r.id for r in reverse_heads[:1]]
                        + [r.id for r in unguided[:1]],
                        reverse=fr_en[0].id if fr_en else None)
        written.append(shoot(app, window, out, "attention-hansards"))
    transformers = [r for r in en_fr if family_traits(r.family).layered
                    and not family_traits(r.family).context]
    if heads and transformers:
        # one head of one decoder layer of the sentence Transformer beside the head run, on
        # a pair of the team's documents (the 'Test split' of the en-fr demo corpus)
        att = window.attention
        window.tabs.setCurrentWidget(att)
        att.baseline.setChecked(False)
        att.models.set_checked([transformers[0].id, heads[0].id])
        att.pair_source.setCurrentText("Test split")
        wait(app, att.load_pairs())
        wait(app, att.compute())
        att.pair_list.setCurrentRow(LAYERS_PAIR)
        layered = next(i for i, v in enumerate(att.base) if v is not None and v.layered)
        att.set_layer(layered, 1, 0)
        written.append(shoot(app, window, out, "attention-layers"))
    context = [r for r in en_fr if family_traits(r.family).context]
    sentence = [r for r in en_fr if not family_traits(r.family).context
                and r.family.startswith("transformer")]
    if context and sentence:
        lines = (EN_FR_DIR / "demo.en").read_text(encoding="utf-8").splitlines()
        docids = (EN_FR_DIR / "demo.docids").read_text(encoding="utf-8").splitlines()
        document = tmp / "letter.txt"
        document.write_text(" ".join(line for line, d in zip(lines, docids, strict=True)
                                     if d.startswith(CONTEXT_DOCUMENT)) + "\n",
                            encoding="utf-8")
        tr = window.translate
        window.tabs.setCurrentWidget(tr)
        tr.models.set_checked([context[0].id])
        tr.compare.enabled.setChecked(True)
        tr.compare.baseline.setCurrentIndex(tr.compare.baseline.findData(sentence[0].id))
        wait(app, tr.open_document(document))
        wait(app, tr.translate())
        tr.table.setCurrentCell(1, 0)
        written.append(shoot(app, window, out, "translate-context"))
    return written


if __name__ == "__main__":
    sys.exit(main())
