"""Which decoder layer and head of a Transformer run aligns, and whether a rule that reads
no gold would pick it (experiments/RESULTS.md, section H, fifth session).

    python experiments/transformer_heads.py WS RUN --pairs 2000 \\
        --reverse-ws WS2 --reverse-run FR_EN_HEAD_RUN --gold-dir resources/demo/wpt03

For every (layer, head or the layer's mean of heads, reading) of RUN's cross-attention:
- the share of anchors (tokens spelled the same on both sides, once each:
  core.services.reading_anchors) linked to their twin on `--pairs` training pairs of
  RUN's own corpus;
- with --reverse-run, the Dice agreement of its links with the reverse run's alignment
  head (which sees the word it aligns, so it has no one-step shift to agree with by
  accident) on `--pairs` training pairs of the reverse run's corpus, in words;
- with --gold-dir (trial.en, trial.fr, trial.talp), the AER of the readings each rule
  ranks first, alone and symmetrised with the reverse head.
Links are argmax links without the final-punctuation sink, as the guide reads them.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from core.evaluate.aer import corpus_aer  # noqa: E402
from core.evaluate.attention_aer import (  # noqa: E402
    GoldForcing,
    at_layer,
    force_gold,
    symmetrize_with_reverse,
)
from core.evaluate.goldsets import read_gold_files  # noqa: E402
from core.infer.forced import ForcedResult, teacher_forcing_tensors  # noqa: E402
from core.services.corpora import load_split_corpora  # noqa: E402
from core.services.reading_anchors import anchor_hits, training_token_pairs  # noqa: E402
from core.services.translation import open_session  # noqa: E402
from core.train.artifacts import load_model  # noqa: E402
from core.workspace.store import Workspace  # noqa: E402

READINGS = ("predict", "shift", "sum", "previous")
SYMMETRISATIONS = ("grow-diag-final-and", "grow-diag", "intersection")


def candidates(n_layers: int, n_heads: int) -> list[tuple[int, int | None, str]]:
    """Every (layer, head or None = the layer's mean, reading), 0-based."""
    return [(layer, head, reading) for layer in range(n_layers)
            for head in [*range(n_heads), None] for reading in READINGS]


def links_of(forced, cand) -> list:
    """The argmax links (no sink) of each forced pair at candidate `cand`."""
    layer, head, reading = cand
    return [at_layer(p, layer, head).links(reading, True)[1] for p in forced]


def anchor_shares(ws_path: str, run: str, pairs: int) -> dict:
    """{candidate: share of anchors linked} on `pairs` training pairs of the run's corpus,
    in the run's own tokens (its pieces: the anchors are tokens), one forced pass as
    core.services.attention_links reads them."""
    with Workspace.open(ws_path, create=False) as ws:
        info = ws.get_run(run)
        loaded = load_model(ws.run_dir(info.id), "best", torch.device("cpu"),
                            run_config=info.config)
        src, tgt = training_token_pairs(ws, info.id, loaded, pairs)
    model, sv, tv = loaded.model.eval(), loaded.src_vocab, loaded.tgt_vocab
    found: dict = {}
    for start in range(0, len(src), 128):
        batch = range(start, min(start + 128, len(src)))
        s_ids, t_ids = [sv.encode(src[i]) for i in batch], [tv.encode(tgt[i]) for i in batch]
        padded = torch.zeros(len(s_ids), max(map(len, s_ids)), dtype=torch.long)
        for b, ids in enumerate(s_ids):
            padded[b, :len(ids)] = torch.tensor(ids)
        tgt_in, _ = teacher_forcing_tensors(t_ids, torch.device("cpu"))
        with torch.no_grad():
            out = model(padded, torch.tensor([len(x) for x in s_ids]), tgt_in,
                        out_vocab=torch.arange(4))
        layers = out.layer_attention.float().numpy()  # L x B x H x T x S
        for b, i in enumerate(batch):
            cut = layers[:, b, :, :len(t_ids[b]) + 1, :len(s_ids[b])]
            pair = GoldForcing(ForcedResult(0.0, [], cut[-1].mean(0), layer_attention=cut),
                               src[i], tgt[i], list(range(len(src[i]))),
                               list(range(len(tgt[i]))), False, src[i], tgt[i])
            for cand in candidates(*cut.shape[:2]):
                found.setdefault(cand, []).append(sorted(links_of([pair], cand)[0].sure))
    shares = {}
    for cand, links in found.items():
        hits, total = anchor_hits(links, src, tgt)
        shares[cand] = hits / max(total, 1)
    return shares


def training_words(ws_path: str, run: str, pairs: int) -> tuple[list, list]:
    """`pairs` training pairs of the run's corpus (seed 7), as whitespace words, source
    side first in the corpus's own direction."""
    with Workspace.open(ws_path, create=False) as ws:
        info = ws.get_run(run)
        _corpus, parts = load_split_corpora(ws, info.corpus_id, info.config["train"]["seed"])
    train = parts["train"].pairs
    chosen = sorted(random.Random(7).sample(range(len(train)), min(pairs, len(train))))
    kept = [(train[i].src.split(), train[i].tgt.split()) for i in chosen]
    kept = [(s, t) for s, t in kept if 0 < len(s) <= 60 and 0 < len(t) <= 60]
    return [s for s, _ in kept], [t for _, t in kept]


def head_links(ws_path: str, run: str, src_words, tgt_words) -> list:
    """The alignment head's links (no sink) of `run` over the word pairs."""
    with Workspace.open(ws_path, create=False) as ws:
        forced = force_gold(open_session(ws, [ws.get_run(run).id]), src_words, tgt_words)
        return [p.links("head", True)[1] for p in forced]


def forced_words(ws_path: str, run: str, src_words, tgt_words) -> list:
    with Workspace.open(ws_path, create=False) as ws:
        return list(force_gold(open_session(ws, [ws.get_run(run).id]), src_words, tgt_words))


def agreement(ws_path: str, run: str, rev_ws: str, rev_run: str, pairs: int) -> dict:
    """{candidate: Dice of its links with the reverse run's head links} on `pairs` of the
    reverse run's training pairs (read the other way round)."""
    rev_src, rev_tgt = training_words(rev_ws, rev_run, pairs)
    reference = [{(t, s) for s, t in a.sure} for a in head_links(rev_ws, rev_run, rev_src, rev_tgt)]
    forced = forced_words(ws_path, run, rev_tgt, rev_src)
    dice = {}
    for cand in candidates(*forced[0].result.layer_attention.shape[:2]):
        found = links_of(forced, cand)
        common = sum(len(a.sure & r) for a, r in zip(found, reference, strict=True))
        dice[cand] = 2 * common / max(1, sum(len(a.sure) + len(r)
                                             for a, r in zip(found, reference, strict=True)))
    return dice


def name(cand) -> str:
    layer, head, reading = cand
    return f"layer {layer + 1} {'mean' if head is None else f'head {head + 1}'} at {reading}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workspace")
    ap.add_argument("run")
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--reverse-ws")
    ap.add_argument("--reverse-run", help="a tgt->src run with an alignment head")
    ap.add_argument("--gold-dir", help="a folder with trial.en, trial.fr, trial.talp")
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args()
    rules = {"anchors": anchor_shares(args.workspace, args.run, args.pairs)}
    if args.reverse_run:
        rules["agreement"] = agreement(args.workspace, args.run, args.reverse_ws or args.workspace,
                                       args.reverse_run, args.pairs)
    for rule, scores in rules.items():
        print(f"# {rule}: the first {args.top} of {len(scores)} readings")
        for cand in sorted(scores, key=scores.get, reverse=True)[:args.top]:
            print(f"{100 * scores[cand]:5.1f} %  {name(cand)}")
    if not args.gold_dir:
        return
    g = Path(args.gold_dir)
    src, tgt, gold = read_gold_files(g / "trial.en", g / "trial.fr", g / "trial.talp", "talp",
                                     False, False)
    forced = forced_words(args.workspace, args.run, src, tgt)
    reverse = (head_links(args.reverse_ws or args.workspace, args.reverse_run, tgt, src)
               if args.reverse_run else None)
    print("# AER % on the gold of every reading, alone / with the reverse head: "
          + " / ".join(SYMMETRISATIONS))
    scored = []
    for cand in candidates(*forced[0].result.layer_attention.shape[:2]):
        found = links_of(forced, cand)
        alone = 100 * corpus_aer(found, gold).aer
        both = [100 * corpus_aer(symmetrize_with_reverse(found, reverse, h), gold).aer
                if reverse is not None else float("nan") for h in SYMMETRISATIONS]
        scored.append((alone, both, cand))
    for alone, both, cand in sorted(scored, key=lambda row: row[0])[:args.top]:
        ranks = ", ".join(f"{rule} rank {sorted(s, key=s.get, reverse=True).index(cand) + 1}"
                          for rule, s in rules.items())
        print(f"{alone:5.2f} / {' / '.join(f'{b:5.2f}' for b in both)}  {name(cand)}  ({ranks})")


if __name__ == "__main__":
    main()
