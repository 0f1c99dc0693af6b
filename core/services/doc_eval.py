"""Document-level evaluation (thesis Table 5.5): every system translates the test
pairs' documents as documents; document-level BLEU and its gain over the sentence-level
systems (core.evaluate.doclevel), stored as evaluations '<test>:documents'."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError
from core.infer.decoding import decoding_settings
from core.jobs import JobContext
from core.workspace.store import Workspace

if TYPE_CHECKING:  # annotations only: importing the session would load torch
    from core.infer.session import TranslationSession


def system_info(session: TranslationSession):
    """The doc-level table's description of a session's model (strategy, context layers)."""
    from core.evaluate.doclevel import SystemInfo  # lazy: a top-level import would load sacrebleu

    m = session.first.config.model
    if m.family == "context_transformer":
        side = ", target context" if m.ctx_side == "target" else ""
        return SystemInfo(m.strategy + side, m.ctx_layers)
    if m.family == "concat":
        return SystemInfo("concat", None)
    return SystemInfo("sentence-level", None)


def document_groups(pairs: Sequence) -> list[list[int]]:
    """Indices of the pairs per document, in first-seen order (pairs without a document
    are left out)."""
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        if p.doc_id is not None:
            groups.setdefault(p.doc_id, []).append(i)
    return list(groups.values())


def document_level_and_store(ws: Workspace, sessions: dict[str, Any], run_ids: dict[str, list[int]],
                             pairs: Sequence, test_name: str, beam: int = 5,
                             ctx: JobContext | None = None, log=None):
    """Document-level BLEU of every system on the pairs' documents (thesis Table 5.5),
    stored as evaluations '<test_name>:documents' with each system's decoding settings
    (core.infer.decoding: beam, length penalty, ...). Returns core.evaluate.doclevel's
    result."""
    # lazy: a top-level import would load sacrebleu
    from core.evaluate.doclevel import document_bleu

    groups = document_groups(pairs)
    if not groups:
        raise ConfigError(f"{test_name}: the test pairs have no documents; --doc-level needs "
                          "a corpus imported with document ids")
    documents = [[(pairs[i].src, pairs[i].tgt) for i in g] for g in groups]
    systems = {}
    for name, session in sessions.items():
        if log:
            log(f"translating {len(documents)} documents with {name}")
        out = session.translate_documents([[s for s, _ in d] for d in documents],
                                          beam=beam, ctx=ctx)
        systems[name] = [[t.text for t in doc] for doc in out]
    result = document_bleu(documents, systems,
                           info={n: system_info(s) for n, s in sessions.items()})
    for name in systems:
        ws.add_evaluation(run_ids[name], f"{test_name}:documents",
                          {"doc_bleu": result.scores[name].score,
                           "bleu_signature": result.scores[name].signature,
                           "delta_bleu": result.delta(name), "documents": len(documents),
                           "decoding": decoding_settings(sessions[name], beam=beam)})
    return result
