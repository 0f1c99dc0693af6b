"""Corpus statistics for the corpora screen and `corpus stats` in the CLI."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from core.data.corpus import Corpus
from core.data.preprocess import Preprocessor
from core.data.vocab import UNK, AnyVocab, SubwordVocab


@dataclass
class SideStats:
    tokens: int  # running tokens
    types: int  # distinct tokens
    oov_rate: float | None  # share of tokens the vocabulary maps to UNK (None: no vocab)
    mean_len: float
    max_len: int
    hist_edges: list[int]  # bin i counts lengths in [edges[i], edges[i+1])
    hist_counts: list[int]


@dataclass
class CorpusStats:
    pairs: int
    src: SideStats
    tgt: SideStats
    documents: int
    doc_sizes: dict[str, int] = field(default_factory=dict)  # doc id -> pairs


def _tokenizer(pre: Preprocessor | None, vocab: AnyVocab | None) -> Callable[[str], list[str]]:
    if isinstance(vocab, SubwordVocab):
        return (lambda t: vocab.tokenize(pre.normalize(t))) if pre else vocab.tokenize
    return pre.tokenize if pre else str.split


def _side(texts: list[str], tokenize: Callable[[str], list[str]], vocab: AnyVocab | None,
          bin_width: int) -> SideStats:
    counts: Counter[str] = Counter()
    lengths: list[int] = []
    for text in texts:
        tokens = tokenize(text)
        counts.update(tokens)
        lengths.append(len(tokens))
    total = sum(lengths)
    oov = None
    if vocab is not None:
        unknown = sum(n for tok, n in counts.items() if vocab.encode([tok])[0] == UNK)
        oov = unknown / total if total else 0.0
    longest = max(lengths, default=0)
    edges = list(range(0, longest + bin_width + 1, bin_width))[: longest // bin_width + 2]
    hist = [0] * (len(edges) - 1)
    for n in lengths:
        hist[n // bin_width] += 1
    return SideStats(total, len(counts), oov, total / len(lengths) if lengths else 0.0,
                     longest, edges, hist)


def corpus_stats(
    corpus: Corpus, src_pre: Preprocessor | None = None, tgt_pre: Preprocessor | None = None,
    src_vocab: AnyVocab | None = None, tgt_vocab: AnyVocab | None = None, bin_width: int = 5,
) -> CorpusStats:
    """Counts per side under the given tokenisation (whitespace when no Preprocessor;
    sentencepiece pieces for a SubwordVocab), OOV rates under the given vocabularies,
    length histograms with bins of `bin_width` tokens, and pairs per document."""
    src = _side([p.src for p in corpus.pairs], _tokenizer(src_pre, src_vocab), src_vocab, bin_width)
    tgt = _side([p.tgt for p in corpus.pairs], _tokenizer(tgt_pre, tgt_vocab), tgt_vocab, bin_width)
    docs = {d: len(ix) for d, ix in corpus.documents().items()}
    return CorpusStats(len(corpus), src, tgt, len(docs), docs)


def format_stats(stats: CorpusStats, src_lang: str = "src", tgt_lang: str = "tgt") -> str:
    """A plain-text table for the CLI."""
    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.2f}%"

    rows = [
        ("", src_lang, tgt_lang),
        ("tokens", f"{stats.src.tokens:,}", f"{stats.tgt.tokens:,}"),
        ("types", f"{stats.src.types:,}", f"{stats.tgt.types:,}"),
        ("mean length", f"{stats.src.mean_len:.1f}", f"{stats.tgt.mean_len:.1f}"),
        ("max length", str(stats.src.max_len), str(stats.tgt.max_len)),
    ]
    if stats.src.oov_rate is not None or stats.tgt.oov_rate is not None:  # vocabularies given
        rows.append(("OOV rate", pct(stats.src.oov_rate), pct(stats.tgt.oov_rate)))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    lines = [f"pairs: {stats.pairs:,}   documents: {stats.documents:,}"]
    lines += [f"{a:<{w0}}  {b:>{w1}}  {c:>{w2}}" for a, b, c in rows]
    lines.append("length histogram (tokens: src / tgt pairs)")
    src_h, tgt_h = stats.src, stats.tgt
    bins = max(len(src_h.hist_counts), len(tgt_h.hist_counts))
    width = (src_h.hist_edges[1] - src_h.hist_edges[0]) if len(src_h.hist_edges) > 1 else 1
    for i in range(bins):
        s = src_h.hist_counts[i] if i < len(src_h.hist_counts) else 0
        t = tgt_h.hist_counts[i] if i < len(tgt_h.hist_counts) else 0
        lines.append(f"  {i * width:>4}-{(i + 1) * width - 1:<4} {s:>8,} / {t:,}")
    return "\n".join(lines)
