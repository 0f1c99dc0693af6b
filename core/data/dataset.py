"""Corpus -> ids: the glue training uses.

`prepare_dataset` builds the Preprocessors and (unless given) the vocabularies from
the training split, turns every pair into token ids, drops pairs with an empty side
(both splits) and training pairs longer than `data_cfg.max_len` tokens, and reports
what it dropped. Raw text stays reachable: `split.pair(i)` is the SentencePair behind
ids `split.src_ids[i]`, `split.tgt_ids[i]`.

Tokens: word vocabularies use the Preprocessor's Moses tokens; subword vocabularies
apply the Preprocessor's normalisation and then sentencepiece (which needs no
pre-tokenisation). `encode_text` / `decode_ids` are that one rule, for inference too.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.config import DataConfig
from core.data.context import CONTEXT_START, context_ids, following_sentences, previous_sentences
from core.data.corpus import Corpus, SentencePair
from core.data.filters import FilterReport, filter_empty, filter_pairs
from core.data.preprocess import Preprocessor
from core.data.vocab import EOS, AnyVocab, SubwordVocab, Vocab
from core.jobs import JobContext


def text_to_tokens(text: str, pre: Preprocessor, vocab: AnyVocab) -> list[str]:
    """The tokens a model sees for `text`: sentencepiece pieces of the normalised text for
    a SubwordVocab, the preprocessor's (Moses) tokens otherwise."""
    if isinstance(vocab, SubwordVocab):
        return vocab.tokenize(pre.model_text(text))
    return pre.tokenize(text)


def encode_text(text: str, pre: Preprocessor, vocab: AnyVocab) -> list[int]:
    """Raw sentence -> ids (no BOS/EOS)."""
    return vocab.encode(text_to_tokens(text, pre, vocab))


def decode_ids(ids: list[int], pre: Preprocessor, vocab: AnyVocab) -> str:
    """Ids (stopping at EOS, dropping specials) -> detokenised sentence."""
    cut: list[int] = []
    for i in ids:
        if i == EOS:
            break
        if i > EOS:
            cut.append(int(i))
    tokens = vocab.decode(cut)
    if isinstance(vocab, SubwordVocab):
        return pre.restore(vocab.detokenize(tokens))
    return pre.detokenize(tokens)


@dataclass
class SplitData:
    """One split as ids. `corpus` holds exactly the kept pairs (same order as the ids);
    `indices[i]` is pair i's position in the corpus given to prepare_dataset."""

    corpus: Corpus
    src_ids: list[list[int]]
    tgt_ids: list[list[int]]
    indices: list[int]
    ctx_ids: list[list[int]] | None = None

    def __len__(self) -> int:
        return len(self.src_ids)

    def pair(self, i: int) -> SentencePair:
        """The corpus pair at corpus index `i`."""
        return self.corpus.pairs[i]


@dataclass
class PreparedData:
    train: SplitData
    dev: SplitData
    src_vocab: AnyVocab
    tgt_vocab: AnyVocab
    src_pre: Preprocessor
    tgt_pre: Preprocessor
    train_report: FilterReport  # empty + too long, on the training split
    dev_report: FilterReport  # empty only: dev is never length-filtered
    notes: list[str] = field(default_factory=list)


def build_vocabs(
    corpus: Corpus, data_cfg: DataConfig, src_pre: Preprocessor, tgt_pre: Preprocessor,
    word_tokens: tuple[list[list[str]], list[list[str]]] | None = None,
) -> tuple[AnyVocab, AnyVocab]:
    """Vocabularies from a (training) corpus, as data_cfg asks: word / bpe / unigram,
    joint or separate; sizes src_vocab_size / tgt_vocab_size (joint: src_vocab_size).
    `word_tokens`: the corpus already Moses-tokenised (src, tgt), to avoid doing it twice."""
    if data_cfg.vocab == "word":
        src_tok, tgt_tok = word_tokens or (
            [src_pre.tokenize(p.src) for p in corpus.pairs],
            [tgt_pre.tokenize(p.tgt) for p in corpus.pairs],
        )
        if data_cfg.joint_vocab:
            joint = Vocab.build(src_tok + tgt_tok, max_size=data_cfg.src_vocab_size)
            return joint, joint
        return (Vocab.build(src_tok, max_size=data_cfg.src_vocab_size),
                Vocab.build(tgt_tok, max_size=data_cfg.tgt_vocab_size))
    src_norm = [src_pre.normalize(p.src) for p in corpus.pairs]
    tgt_norm = [tgt_pre.normalize(p.tgt) for p in corpus.pairs]
    if data_cfg.joint_vocab:
        joint = SubwordVocab.train(src_norm + tgt_norm, data_cfg.src_vocab_size, data_cfg.vocab)
        return joint, joint
    return (SubwordVocab.train(src_norm, data_cfg.src_vocab_size, data_cfg.vocab),
            SubwordVocab.train(tgt_norm, data_cfg.tgt_vocab_size, data_cfg.vocab))


def _word_tokens(
    corpus: Corpus, src_pre: Preprocessor, tgt_pre: Preprocessor, job: JobContext | None
) -> tuple[list[list[str]], list[list[str]]]:
    src: list[list[str]] = []
    tgt: list[list[str]] = []
    for n, p in enumerate(corpus.pairs):
        src.append(src_pre.tokenize(p.src))
        tgt.append(tgt_pre.tokenize(p.tgt))
        if job is not None and n % 5000 == 0:
            job.check_cancelled()
            job.progress(n, len(corpus), "tokenising train")
    return src, tgt


def _encode_split(
    corpus: Corpus, src_pre: Preprocessor, tgt_pre: Preprocessor,
    src_vocab: AnyVocab, tgt_vocab: AnyVocab, max_len: int, job: JobContext | None, stage: str,
    word_tokens: tuple[list[list[str]], list[list[str]]] | None = None,
) -> tuple[SplitData, FilterReport]:
    """Ids of the non-empty pairs of `corpus` (`word_tokens`: their tokens, if known)."""
    kept_corpus, report = filter_empty(corpus)
    kept = [i for i, p in enumerate(corpus.pairs) if p.src.strip() and p.tgt.strip()]
    src_ids: list[list[int]] = []
    tgt_ids: list[list[int]] = []
    if word_tokens is not None:
        src_ids = [src_vocab.encode(t) for t in word_tokens[0]]
        tgt_ids = [tgt_vocab.encode(t) for t in word_tokens[1]]
    for n, p in enumerate(kept_corpus.pairs if word_tokens is None else []):
        src_ids.append(encode_text(p.src, src_pre, src_vocab))
        tgt_ids.append(encode_text(p.tgt, tgt_pre, tgt_vocab))
        if job is not None and n % 5000 == 0:
            job.check_cancelled()
            job.progress(n, len(kept_corpus), f"tokenising {stage}")
    if max_len > 0:
        long = {i for i in range(len(src_ids)) if len(src_ids[i]) > max_len or len(tgt_ids[i]) > max_len}
        kept_corpus, r = filter_pairs(kept_corpus, lambda i: "too long" if i in long else None)
        report = report.merge(r)
        keep = [i for i in range(len(src_ids)) if i not in long]
        src_ids = [src_ids[i] for i in keep]
        tgt_ids = [tgt_ids[i] for i in keep]
        kept = [kept[i] for i in keep]
    return SplitData(kept_corpus, src_ids, tgt_ids, kept), report


def prepare_dataset(
    corpus_train: Corpus, corpus_dev: Corpus, data_cfg: DataConfig, src_lang: str,
    tgt_lang: str, vocabs: tuple[AnyVocab, AnyVocab] | None = None, context_k: int = 0,
    preprocessors: tuple[Preprocessor, Preprocessor] | None = None,
    job: JobContext | None = None, context_following: int = 0, context_side: str = "source",
) -> PreparedData:
    """Tokenise and index train and dev.

    vocabs: (src, tgt) to reuse (fine-tuning, resuming); built from train otherwise.
    context_k > 0 fills `ctx_ids` with the k previous source sentences of the same
    document (CONTEXT_START at a document start), then, with context_following = F > 0,
    the F following ones (CONTEXT_START at a document end), as core.data.context joins
    them; pairs removed by the filters are not part of any context. With context_side
    'target' the context is the previous target sentences' ids (model.ctx_side: the
    reference in training; no following side)."""
    if context_side not in ("source", "target"):
        raise ValueError(f"context_side must be 'source' or 'target', not {context_side!r}")
    if context_side == "target" and context_following:
        raise ValueError("a target-side context has no following sentences")
    src_pre, tgt_pre = preprocessors or (
        Preprocessor(src_lang, lowercase=data_cfg.lowercase, fold_accents=data_cfg.fold_accents,
                     pretokenized=data_cfg.pretokenized,
                     normalize_punct=not data_cfg.pretokenized),
        Preprocessor(tgt_lang, lowercase=data_cfg.lowercase, fold_accents=data_cfg.fold_accents,
                     pretokenized=data_cfg.pretokenized,
                     normalize_punct=not data_cfg.pretokenized),
    )
    notes: list[str] = []
    word_tokens = None
    if vocabs is None:
        non_empty, _ = filter_empty(corpus_train)
        if data_cfg.vocab == "word":  # tokenise train once, for the vocab and the ids
            word_tokens = _word_tokens(non_empty, src_pre, tgt_pre, job)
        if job is not None:
            job.emit("log", message="building vocabularies")
        src_vocab, tgt_vocab = build_vocabs(non_empty, data_cfg, src_pre, tgt_pre, word_tokens)
        notes.append(f"built {data_cfg.vocab} vocabularies: {len(src_vocab)} source, {len(tgt_vocab)} target")
    else:
        src_vocab, tgt_vocab = vocabs
    train, train_report = _encode_split(
        corpus_train, src_pre, tgt_pre, src_vocab, tgt_vocab, data_cfg.max_len, job, "train",
        word_tokens)
    dev, dev_report = _encode_split(
        corpus_dev, src_pre, tgt_pre, src_vocab, tgt_vocab, 0, job, "dev")
    if context_k > 0 or context_following > 0:
        start = src_vocab.encode([CONTEXT_START])[0]  # a special: the same id in both
        for split in (train, dev):
            previous = previous_sentences(split.corpus, context_k) if context_k > 0 else None
            following = (following_sentences(split.corpus, context_following)
                         if context_following > 0 else None)
            side = split.tgt_ids if context_side == "target" else split.src_ids
            split.ctx_ids = context_ids(side, previous, start, following)
    return PreparedData(train, dev, src_vocab, tgt_vocab, src_pre, tgt_pre,
                        train_report, dev_report, notes)
