"""The whole pipeline on the bundled demo corpus, headless: the `demo` command's work.

Creates (or opens) a demo workspace, imports the demo corpus with its documents and
the demo gold set, trains a small model (preset `demo`; quick: a few steps),
translates the test split, scores it (BLEU/chrF/TER, BLEU by length), computes the
AER of the model's attention on the gold set beside eflomal's, exports translations
(TMX, XLIFF, JSON lines), alignments (Pharaoh) and an HTML report into
<workspace>/exports/<run>/ (demo, demo-2, ...), and returns a summary with the numbers
and the paths.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from core.evaluate.aer import PERCENT_FORMAT
from core.evaluate.alignment import write_pharaoh
from core.evaluate.report import write_html_report
from core.formats.export import write_translations
from core.jobs import JobContext
from core.services.alignment_runs import eflomal_systems, file_name
from core.services.eval_scores import metrics_table, score_systems
from core.services.translation import to_record
from core.workspace.paths import APP_NAME
from core.workspace.store import Workspace

QUICK_STEPS = 6


@dataclass
class DemoSummary:
    workspace: Path
    run_name: str
    steps: int
    seconds: float
    test_sentences: int
    metrics: dict[str, Any]  # bleu, chrf, ter, ... as stored in the evaluation
    aer: dict[str, float]  # system -> AER %
    files: dict[str, Path] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The summary for the terminal, one line each: workspace, model, test metrics, BLEU
        by length, AER (%), files written and the time taken."""
        m = self.metrics
        out = [f"demo workspace: {self.workspace}",
               f"model {self.run_name}: {self.steps} steps",
               f"test split ({self.test_sentences} sentences): BLEU {m['bleu']:.2f}  "
               f"chrF {m['chrf']:.2f}  TER {m['ter']:.2f}  tokenized BLEU "
               f"{m['tokenized_bleu']:.2f}",
               f"  sacreBLEU {m['bleu_signature']}",
               "BLEU by source length: " + ", ".join(
                   f"{k}: {'-' if v is None else f'{v:.2f}'}"
                   for k, v in m["bleu_by_length"].items() if m["bucket_sizes"][k])]
        out.append("AER on the demo gold set (lower is better): " + ", ".join(
            f"{k} {v:{PERCENT_FORMAT}} %" for k, v in self.aer.items()))
        out += [f"{k}: {v}" for k, v in self.files.items()]
        out.append(f"done in {self.seconds:.0f} s")
        return out


def fresh_demo_dir() -> Path:
    """A new, not yet existing folder for a demo run under the per-user data folder
    (demo-runs/<date-time>[-k])."""
    base = Path(user_data_dir(APP_NAME)) / "demo-runs"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path, k = base / stamp, 2
    while path.exists():
        path, k = base / f"{stamp}-{k}", k + 1
    return path


def _records(translations, pairs):
    out = []
    for i, (tr, p) in enumerate(zip(translations, pairs, strict=True)):
        r = to_record(tr, i, p.doc_id)
        r.reference = p.tgt
        out.append(r)
    return out


def run_demo(root: str | Path, quick: bool = False, beam: int = 5, log=print,
             listeners: list | None = None) -> DemoSummary:
    """The pipeline; `log` gets one line per stage, `listeners` the training job's events
    (the CLI's progress bar). Returns the summary."""
    from core.data.preprocess import Preprocessor  # lazy: a top-level import would load sacremoses

    # lazy: a top-level import would load sacremoses, sentencepiece, torch
    from core.evaluate.attention_aer import aer_table, attention_alignments

    # lazy: a top-level import would load sacremoses, sentencepiece, torch
    from core.infer.session import TranslationSession

    # lazy: a top-level import would load sacremoses, sentencepiece, torch
    from core.services.demo import demo_config, import_demo_corpus, import_demo_gold

    # lazy: a top-level import would load sacremoses, sentencepiece, torch
    from core.services.training import create_run, load_split_corpora, train_run

    started = time.perf_counter()
    with Workspace.open(root, allow_nonempty=False) as ws:
        log(f"demo workspace: {ws.root}")
        corpus_id = import_demo_corpus(ws, same_only=True)
        gold = import_demo_gold(ws)
        info = ws.get_corpus(corpus_id)
        log(f"corpus {info.name!r}: {info.n_pairs} pairs, {info.n_documents} documents; "
            f"gold set {gold.name!r}: {len(gold)} sentences")
        # one thread: on a model this small more threads only add synchronisation
        train: dict[str, Any] = dict(threads=1)
        if quick:
            train.update(max_steps=QUICK_STEPS, valid_every=3)
        config = demo_config("demo", None, **train)
        config.data.dev_sample = 20 if quick else config.data.dev_sample
        taken = {r.name for r in ws.list_runs()}
        name = next(n for n in ("demo", *(f"demo-{k}" for k in range(2, 10_000)))
                    if n not in taken)
        run_id = create_run(ws, corpus_id, config, name)
        result = train_run(ws, run_id, JobContext(list(listeners or [])))
        run_name = ws.get_run(run_id).name
        session = TranslationSession.open(ws, [run_id])
        _, parts = load_split_corpora(ws, corpus_id, config.train.seed)
        test = parts["test"].pairs
        log(f"\ntranslating the test split ({len(test)} sentences, beam {beam})")
        translations = session.translate([p.src for p in test], beam=beam)
        systems, lengths = score_systems({run_name: session}, {run_name: [run_id]}, test,
                                         info.src_lang, info.tgt_lang, beam,
                                         hyps_given={run_name: [t.text for t in translations]})
        metrics = systems[0].metrics
        ws.add_evaluation([run_id], f"{info.name}:test", metrics)
        log("aligning the gold set: attention (forced decoding) and eflomal")
        aligned = {f"{run_name} attention": attention_alignments(session, gold)}
        src_pre, tgt_pre = Preprocessor(info.src_lang), Preprocessor(info.tgt_lang)
        train_pairs = [(src_pre.tokenize(p.src), tgt_pre.tokenize(p.tgt))
                       for p in parts["train"].pairs]
        train_pairs = [(s, t) for s, t in train_pairs if s and t]
        aligned.update(eflomal_systems(gold, [s for s, _ in train_pairs],
                                       [t for _, t in train_pairs], "grow-diag-final-and"))
        aer = aer_table(aligned, gold)
        out = ws.exports_dir / run_name  # demo, demo-2, ...: never an earlier run's
        files: dict[str, Path] = {}
        records = _records(translations, test)
        for suffix in ("tmx", "xlf", "jsonl"):
            files[suffix.upper()] = write_translations(
                out / f"test-translations.{suffix}", records, src_lang=info.src_lang,
                tgt_lang=info.tgt_lang)[0]
        ws.add_translation(run_id, f"{info.name}:test", files["TMX"])
        for name, als in aligned.items():
            write_pharaoh(out / "alignments" / file_name(name), als)
        files["Pharaoh"] = out / "alignments"
        tables = [metrics_table(systems, f"Test split of {info.name!r} ({len(test)} sentences, "
                                f"beam {beam})"), lengths.to_table(), aer]
        files["HTML report"] = write_html_report(out / "report.html", tables,
                                                 "NMT Attention Workbench demo")
        aer_values = {r[0]: float(r[1]) for r in aer.rows}
    return DemoSummary(Path(ws.root), run_name, result.step, time.perf_counter() - started,
                       len(test), metrics, aer_values, files)
