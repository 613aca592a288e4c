"""What a pretraining run must share with the run it resumes, and when it is done.

`check_pretrain_settings` refuses a restart with other training flags (unless
--force-resume) and one whose data would differ (other data flags or input
text: the data of a run is made once, so even --force-resume is refused);
`mark_finished` and `finished_run` let a finished run started again do
nothing.
"""

from __future__ import annotations

import os

from albert_keras.atomic_files import read_json, write_json
from albert_keras.training.run_settings import (
    RUN_STATE,
    SETTINGS_FILE,
    check_run_settings,
    describe_change,
    file_fingerprint,
)


def check_pretrain_settings(args) -> dict:
    """The run's settings; refuses to resume a run started with other training
    or data flags, or on other input text (see `check_run_settings`;
    --force-resume goes on after other training flags)."""
    names = (
        "batch_size max_seq_length max_predictions_per_seq seed steps warmup_steps "
        "learning_rate weight_decay optimizer preset config input records vocab "
        "init_checkpoint vocab_size held_out_every eval_records eval_steps"
    ).split()
    settings = {name: getattr(args, name, None) for name in names}
    recorded = read_json(os.path.join(args.output_dir, SETTINGS_FILE))
    _check_same_accumulation(
        args.output_dir, recorded, args.gradient_accumulation_steps
    )
    if args.lr_schedule != "linear":  # runs before the flag: linear
        settings["lr_schedule"] = args.lr_schedule
    if args.gradient_accumulation_steps != 1:  # runs before the flag: none
        settings["gradient_accumulation_steps"] = args.gradient_accumulation_steps
    # The vocabulary by its bytes: the data's ids and the model's size.
    settings["vocab_sha256"] = file_fingerprint(args.vocab)
    if args.records is None:  # the run makes its data: from what, and how
        settings.update({name: getattr(args, name) for name in _DATA_FLAGS})
        settings["input_sha256"] = _input_fingerprint(args.input)
    _refuse_other_data(args.output_dir, recorded or {}, settings)
    check_run_settings(
        args.output_dir, settings, args.force_resume, start_over=None, record=False
    )
    return settings


def _refuse_other_data(folder, recorded, settings):
    """The data a run made stays its data: other text or data flags are
    refused even with --force-resume (the run would go on with its old data).
    `recorded`: the settings the folder's run recorded ({} for none)."""
    # The text by its bytes: the same files under another path may go on
    # (--input is then a training flag, --force-resume).
    keys = ("input_sha256", "vocab_sha256", "vocab_size", "held_out_every")
    keys += tuple(_DATA_FLAGS)
    changed = [
        describe_change(key, recorded[key], settings.get(key))
        for key in keys
        if key in recorded and recorded[key] != settings.get(key)
    ]
    if changed:
        raise ValueError(
            f"{folder} holds a run whose data was made from other text or flags "
            f"({'; '.join(changed)}); its data does not change on a restart, "
            "--force-resume included. Use another --output-dir (add "
            f"--init-checkpoint {os.path.join(folder, 'pretrainer.keras')} to go "
            "on from this run's model)."
        )


def _check_same_accumulation(folder, recorded, accumulation):
    """The checkpoints hold the optimizer's count of batches (and, under
    accumulation, its gradient sums): N cannot change within a run.
    `recorded`: the settings the folder's run recorded (None for none)."""
    if recorded is None:
        return
    before = recorded.get("gradient_accumulation_steps", 1)
    if before != accumulation:
        raise ValueError(
            f"{folder} holds a run with --gradient-accumulation-steps {before}; "
            f"its checkpoints count batches of that, so {accumulation} cannot "
            "go on from them, --force-resume included. Pass "
            f"--gradient-accumulation-steps {before}, or use another --output-dir "
            f"(add --init-checkpoint {os.path.join(folder, 'pretrainer.keras')} "
            "to go on from this run's finished model)."
        )


def _input_fingerprint(inputs):
    """SHA-256 over the --input files' bytes, in order; None: the embedded corpus."""
    if not inputs:
        return None
    from albert_keras.tokenizers.vocabulary import input_paths

    return file_fingerprint([file_fingerprint(p) for p in input_paths(inputs)])


# The flags that change the data a run makes (not how fast it is made).
_DATA_FLAGS = (
    "lowercase masked_lm_prob short_seq_prob dupe_factor ngram do_whole_word_mask "
    "random_next_sentence split_sentences"
).split()


def finished_run(args) -> bool:
    """Whether the folder holds this run finished (a process alone): then
    nothing is redone or rewritten."""
    from albert_keras.training.worker_files import is_alone

    state = read_json(os.path.join(args.output_dir, RUN_STATE)) or {}
    done = state.get("finished_steps")
    if isinstance(done, int) and done > args.steps:
        raise ValueError(
            f"{args.output_dir} holds a run finished at {done} steps: --steps "
            f"{args.steps} cannot take training back. Pass --steps {done} or more "
            "(more with --force-resume trains on), or use another --output-dir "
            f"(--init-checkpoint {os.path.join(args.output_dir, 'pretrainer.keras')}"
            " starts from this model)."
        )
    if done != args.steps or not is_alone():
        return False  # more --steps (with --force-resume) train on
    print(
        f"{args.output_dir} holds this run, finished ({args.steps} steps; see "
        "metrics.json): nothing to do. Train on with more --steps and "
        "--force-resume, or use another --output-dir.",
        flush=True,
    )
    return True


def mark_finished(args) -> None:
    """Records that the run finished, after all its files (the chief's)."""
    write_json(os.path.join(args.output_dir, RUN_STATE), {"finished_steps": args.steps})


def refuse_nan_run(args, metrics) -> None:
    """A run NanGuard stopped: no model is written and the run is not finished."""
    if not metrics.get("nan_detected"):
        return
    raise ValueError(
        f"the loss became nan by step {metrics['global_step']}: no pretrainer.keras "
        f"was written and {args.output_dir} is not finished. Lower --learning-rate "
        "(or raise --warmup-steps), then run again with --force-resume to go on "
        "from the last checkpoint before the NaN (step 0 if none), or in another "
        "--output-dir to start afresh (that checkpoint's weights may already be "
        "diverging: see history.csv)."
    )
