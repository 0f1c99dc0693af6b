"""`bench translate --marian`: an imported Marian model of OPUS-MT size decoding on the
workbench's batched search against transformers' `generate`, same sentences, same beam.

The model is made here, never downloaded: a MarianMTModel of OPUS-MT's size (6 + 6
layers, d_model 512, 8 heads, feed-forward 2048, a shared vocabulary of 58,101 pieces as
opus-mt-en-de has; `--marian-vocab` for another) with transformers' random initial
weights, saved in the Hugging Face layout beside a sentencepiece model trained on the
bench sentences (vocab.json: its pieces, filler pieces up to the size, `<pad>` last) and
read back by the same code as `runs import` (core.services.marian_import.read_marian).

Both decode the same batches at a fixed length: `length` pieces, then `</s>` (the
workbench's min_len = max_len_abs = length; generate's min_new_tokens = length,
max_new_tokens = length + 1 with `</s>` forced last, num_beams = beam, no sampling,
length_penalty 0, `<pad>` banned as OPUS-MT's bad_words_ids do), so each runs
length + 1 decoder steps per sentence. transformers runs with its default attention
(sdpa) and returns no attention; the workbench's search also gathers every step's
cross-attention (eager attention), as the Attention screen shows it. Rounds alternate
which side goes first; sentences/s counts all rounds. The outputs are compared too.
"""
from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import torch

from core.errors import ConfigError
from core.tooling.bench import load_bench_pairs, machine_line

#: OPUS-MT's Transformer-base size (Helsinki-NLP/opus-mt-en-de's config.json)
OPUS_SIZE = dict(d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                 decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048,
                 max_position_embeddings=512, scale_embedding=True, activation_function="swish")
OPUS_VOCAB = 58101
#: pieces of the sentencepiece model trained on the bench sentences (the rest are filler)
SPM_PIECES = 8000
HEADER = (f"{'search':>8} {'batch':>6} {'ours sent/s':>12} {'generate sent/s':>16} "
          f"{'ours/generate':>14} {'same output':>12}")


def _train_spm(lines: list[str], size: int) -> bytes:
    """A unigram sentencepiece model of `lines` (about `size` pieces), as bytes."""
    # lazy: sentencepiece and transformers (the marian extra) load only when the bench runs
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=out, vocab_size=size, model_type="unigram",
        hard_vocab_limit=False, num_threads=1, minloglevel=2, shuffle_input_sentence=False)
    return out.getvalue()


def opus_folder(folder: Path, lines: list[str], vocab_size: int, seed: int = 1) -> Path:
    """Write a random-weight Marian model of OPUS-MT size into `folder` in the layout
    `runs import` reads: config.json, model.safetensors, source.spm / target.spm (one
    model trained on `lines`), vocab.json of `vocab_size` pieces. Returns `folder`."""
    # lazy: sentencepiece and transformers (the marian extra) load only when the bench runs
    import sentencepiece as spm
    import transformers  # lazy, as above

    proto = _train_spm(lines, min(SPM_PIECES, vocab_size - 3))
    sp = spm.SentencePieceProcessor(model_proto=proto)
    pieces = ["</s>", "<unk>"] + [sp.id_to_piece(i) for i in range(sp.get_piece_size())
                                  if not (sp.is_control(i) or sp.is_unknown(i))]
    pieces = pieces[:vocab_size - 1]
    pieces += [f"▁filler{i}" for i in range(vocab_size - 1 - len(pieces))] + ["<pad>"]
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("source.spm", "target.spm"):
        (folder / name).write_bytes(proto)
    (folder / "vocab.json").write_text(json.dumps({p: i for i, p in enumerate(pieces)}),
                                       encoding="utf-8")
    pad = vocab_size - 1
    config = transformers.MarianConfig(
        vocab_size=vocab_size, decoder_vocab_size=vocab_size, pad_token_id=pad,
        eos_token_id=0, decoder_start_token_id=pad, forced_eos_token_id=0, **OPUS_SIZE)
    torch.manual_seed(seed)
    transformers.MarianMTModel(config).save_pretrained(folder, safe_serialization=True)
    return folder


def _ours(model, batches: list[list[list[int]]], beam: int, length: int) -> list[list[int]]:
    """The workbench's search over every batch (workbench ids) -> each output in Marian ids."""
    # lazy: this module is imported by `bench` without torch's search until it runs
    from core.infer.beam import beam_search
    from core.infer.greedy import greedy  # lazy, as above
    from core.infer.translate import pad_batch  # lazy, as above

    opts = dict(max_len_abs=length, max_len_ratio=1e9, min_len=length)
    outputs = []
    for sents in batches:
        src, lens = pad_batch(sents, torch.device("cpu"))
        hyps = (greedy(model, src, lens, **opts) if beam == 1 else
                [h[0] for h in beam_search(model, src, lens, beam=beam, **opts)])
        outputs += [[int(model.tgt_ids[t]) for t in h.tokens] for h in hyps]
    return outputs


def _generate(hf, batches: list[Any], beam: int, length: int) -> list[list[int]]:
    """transformers' generate over every batch ((input_ids, attention_mask) of Marian
    ids) -> each output without the decoder start and `</s>`."""
    config = hf.config
    outputs = []
    with torch.no_grad():
        for ids, mask in batches:
            beam_opts = dict(length_penalty=0.0, early_stopping=False) if beam > 1 else {}
            out = hf.generate(input_ids=ids, attention_mask=mask, num_beams=beam,
                              do_sample=False, min_new_tokens=length, max_new_tokens=length + 1,
                              forced_eos_token_id=config.eos_token_id,
                              bad_words_ids=[[config.pad_token_id]], **beam_opts)
            outputs += [row[1:length + 1] for row in out.tolist()]
    return outputs


def _hf_batches(batches: list[list[list[int]]], marian_ids: list[int], pad: int) -> list[Any]:
    """Workbench-id batches -> (input_ids, attention_mask) of Marian ids, padded right."""
    out = []
    for sents in batches:
        width = max(len(s) for s in sents)
        ids = torch.full((len(sents), width), pad, dtype=torch.long)
        for r, s in enumerate(sents):
            ids[r, :len(s)] = torch.tensor([marian_ids[i] for i in s])
        out.append((ids, (ids != pad).long()))
    return out


def _timed(fn) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def run_marian_bench(sentences: int, length: int, beams: list[int], batch_size: int,
                     threads: int, data_dir: str | None, split: str = "default",
                     vocab_size: int = OPUS_VOCAB, rounds: int = 3,
                     out: TextIO | None = None) -> list[dict]:
    """Time the imported OPUS-size model on the workbench's search and on generate, each
    beam size in `rounds` alternating rounds after a warm-up batch; print a table and
    return one row per beam size. `out`: where the table goes (default: stdout)."""
    # lazy: sentencepiece and transformers (the marian extra) load only when the bench runs
    import transformers

    out = out or sys.stdout
    transformers.utils.logging.disable_progress_bar()  # saving and reading the model
    # lazy: the import service pulls in the workspace and torch; only when timed
    from core.services.marian_import import read_marian

    if min(beams + [length, sentences, batch_size, rounds]) < 1 or vocab_size < 16:
        raise ConfigError("--beam, --length, --sentences, --batch and --rounds must be >= 1, "
                          "--marian-vocab >= 16")
    torch.set_num_threads(threads)
    src_tok, _ = load_bench_pairs(data_dir, split)
    lines = [" ".join(s) for s in src_tok]
    if len(lines) < sentences:
        raise ConfigError(f"the bench split has {len(lines)} sentences, fewer than {sentences}")
    with tempfile.TemporaryDirectory(prefix="nmtwb-marian-") as tmp:
        folder = opus_folder(Path(tmp) / "opus-mt-es-en", lines[:20000], vocab_size)
        ours = read_marian(folder, "bench-marian")
        theirs = transformers.MarianMTModel.from_pretrained(folder, local_files_only=True).eval()
    model, vocab = ours.model, ours.src_vocab
    ids = [vocab.encode(vocab.tokenize(line)) for line in lines[:sentences]]
    batches = [ids[i:i + batch_size] for i in range(0, len(ids), batch_size)]
    hf_batches = _hf_batches(batches, vocab.marian_ids, model.pad_id)
    params = sum(p.numel() for p in theirs.parameters())
    print(f"# bench translate --marian: {machine_line('cpu', threads)}", file=out)
    print(f"# a random-weight Marian model of OPUS-MT size imported as by `runs import`: "
          f"{OPUS_SIZE['encoder_layers']} + {OPUS_SIZE['decoder_layers']} layers, d_model "
          f"{OPUS_SIZE['d_model']}, {OPUS_SIZE['decoder_attention_heads']} heads, ffn "
          f"{OPUS_SIZE['decoder_ffn_dim']}, vocabulary {vocab_size:,}, {params / 1e6:.1f}M "
          f"parameters; generate with attention {theirs.config._attn_implementation!r}",
          file=out)
    print(f"# {len(ids)} sentences of split {split} (mean {sum(map(len, ids)) / len(ids):.1f} "
          f"source pieces), output fixed at {length} pieces + </s>, batches of {batch_size}, "
          f"{rounds} alternating rounds; load average before {_load()}", file=out)
    print(HEADER, file=out, flush=True)
    rows = [_bench_beam(model, theirs, batches, hf_batches, beam, length, rounds, out)
            for beam in beams]
    print(f"# load average after {_load()}", file=out)
    return rows


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _bench_beam(model, theirs, batches, hf_batches, beam: int, length: int, rounds: int,
                out: TextIO) -> dict:
    """One beam size: a warm-up batch each, then `rounds` rounds, alternating which side
    goes first; prints and returns the row."""
    n = sum(len(b) for b in batches)
    _ours(model, batches[:1], beam, length)
    _generate(theirs, hf_batches[:1], beam, length)
    seconds = {"ours": 0.0, "generate": 0.0}
    for r in range(rounds):
        order = ("ours", "generate") if r % 2 == 0 else ("generate", "ours")
        for side in order:
            elapsed, result = (_timed(lambda: _ours(model, batches, beam, length)) if side == "ours"
                               else _timed(lambda: _generate(theirs, hf_batches, beam, length)))
            seconds[side] += elapsed
            if side == "ours":
                mine = result
            else:
                gen = result
    same = sum(a == b for a, b in zip(mine, gen, strict=True))
    row = {"beam": beam, "batch": len(batches[0]), "sentences": n, "length": length,
           "rounds": rounds, "ours_sent_per_s": n * rounds / seconds["ours"],
           "generate_sent_per_s": n * rounds / seconds["generate"], "same_output": same}
    row["ratio"] = row["ours_sent_per_s"] / row["generate_sent_per_s"]
    search = "greedy" if beam == 1 else f"beam {beam}"
    print(f"{search:>8} {row['batch']:>6} {row['ours_sent_per_s']:>12.2f} "
          f"{row['generate_sent_per_s']:>16.2f} {row['ratio']:>14.2f} {f'{same}/{n}':>12}",
          file=out, flush=True)
    return row
