"""`runs import` of a Marian / OPUS-MT folder (core.services.model_import): the run it
makes translates, scores and attends exactly as transformers' MarianMTModel does on the
same model and sentences, and a crafted or incomplete folder leaves the workspace as it
was. The model is a small random one made here (tests/core/marian_folder.py)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from core.errors import CheckpointError, ConfigError
from core.infer.session import TranslationSession
from core.services.model_import import PROVENANCE, file_record, import_model, provenance
from core.workspace.store import Workspace
from tests.core.marian_folder import DEMO, make_marian_folder

transformers = pytest.importorskip("transformers")  # the `dev` extra installs it

ROOT = Path(__file__).resolve().parents[2]
SENTENCES = (DEMO / "demo.es").read_text(encoding="utf-8").splitlines()[:24]
LIMIT = 30  # output tokens before EOS is forced (workbench) / the search stops (HF)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return make_marian_folder(tmp_path_factory.mktemp("m") / "opus-mt-es-en")


@pytest.fixture(scope="module")
def hf(folder):
    tok = transformers.MarianTokenizer.from_pretrained(folder)
    model = transformers.MarianMTModel.from_pretrained(folder, attn_implementation="eager")
    return tok, model.eval()


@pytest.fixture(scope="module")
def session(folder, tmp_path_factory):
    ws = Workspace.open(tmp_path_factory.mktemp("ws"))
    run_id = import_model(ws, folder, name="opus-es-en")
    yield ws, run_id, TranslationSession.open(ws, [run_id])
    ws.close()


def _hf_generate(hf, sentence: str, beam: int) -> tuple[list[int], bool]:
    """HF's output ids (no decoder start, no EOS) and whether it ended with EOS."""
    tok, model = hf
    enc = tok([sentence], return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**enc, num_beams=beam, do_sample=False, max_new_tokens=LIMIT + 1,
                             length_penalty=0.0, early_stopping=False,
                             bad_words_ids=[[model.config.pad_token_id]])[0].tolist()
    ids = out[1:]
    eos = model.config.eos_token_id
    ended = eos in ids[:LIMIT]  # an EOS after LIMIT words is one the workbench forces
    return ids[: ids.index(eos)] if eos in ids else ids, ended


def _marian_ids(tr, vocab) -> list[int]:
    return [vocab.marian_ids[i] for i in tr.target_ids]


def test_the_run_is_listed_with_its_vocabularies_and_provenance(session, folder):
    ws, run_id, _ = session
    run = ws.get_run(run_id)
    assert (run.name, run.family, run.status) == ("opus-es-en", "marian", "finished")
    record = provenance(ws, run_id)
    assert record["kind"] == "marian" and record["source"] == str(folder)
    by_name = {f["file"]: f for f in record["files"]}
    assert by_name["model.safetensors"] == file_record(folder / "model.safetensors")
    assert set(by_name) >= {"config.json", "vocab.json", "source.spm", "target.spm"}
    assert (ws.run_dir(run_id) / "src.vocab").is_file()
    assert (ws.run_dir(run_id) / PROVENANCE).is_file()


def test_source_ids_are_the_tokenizers(session, hf):
    _, _, sess = session
    tok, _ = hf
    vocab = sess.first.src_vocab
    for sentence in SENTENCES:
        ours = [vocab.marian_ids[i] for i in vocab.encode(vocab.tokenize(sentence))]
        assert ours == tok(sentence)["input_ids"]


@pytest.mark.parametrize("beam", [1, 4])
def test_translations_equal_transformers_generate(session, hf, beam):
    _, _, sess = session
    tok, _ = hf
    ours = sess.translate(SENTENCES, beam=beam, max_len_abs=LIMIT, max_len_ratio=100.0)
    ended = 0
    for sentence, tr in zip(SENTENCES, ours, strict=True):
        theirs, natural = _hf_generate(hf, sentence, beam)
        if natural:  # HF's search ended on its own: the whole output must agree
            ended += 1
            assert _marian_ids(tr, sess.first.tgt_vocab) == theirs, sentence
            assert tr.text == tok.decode(theirs, skip_special_tokens=True)
        elif beam == 1:  # HF stops at the limit; the workbench forces EOS there
            assert _marian_ids(tr, sess.first.tgt_vocab) == theirs[:LIMIT], sentence
    assert ended >= 5  # the comparison covers whole translations, not only cut ones


def test_forced_scores_and_attention_equal_the_models_forward(session, hf):
    _, _, sess = session
    tok, model = hf
    checked = 0
    for sentence in SENTENCES[:8]:
        target = sess.translate([sentence], beam=1, max_len_abs=12)[0].text or "hola"
        forced = sess.force(sentence, target)
        enc = tok([sentence], text_target=[target], return_tensors="pt")
        labels = enc.pop("labels")[0].tolist()  # target ids + EOS
        start = model.config.decoder_start_token_id
        with torch.no_grad():
            out = model(**enc, decoder_input_ids=torch.tensor([[start, *labels[:-1]]]),
                        output_attentions=True)
        logp = torch.log_softmax(out.logits[0].float(), dim=-1)
        expected = logp[torch.arange(len(labels)), torch.tensor(labels)]
        assert forced.log_prob == pytest.approx(float(expected.sum()), abs=1e-4)
        cross = torch.stack(out.cross_attentions)[:, 0].numpy()  # layers x heads x T x S
        assert forced.layer_attention.shape == cross.shape
        assert abs(forced.layer_attention - cross).max() < 1e-5
        assert abs(forced.attention - cross[-1].mean(axis=0)).max() < 1e-5
        assert forced.source_tokens[-1] == "</s>"
        checked += 1
    assert checked == 8


def test_search_scores_equal_forced_scores(session):
    _, _, sess = session
    for tr in sess.translate(SENTENCES[:6], beam=3, max_len_abs=LIMIT):
        forced = sess.force(tr.source, tr.text)
        if forced.target_ids == tr.target_ids:  # the text re-tokenises to the same pieces
            assert tr.log_prob == pytest.approx(forced.log_prob, abs=1e-4)


def test_a_pickle_that_runs_code_is_refused_and_nothing_is_left(folder, tmp_path):
    bad = tmp_path / "opus-mt-bad"
    shutil.copytree(folder, bad)
    (bad / "model.safetensors").unlink()
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (Path.touch, (marker,))

    torch.save({"model.shared.weight": Evil()}, bad / "pytorch_model.bin")
    with Workspace.open(tmp_path / "ws") as ws:
        with pytest.raises(CheckpointError, match="pytorch_model.bin: cannot be read"):
            import_model(ws, bad)
        assert ws.list_runs() == [] and not marker.exists()
        assert not any((tmp_path / "ws" / "runs").iterdir())


def test_a_config_beyond_the_limits_is_refused_before_building(folder, tmp_path):
    bad = tmp_path / "opus-mt-huge"
    shutil.copytree(folder, bad)
    config = json.loads((bad / "config.json").read_text())
    config["d_model"] = 10**9
    (bad / "config.json").write_text(json.dumps(config))
    with Workspace.open(tmp_path / "ws") as ws:
        with pytest.raises(ConfigError, match="d_model is 1000000000, not a whole number"):
            import_model(ws, bad)
        assert ws.list_runs() == []


def test_files_of_different_models_are_refused(folder, tmp_path):
    bad = tmp_path / "opus-mt-mixed"
    shutil.copytree(folder, bad)
    vocab = json.loads((bad / "vocab.json").read_text())
    vocab["extra-piece"] = len(vocab)
    (bad / "vocab.json").write_text(json.dumps(vocab))
    with Workspace.open(tmp_path / "ws") as ws:
        with pytest.raises(CheckpointError, match="the files come from different models"):
            import_model(ws, bad)
        assert ws.list_runs() == []


def test_cli_runs_import_names_both_kinds_and_imports(folder, tmp_path):
    help_text = subprocess.run([sys.executable, "main.py", "runs", "import", "--help"],
                               cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "Marian / OPUS-MT" in help_text and "OpenNMT-py 3.x checkpoints" in help_text
    ws = tmp_path / "ws"
    done = subprocess.run([sys.executable, "main.py", "--workspace", str(ws), "runs", "import",
                           str(folder), "--name", "es-en"], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert "as run 1 'es-en' (marian)" in done.stdout
    onmt = tmp_path / "model_step_100.pt"
    onmt.write_bytes(b"not read")
    refused = subprocess.run([sys.executable, "main.py", "--workspace", str(ws), "runs",
                              "import", str(onmt)], cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode == 2
    assert "model_step_100.pt: not a model the workbench can import; it reads Marian" \
        in refused.stderr
    with Workspace.open(ws) as opened:
        assert [r.name for r in opened.list_runs()] == ["es-en"]


# ------------------------------------------------------------------ the key/value cache


def _hf_generate_scored(hf, sentence: str, beam: int):
    """HF's output ids (no decoder start, no EOS), whether it ended with EOS, and the sum
    of its chosen words' log-probs under the model (log_softmax of generate's raw logits,
    row by row along the beam that made each word; the workbench scores the same way)."""
    tok, model = hf
    enc = tok([sentence], return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**enc, num_beams=beam, do_sample=False, max_new_tokens=LIMIT + 1,
                             length_penalty=0.0, early_stopping=False, output_logits=True,
                             return_dict_in_generate=True,
                             bad_words_ids=[[model.config.pad_token_id]])
    ids = out.sequences[0, 1:].tolist()
    eos = model.config.eos_token_id
    ended = eos in ids
    ids = ids[: ids.index(eos) + 1] if ended else ids
    rows = out.beam_indices[0].tolist() if beam > 1 else [0] * len(ids)
    score = sum(float(torch.log_softmax(step[row].double(), -1)[i])
                for step, row, i in zip(out.logits, rows, ids, strict=False))
    return ids[:-1] if ended else ids, ended, score


def _model(session):
    return session[2].first.model


@pytest.mark.parametrize("beam", [1, 4])
def test_cached_search_gives_the_uncached_translations_scores_and_attention(session, beam,
                                                                           monkeypatch):
    """The key/value cache (core.models.marian) changes no translation, score or
    attention row of the search: the same as the step that re-reads the whole prefix."""
    sess = session[2]
    model = _model(session)
    assert model.cached
    cached = sess.translate(SENTENCES, beam=beam, max_len_abs=LIMIT, max_len_ratio=100.0)
    monkeypatch.setattr(model, "cached", False)
    whole = sess.translate(SENTENCES, beam=beam, max_len_abs=LIMIT, max_len_ratio=100.0)
    for a, b in zip(cached, whole, strict=True):
        assert a.target_ids == b.target_ids, a.source
        assert a.log_prob == pytest.approx(b.log_prob, abs=1e-4)
        assert a.attention.shape == b.attention.shape
        assert abs(a.attention - b.attention).max() < 1e-5
        # the attention is a distribution over the source for every output token
        assert abs(a.attention.sum(axis=1) - 1).max() < 1e-5
    assert sum(len(t.target_ids) for t in cached) > 5 * len(SENTENCES)


@pytest.mark.parametrize("beam", [1, 4])
def test_cached_search_scores_equal_transformers_generate(session, hf, beam):
    """Translations that transformers' generate ends on its own have the workbench's
    score too: the sum of the model's log-probs of the words generate chose."""
    sess = session[2]
    ours = sess.translate(SENTENCES, beam=beam, max_len_abs=LIMIT, max_len_ratio=100.0)
    compared = 0
    for sentence, tr in zip(SENTENCES, ours, strict=True):
        theirs, ended, score = _hf_generate_scored(hf, sentence, beam)
        if ended:
            assert _marian_ids(tr, sess.first.tgt_vocab) == theirs, sentence
            assert tr.log_prob == pytest.approx(score, abs=1e-4), sentence
            compared += 1
    assert compared >= 5


def test_the_cache_is_reordered_with_the_beams(session):
    """A step's state holds transformers' cache, whose rows select_batch picks as it picks
    a tensor's: a step from reordered rows gives the reordered step, and the cache grows
    by one position a step."""
    from core.models.base import select_batch
    from core.models.marian import KVCache

    sess = session[2]
    model = _model(session)
    vocab = sess.first.src_vocab
    ids = [vocab.encode(vocab.tokenize(s)) for s in SENTENCES[:3]]
    width = max(map(len, ids))
    src = torch.tensor([s + [0] * (width - len(s)) for s in ids])
    lens = torch.tensor([len(s) for s in ids])
    y, order = torch.tensor([7, 9, 11]), torch.tensor([2, 0, 1])
    with torch.no_grad():
        enc = model.encode(src, lens)
        first = [model.step(torch.full((3,), 2), model.init_state(enc), enc)[2]
                 for _ in range(2)]  # two states: a step appends to its cache in place
        assert isinstance(first[0]["cache"], KVCache)
        cache = first[0]["cache"].cache
        heads = model.hf.config.decoder_attention_heads
        for keys, values, *_ in cache.self_attention_cache:
            assert keys.shape[:3] == values.shape[:3] == (3, heads, 1)
        for keys, _, *_ in cache.cross_attention_cache:
            assert keys.shape[:3] == (3, heads, width)
        logp, attn, after, _ = model.step(y, first[0], enc)
        picked = select_batch(first[1], order)
        logp_r, attn_r, after_r, _ = model.step(y[order], picked, select_batch(enc, order))
    assert torch.allclose(logp_r, logp[order], atol=1e-5)
    assert torch.allclose(attn_r, attn[order], atol=1e-6)
    assert after["cache"].cache.get_seq_length() == after_r["cache"].cache.get_seq_length() == 2
    for (k, v, *_), (k_r, v_r, *_) in zip(after["cache"].cache.self_attention_cache,
                                          after_r["cache"].cache.self_attention_cache,
                                          strict=True):
        assert torch.allclose(k_r, k[order], atol=1e-6)
        assert torch.allclose(v_r, v[order], atol=1e-6)
    with pytest.raises(ValueError, match="rows"):
        after["cache"].index_select(1, order)


def test_every_linear_layer_runs_on_onednn_with_the_same_parameters(session, folder):
    """The imported model's nn.Linear layers are core.models.matmul.Linear, holding the
    checkpoint's Parameters: the output layer stays tied to the embeddings and the
    state_dict keeps transformers' keys."""
    from core.models import matmul

    model = _model(session)
    linears = [m for m in model.hf.modules() if isinstance(m, torch.nn.Linear)]
    assert linears and all(type(m) is matmul.Linear for m in linears)
    assert model.hf.lm_head.weight is model.hf.model.shared.weight
    fresh = transformers.MarianMTModel.from_pretrained(folder)
    assert set(model.hf.state_dict()) == set(fresh.state_dict())
