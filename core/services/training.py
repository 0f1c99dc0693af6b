"""A training run inside a workspace: the job the CLI and the GUI start.

    run_id = create_run(ws, corpus_ref, config)          # a 'queued' row + folder
    result = train_run(ws, run_id, ctx, resume=False)    # the job itself

train_run loads the corpus, makes (or reuses) the corpus's stored split, prepares ids
and vocabularies (reloaded from the run folder on resume, so ids never shift; a
two-stage stage-2 run copies its stage-1 run's, train.init_from), writes
every event to the store (curves survive restarts) and keeps the run's status true:
running -> finished | cancelled | failed (with the reason; any exception that escapes
training marks the run failed) | interrupted (KeyboardInterrupt; or, found by
`Workspace.open`, a 'running' run whose process died without holding its lock any more).
One process trains a run at a time: it holds the run's lock (core.runlock).
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

from core.config import RunConfig
from core.data.batching import BatchPlan
from core.data.dataset import PreparedData, decode_ids, prepare_dataset
from core.errors import ConfigError, StoreError, TrainingError, WorkbenchError
from core.evaluate.baseline import stored_or_aligned_links
from core.families import families_with, family_traits
from core.infer.greedy import greedy
from core.infer.translate import sentences_per_batch
from core.jobs import JobCancelled, JobContext, JobEvent
from core.models.alignment_head import freeze_all_but_head, load_base
from core.models.two_stage import freeze_for_stage2, load_stage1
from core.runlock import RunLock
from core.services.attention_links import attention_guide_links, guide_run_names
from core.services.corpora import DEFAULT_RATIOS, ensure_split, load_split_corpora  # noqa: F401 (re-exported)
from core.services.language_pairs import check_base_pair, check_guide_runs
from core.train import artifacts, guidance
from core.train.checkpoint import LAST
from core.train.device import check_threads, describe_device, pick_device
from core.train.footprint import check_fits
from core.train.loop import TrainData, TrainResult, train_model
from core.workspace.paths import BUNDLED_MARK
from core.workspace.store import Workspace

MIN_DEV_PAIRS = 1  # a dev set without a pair gives perplexity exp(0) = 1.00: meaningless
MIN_PAIRS = 10  # fewer cannot give a dev pair in an 80/10/10 split


def create_run(ws: Workspace, corpus_ref: int | str, config: RunConfig, name: str | None = None) -> int:
    """A 'queued' run, once everything that can be checked without training is right:
    every config field (RunConfig.validate), the device and its CPU threads, the memory
    training takes (core.train.footprint, against what the device has available), and a
    corpus whose split has training and dev pairs. A refused run leaves no row holding its name."""
    config.validate()
    if not family_traits(config.model.family).trainable:
        raise ConfigError(f"model.family {config.model.family!r} is an imported family: its "
                          "runs come from `runs import`, not from training; choose one of "
                          + ", ".join(families_with(trainable=True)))
    check_init_from(ws, config)
    device = pick_device(config.train.device)  # 'cuda' without a GPU: refused here, not mid-run
    check_threads(config.train.threads)
    # a model that cannot fit is refused before the run exists (vocabularies at their
    # caps): the arithmetic estimate of core.train.footprint, microseconds for any size
    check_fits(config, config.data.src_vocab_size, config.data.tgt_vocab_size, device)
    corpus = ws.get_corpus(corpus_ref)
    if config.train.stage == 2:  # its base run's vocabularies are reused
        check_base_pair(ws, _stage1_run(ws, config), corpus,
                        f"train.init_from (--init-from) = {config.train.init_from!r}: run",
                        "a stage-2 run keeps its base run's vocabularies; start from a run "
                        f"that translates {corpus.src_lang}->{corpus.tgt_lang}, or train on a "
                        "corpus of the base run's pair")
    if config.train.guide_runs and config.train.guided_alignment > 0:
        check_guide_runs(ws, config.train.guide_runs, guide_run_names(config.train.guide_runs),
                         corpus)
    # cheap enough for the GUI thread: the stored split's sizes, or the pair count
    sizes = ws.split_sizes(corpus.id)
    if sizes is not None:
        check_split_sizes(corpus.name, {k: [0] * n for k, n in sizes.items()},
                          lambda: ws.load_split(corpus.id).ratios)
    elif corpus.n_pairs < MIN_PAIRS:
        raise TrainingError(
            f"corpus {corpus.name!r} is too small to train on: {corpus.n_pairs} pairs, and "
            f"an 80/10/10 split needs at least {MIN_PAIRS} for one dev pair; import a larger "
            "corpus (hundreds of pairs at least)")
    return ws.create_run(name or config.name, config.to_dict(), corpus.id)


def check_init_from(ws: Workspace, config: RunConfig) -> None:
    """train.init_from (`train --init-from RUN`) starts stage 2 of two-stage training, or an
    alignment head, from a trained run: ConfigError when that run is unknown or of the
    wrong kind, or when train.stage is not 2 (the setting would be ignored)."""
    if config.train.stage == 2:
        _stage1_run(ws, config)
    elif config.train.init_from:
        raise ConfigError(
            f"train.init_from (--init-from) = {config.train.init_from!r} has an effect only "
            f"with train.stage = 2, and train.stage is {config.train.stage} here: it starts "
            "stage 2 of two-stage training from a sentence-level 'transformer' run (e.g. "
            "--preset context-ts-cpu or context-tgt-ts-cpu --init-from RUN); leave "
            "--init-from out otherwise")


def check_split_sizes(corpus_name: str, assignment: dict[str, list[int]],
                      ratios: Callable[[], Sequence[float]] | None = None) -> None:
    """TrainingError unless the split has training pairs and a usable dev set.
    `ratios` gives the stored split's (train, dev, test) ratios, read only on failure: a
    split the user made without a training or dev share is to be made again, not a
    corpus to be enlarged."""
    n_train, n_dev = len(assignment.get("train", [])), len(assignment.get("dev", []))
    total = sum(len(v) for v in assignment.values())
    if n_train > 0 and n_dev >= MIN_DEV_PAIRS:
        return
    shares = list(ratios()) if ratios is not None else list(DEFAULT_RATIOS)
    shown = ",".join(f"{r:g}" for r in shares)
    if shares[0] <= 0 or shares[1] <= 0:
        raise TrainingError(
            f"corpus {corpus_name!r} has no {'training' if shares[0] <= 0 else 'dev'} pairs: "
            f"its split (ratios {shown}) gives {n_train} training and {n_dev} dev pairs of "
            f"{total}; split it again with a training and a dev share, e.g. `corpus split "
            f"{corpus_name} --ratios 0.8,0.1,0.1` (if runs use the corpus, import it again "
            "under a new name and split that)")
    raise TrainingError(
        f"corpus {corpus_name!r} is too small to train on: its {total} pairs split into "
        f"{n_train} training and {n_dev} dev pairs (ratios {shown}, whole documents per "
        f"set); training needs at least 1 training and {MIN_DEV_PAIRS} dev pair, so import "
        "a larger corpus (hundreds of pairs at least)")


def greedy_bleu_fn(prepared: PreparedData, sample: int):
    """Greedy-decode the first `sample` dev sentences and score them with sacrebleu."""
    import sacrebleu  # lazy: a top-level import would load sacrebleu

    n = min(sample, len(prepared.dev))
    if n == 0:
        return None
    src = prepared.dev.src_ids[:n]
    refs = [prepared.dev.pair(i).tgt for i in range(n)]
    ctx_ids = prepared.dev.ctx_ids[:n] if prepared.dev.ctx_ids is not None else None

    def score(model, device) -> float:
        plan = BatchPlan(src, [[0]] * n, batch_size=sentences_per_batch(1), shuffle=False,
                         ctx_ids=ctx_ids)
        hyps: dict[int, str] = {}
        model.eval()
        for indices in plan.epoch(0):
            b = plan.collate(indices).to(device)
            extra = {"ctx": b.ctx, "ctx_lens": b.ctx_lens} if b.ctx is not None else {}
            for i, h in zip(indices, greedy(model, b.src, b.src_lens, **extra), strict=True):
                hyps[i] = decode_ids(h.tokens, prepared.tgt_pre, prepared.tgt_vocab)
        # already-tokenised corpora are scored as tokenised BLEU (no second tokenisation)
        tokenize = "none" if getattr(prepared.tgt_pre, "pretokenized", False) else "13a"
        return sacrebleu.corpus_bleu([hyps[i] for i in range(n)], [refs], tokenize=tokenize).score

    return score


def _prepare(ws: Workspace, run_id: int, config: RunConfig, resume: bool, ctx: JobContext):
    info = ws.get_run(run_id)
    if info.corpus_id is None:
        raise ConfigError(f"run {info.name!r} has no corpus; create it with a corpus")
    corpus, parts = load_split_corpora(ws, info.corpus_id, config.train.seed)
    check_split_sizes(corpus.name, {k: list(range(len(v))) for k, v in parts.items()},
                      lambda: ws.load_split(info.corpus_id).ratios)
    run_dir = ws.run_dir(run_id)
    reuse = artifacts.load_text_side(run_dir) if resume else None
    fresh = reuse is None
    if reuse is None and config.train.stage == 2:
        # Stage 2 continues the stage-1 model: its ids must mean the same words, so the
        # stage-1 run's vocabularies and preprocessing are reused, never rebuilt.
        base = _stage1_run(ws, config)
        reuse = artifacts.load_text_side(ws.run_dir(base.id))
        if reuse is None:
            raise ConfigError(
                f"the run {base.name!r} that train.init_from names has no vocabularies yet; "
                "train it first")
        ctx.emit("log", message=f"stage 2: reusing the vocabularies and preprocessing of "
                 f"run {base.name!r}")
    context = family_traits(config.model.family).context
    k = config.model.ctx_sentences if context else 0
    f = config.model.ctx_following if context else 0
    prepared = prepare_dataset(
        parts["train"], parts["dev"], config.data, corpus.src_lang, corpus.tgt_lang,
        vocabs=reuse[:2] if reuse else None, preprocessors=reuse[2:] if reuse else None,
        context_k=k, job=ctx, context_following=f, context_side=config.model.ctx_side)
    if len(prepared.train) == 0:
        raise TrainingError(
            f"no usable training pairs: {prepared.train_report.summary()}; raise "
            f"data.max_len (now {config.data.max_len}) or import a corpus whose pairs have "
            "text on both sides")
    if len(prepared.dev) < MIN_DEV_PAIRS:
        raise TrainingError(
            f"no usable dev pairs: {prepared.dev_report.summary()}; the dev perplexity would "
            "mean nothing, so import a larger corpus")
    if fresh:
        artifacts.save_artifacts(run_dir, prepared.src_vocab, prepared.tgt_vocab,
                                 prepared.src_pre, prepared.tgt_pre)
    notes = [*prepared.notes, "train: " + prepared.train_report.summary()]
    if config.model.ctx_side == "target" and config.data.dev_sample:
        notes.append("dev BLEU during training gives the model the previous reference as "
                     "context; translating, it reads its own translations, so `evaluate` "
                     "gives the BLEU a user gets")
    for line in notes:
        ctx.emit("log", message=line)
    return prepared, run_dir


def make_train_data(prepared: PreparedData, config: RunConfig,
                    train_links: list | None = None) -> TrainData:
    """The TrainData of prepared splits: token ids, vocabulary sizes, a BatchPlan factory
    with the config's batching, dev greedy BLEU and the guided-alignment links."""
    dc = config.data

    def make_plan(src, tgt, ctx_ids, shuffle, links=None):
        return BatchPlan(src, tgt, batch_size=dc.batch_size, batch_tokens=dc.batch_tokens,
                         seed=config.train.seed, shuffle=shuffle, ctx_ids=ctx_ids, links=links)

    return TrainData(
        prepared.train.src_ids, prepared.train.tgt_ids, prepared.dev.src_ids, prepared.dev.tgt_ids,
        len(prepared.src_vocab), len(prepared.tgt_vocab), make_plan,
        prepared.train.ctx_ids, prepared.dev.ctx_ids, greedy_bleu_fn(prepared, dc.dev_sample),
        train_links)


def guided_links(ws: Workspace, corpus_id: int, prepared: PreparedData, ctx: JobContext,
                 guide_runs: str = "", device="cpu"):
    """The guide's links of the training pairs on the model's own tokens: eflomal's
    grow-diag-final-and links, or with `guide_runs` (train.guide_runs) those runs' own
    attention (core/services/attention_links.py); read from the corpus's folder, or
    computed once and stored there (core/train/guidance.py)."""
    src = guidance.token_lines(prepared.train.src_ids, prepared.src_vocab)
    tgt = guidance.token_lines(prepared.train.tgt_ids, prepared.tgt_vocab)
    folder = ws.corpus_dir(corpus_id)

    def log(message: str) -> None:
        ctx.emit("log", message=f"guided alignment: {message}")

    if guide_runs:
        return attention_guide_links(ws, folder, src, tgt, guide_run_names(guide_runs), device,
                                     ctx, log)
    return stored_or_aligned_links(folder, src, tgt, log)


def alignment_head_config(ws: Workspace, run_ref: int | str, name: str = "",
                          steps: int = 3000, weight: float = 1.0,
                          corpus: int | str | None = None) -> tuple[int, RunConfig]:
    """(corpus id, config) of a run that trains an alignment head over trained run
    `run_ref` (train.stage = 2, core/models/alignment_head.py): the run's own model, data
    and optimiser settings, model.alignment_head on, the guide at `weight`, `steps`
    updates validated every steps / 6, no dev BLEU (the translation stays the run's).
    Named `name`, else '<run>-head'. On the run's corpus; an imported run, which has
    none, on `corpus` (read with the run's own vocabularies and preprocessing)."""
    base = ws.get_run(run_ref)
    if not family_traits(base.family).alignment_head:
        raise ConfigError(f"run {base.name!r} is a {base.family!r} run; an alignment head is "
                          f"trained over a {' or '.join(families_with(alignment_head=True))} run")
    if (ws.run_dir(base.id) / BUNDLED_MARK).exists():
        raise ConfigError(f"run {base.name!r} was installed from a bundle and trained on a "
                          "corpus that is not in this workspace: its head would learn another "
                          "corpus's links; train a head over a run trained here")
    corpus_id = base.corpus_id
    if corpus is not None:
        if corpus_id is not None and ws.corpus_id(corpus) != corpus_id:
            raise ConfigError(f"run {base.name!r} was trained on a corpus of this workspace: its "
                              "head trains on that corpus; leave out --corpus")
        corpus_id = ws.corpus_id(corpus)
        check_base_pair(ws, base, ws.get_corpus(corpus_id), "run",
                        "its head learns the links of the pair it translates; name a corpus of "
                        "that pair with --corpus")
    if corpus_id is None:
        raise ConfigError(f"run {base.name!r} has no corpus to train the head on (an imported "
                          "run): name one with --corpus NAME")
    if base.config["model"].get("alignment_head"):
        raise ConfigError(f"run {base.name!r} has an alignment head already")
    raw = RunConfig.from_dict(base.config, source=f"run {base.name}").to_dict()
    raw["name"] = name or f"{base.name}-head"
    raw["description"] = f"alignment head (guided alignment, weight {weight}) over run {base.name}"
    raw["alignment_reading"] = ""
    raw["model"]["alignment_head"] = True
    raw["data"]["dev_sample"] = 0
    raw["train"].update(stage=2, init_from=base.name, guided_alignment=weight, max_steps=steps,
                        max_minutes=0.0, valid_every=max(1, steps // 6), early_stop_patience=0,
                        epochs=max(1, raw["train"]["epochs"]))
    return corpus_id, RunConfig.from_dict(raw, source=f"alignment head over {base.name}")


def _stage1_run(ws: Workspace, config: RunConfig):
    """The run that train.init_from names (train.stage = 2): a sentence-level
    'transformer' for a two-stage context model, a run of the same family and model
    sizes for an alignment head."""
    if not config.train.init_from:
        raise ConfigError("train.stage = 2 needs train.init_from = the trained run to start from")
    try:
        base = ws.get_run(config.train.init_from)
    except StoreError as exc:
        raise ConfigError(f"train.init_from (--init-from) = {config.train.init_from!r}: {exc} "
                          "Name a trained run of this workspace.") from None
    if config.model.alignment_head:
        # both normalised by RunConfig (an older run's config lacks newer keys)
        ours = dataclasses.asdict(config.model)
        theirs = dataclasses.asdict(RunConfig.from_dict(base.config, source=base.name).model)
        differ = sorted(k for k in ours if k != "alignment_head" and ours[k] != theirs[k])
        if differ:
            raise ConfigError(
                f"train.init_from = {config.train.init_from!r}: an alignment head is trained on "
                f"a run with the same model settings, but model.{differ[0]} is "
                f"{ours[differ[0]]!r} here and {theirs.get(differ[0])!r} there; copy the "
                "trained run's model section and set model.alignment_head = true")
        return base
    if base.family != "transformer":
        raise ConfigError(
            f"train.init_from = {config.train.init_from!r} is a {base.family!r} run; stage 2 "
            "starts from a sentence-level 'transformer' run of the same size (stage 1)")
    return base


def _initial_model(ws: Workspace, config: RunConfig, prepared: PreparedData):
    """train.stage = 2: the model starts from a trained run and trains only what that
    run lacks: a two-stage context model its context parts, a recurrent model its
    alignment head (the translation weights stay as trained)."""
    if config.train.stage != 2:
        return None
    # imported when called: tests patch the name where it is defined
    from core.models.registry import build_model

    base = _stage1_run(ws, config)
    stage1 = artifacts.load_model(ws.run_dir(base.id), "best", run_config=base.config)
    model = build_model(config.model, len(prepared.src_vocab), len(prepared.tgt_vocab))
    if config.model.alignment_head:
        try:
            load_base(model, stage1.model.state_dict())
        except ValueError as exc:
            raise ConfigError(f"train.init_from = {config.train.init_from!r}: {exc}") from None
        freeze_all_but_head(model)
        return model

    load_stage1(model, stage1.model.state_dict())
    freeze_for_stage2(model)
    return model


class StoreRecorder:
    """Writes a run's job events to the workspace store (batched for steps)."""

    def __init__(self, ws: Workspace, run_id: int, every: int = 10):
        self.ws, self.run_id, self.every = ws, run_id, every
        self.pending: list[tuple[int, dict[str, float]]] = []

    def __call__(self, event: JobEvent) -> None:
        d = event.data
        if event.kind == "step":
            self.pending.append((d["step"], {k: float(d[k]) for k in
                                             ("loss", "ppl", "lr", "tok_per_s", "align_loss") if k in d}))
            if len(self.pending) >= self.every:
                self.flush()
        elif event.kind == "validation":
            self.flush()
            values = {k: float(d[k]) for k in ("dev_ppl", "dev_loss", "dev_bleu") if d.get(k) is not None}
            self.ws.log_metrics(self.run_id, d["step"], "valid", values)
            self.ws.update_run(self.run_id, steps=d["step"])
        elif event.kind == "checkpoint":
            self.ws.add_checkpoint(self.run_id, d["step"], d["path"], d["which"], d.get("dev_ppl"))
            for path in d.get("dropped") or ():
                self.ws.remove_checkpoint(self.run_id, path)

    def flush(self) -> None:
        """Write the buffered training-step metrics to the store."""
        for step, values in self.pending:
            self.ws.log_metrics(self.run_id, step, "train", values)
        self.pending.clear()


def check_resumable(ws: Workspace, run_ref: int | str) -> None:
    """TrainingError when run `run_ref` cannot be resumed because its files are gone: its
    folder is missing (deleted or moved), or it trained (steps recorded) and its last
    checkpoint is missing. Resuming it would start again from step 0 with new
    vocabularies, silently; called before anything makes the folder again."""
    info = ws.get_run(run_ref)
    folder = info.path  # not ws.run_dir, which would make it again
    how = (f"put the folder back to resume the run, or train a new one (`train --corpus "
           f"...`; the run {info.name!r} can be deleted with `runs delete`)")
    if not folder.is_dir():
        raise TrainingError(f"{folder}: the folder of run {info.name!r} is missing (deleted "
                            f"or moved?), and its checkpoints and vocabularies with it; {how}")
    if info.steps > 0 and not (folder / LAST).exists():
        raise TrainingError(f"{folder / LAST}: run {info.name!r} trained {info.steps} "
                            f"steps but its last checkpoint is missing (deleted or moved?); "
                            f"{how.replace('the folder', 'the checkpoint')}")


def train_run(ws: Workspace, run_ref: int | str, ctx: JobContext, resume: bool = False,
              distributed=None, config_override: RunConfig | None = None,
              lock: RunLock | None = None) -> TrainResult:
    """Train (or resume) a run of the workspace; see the module doc.

    The training process holds the run's lock (core.runlock) throughout: a second
    trainer of the same run is refused with TrainingError. Pass `lock` when the caller
    took it already (the CLI does, before it saves a resume's new budget)."""
    run_id = ws.run_id(run_ref)
    if resume:
        check_resumable(ws, run_id)
    info = ws.get_run(run_id)
    is_main = distributed is None or distributed.rank == 0
    own_lock = RunLock.acquire(ws.run_dir(run_id), info.name) if is_main and lock is None else None
    try:
        return _train_locked(ws, run_id, info, ctx, resume, distributed, config_override, is_main)
    finally:
        if own_lock is not None:
            own_lock.release()


def _train_locked(ws: Workspace, run_id: int, info, ctx: JobContext, resume: bool,
                  distributed, config_override: RunConfig | None, is_main: bool) -> TrainResult:
    recorder = StoreRecorder(ws, run_id)
    if is_main:
        ctx.add_listener(recorder)
    started = time.perf_counter()
    try:
        config = config_override or RunConfig.from_dict(info.config, source=f"run {info.name}")
        prepared, run_dir = _prepare(ws, run_id, config, resume, ctx)
        device = pick_device(distributed.device if distributed else config.train.device,
                             config.train.threads)
        if is_main:
            ws.update_run(run_id, status="running", device=describe_device(device), error="")
        # again with the real vocabularies and this session's device (a resume may move)
        check_fits(config, len(prepared.src_vocab), len(prepared.tgt_vocab), device)
        model = _initial_model(ws, config, prepared)
        config.train.device = str(device)
        links = None
        if config.train.guided_alignment > 0:
            # rank 0 aligns (eflomal samples at random) and stores; the others read its file
            guide = dict(guide_runs=config.train.guide_runs, device=device)
            if is_main:
                links = guided_links(ws, info.corpus_id, prepared, ctx, **guide)
            if distributed is not None:
                distributed.barrier()
                if not is_main:
                    links = guided_links(ws, info.corpus_id, prepared, ctx, **guide)
        result = train_model(config, make_train_data(prepared, config, links), run_dir, ctx,
                             model=model, resume=resume, distributed=distributed)
    except JobCancelled:
        if is_main:
            recorder.flush()
            ws.sync_checkpoints(run_id)
            ws.update_run(run_id, status="cancelled")
        raise
    except Exception as exc:  # any escape marks the run failed, never left 'running'
        message = str(exc) if isinstance(exc, WorkbenchError | RuntimeError) \
            else f"{type(exc).__name__}: {exc}"
        if is_main:
            recorder.flush()
            ws.sync_checkpoints(run_id)
            ws.update_run(run_id, status="failed", error=message)
        ctx.emit("failed", message=message)
        raise
    except BaseException as exc:  # KeyboardInterrupt (a second Ctrl-C), SystemExit
        if is_main:
            recorder.flush()
            ws.sync_checkpoints(run_id)
            ws.update_run(run_id, status="interrupted", error=(
                f"stopped by {type(exc).__name__} before it could save a checkpoint; resume "
                f"it from its last one with `train --resume {info.name}`"))
        raise
    if is_main:
        recorder.flush()
        ws.sync_checkpoints(run_id)
        # a resumed run's wall time adds to what its earlier sessions took
        before = float(info.elapsed_s or 0.0) if resume else 0.0
        ws.update_run(run_id, status=result.status, steps=result.step,
                      elapsed_s=before + time.perf_counter() - started)
        ctx.emit("finished", status=result.status, step=result.step,
                 best_dev_ppl=result.best_dev_ppl)
    return result


def cancel_queued(ws: Workspace, run_ref: int | str) -> bool:
    """A run cancelled before any trainer took it: 'queued' -> 'cancelled' (else it
    would stay listed as queued with nothing left to start it). A run a trainer took
    meanwhile keeps the status that trainer gave it. True if the status changed."""
    run_id = ws.run_id(run_ref)
    if ws.get_run(run_id).status != "queued":
        return False
    ws.update_run(run_id, status="cancelled")
    return True


def create_run_job(ws: Workspace, corpus_id: int, config: RunConfig, ctx: JobContext) -> int:
    """create_run in a job (the Training screen's Start: its checks read the split)."""
    return create_run(ws, corpus_id, config)


def alignment_head_run_job(ws: Workspace, run_id: int, ctx: JobContext) -> int:
    """A queued run training an alignment head over finished run `run_id`
    (alignment_head_config, its defaults), created in a job; -> its id."""
    corpus_id, config = alignment_head_config(ws, run_id)
    return create_run(ws, corpus_id, config, config.name)
