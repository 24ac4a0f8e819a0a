"""GRPO on Connect Four positions with exact per-move rewards, in one file: TRL's GRPOTrainer, a language model
answering "your move" prompts, every answer graded by perfect play.

    python recipes/grpo_connect4.py --tiny                 # a tiny random-weight model on 4x5, on the CPU
    python recipes/grpo_connect4.py                        # Qwen/Qwen2.5-0.5B-Instruct on 6x7: needs a GPU
    python recipes/grpo_connect4.py --help                 # every option, its meaning and its default

The prompts are random openings where the choice matters (`position_dataset`), shown in ``--dialect``; each
completion is read as that dialect reads an answer and rewarded by `solver_reward`: +1 for the move with the best
exact score, +0.5 for one that keeps the best outcome class, -0.5 for one that gives a class up, -1 for a win
given up for a loss or an answer the dialect rejects. The positions' scores are solved once, when the dataset is
built, so the reward is a lookup during training.

``--tiny`` builds a two-layer model from a config and a character-level tokenizer here (nothing is downloaded),
on a 4x5 board with short completions: a smoke test, and a small measure of whether the reward rises. A real
model comes from the Hub (``--model``, a model with a chat template: the prompts are then chat messages).

Files, under ``--out``: ``args.json`` (the settings, written first) and ``rewards.csv`` (step, mean reward, its
standard deviation: a line per logging step, written as it goes); the model at the end (``--save``).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import string
from pathlib import Path
from typing import Any

import torch

from connect4_agents.interop.trl_rewards import position_dataset, solver_reward
from connect4_env import Rules


def setting(default: Any, help: str) -> Any:
    """A field of ``Args``: its default, and its help in ``--help`` (where argparse adds the default)."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass
class Args:
    model: str = setting("Qwen/Qwen2.5-0.5B-Instruct", "the model to train (a Hub name or a folder)")
    tiny: bool = setting(
        False, "a tiny random-weight model and tokenizer built here, on 4x5 (overrides the board)"
    )
    rows: int = setting(6, "board rows")
    columns: int = setting(7, "board columns")
    win_length: int = setting(4, "stones in a row that win")
    dialect: str = setting("connect4", "how positions are shown and answers read (connect4_env's dialects)")
    positions: int = setting(512, "prompts: random openings where the choice matters")
    max_plies: int = setting(-1, "the most stones on a prompt's board (-1: half the cells)")
    steps: int = setting(500, "optimizer steps")
    batch_size: int = setting(8, "completions per device per step (a multiple of num-generations)")
    num_generations: int = setting(8, "completions per prompt: GRPO compares them with each other")
    max_completion_length: int = setting(256, "tokens per completion (--tiny: 4)")
    learning_rate: float = setting(1e-6, "AdamW's learning rate (--tiny: 1e-3)")
    beta: float = setting(0.0, "the KL penalty's weight against the starting model (0: none, TRL's default)")
    logging_steps: int = setting(10, "steps between lines of rewards.csv")
    seed: int = setting(0, "seed of the positions, torch and the sampling")
    threads: int = setting(1, "torch threads on the CPU")
    save: bool = setting(False, "save the trained model and tokenizer under --out")
    out: str = setting("runs/grpo_connect4", "folder for args.json, rewards.csv (and the model with --save)")


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The docstring as written, and each option's default after its help."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    for field in dataclasses.fields(Args):
        name = f"--{field.name.replace('_', '-')}"
        if field.type in ("bool", bool):
            parser.add_argument(
                name,
                action=argparse.BooleanOptionalAction,
                default=field.default,
                help=field.metadata["help"],
            )
        else:
            kind = {"int": int, "float": float, "str": str}[str(field.type)]
            parser.add_argument(name, type=kind, default=field.default, help=field.metadata["help"])
    return parser


def tiny_model_and_tokenizer(seed: int) -> tuple[Any, Any]:
    """A two-layer Qwen2 model with random weights and a character-level tokenizer over printable ASCII."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2}
    for char in string.printable:
        vocab.setdefault(char, len(vocab))
    characters = Tokenizer(
        models.BPE(vocab=vocab, merges=[], unk_token="<unk>")
    )  # no merges: one token a character
    characters.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=characters, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(vocab),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=1,
        tie_word_embeddings=True,
    )
    return Qwen2ForCausalLM(config), tokenizer


class RewardLog:
    """A ``TrainerCallback``'s ``on_log``: each logged mean reward appended to ``rewards.csv`` as it comes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with path.open("w", newline="") as stream:
            csv.writer(stream).writerow(["step", "reward", "reward_std"])

    def __call__(self, step: int, logs: dict[str, Any]) -> None:
        if "reward" in logs:
            with self.path.open("a", newline="") as stream:
                csv.writer(stream).writerow(
                    [step, float(logs["reward"]), float(logs.get("reward_std", "nan"))]
                )


def main(argv: list[str] | None = None) -> None:
    args = Args(**vars(build_parser().parse_args(argv)))
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2) + "\n")
    if args.tiny:
        rules = Rules(4, 5, 4)
        model, tokenizer = tiny_model_and_tokenizer(args.seed)
        completion_length = min(args.max_completion_length, 4)
        learning_rate = args.learning_rate if args.learning_rate != 1e-6 else 1e-3
    else:
        rules = Rules(args.rows, args.columns, args.win_length)
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        model = AutoModelForCausalLM.from_pretrained(args.model)
        completion_length, learning_rate = args.max_completion_length, args.learning_rate
    chat = getattr(tokenizer, "chat_template", None) is not None
    dataset = position_dataset(
        rules,
        n=args.positions,
        dialect=args.dialect,
        seed=args.seed,
        max_plies=None if args.max_plies < 0 else args.max_plies,
        chat=chat,
    )
    log = RewardLog(out / "rewards.csv")

    class Logged(TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            log(state.global_step, kwargs.get("logs") or {})

    config = GRPOConfig(
        output_dir=str(out / "trainer"),
        per_device_train_batch_size=args.batch_size,
        num_generations=args.num_generations,
        max_completion_length=completion_length,
        learning_rate=learning_rate,
        beta=args.beta,
        max_steps=args.steps,
        logging_steps=args.logging_steps,
        seed=args.seed,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        use_cpu=not torch.cuda.is_available(),
    )
    print(
        f"GRPO: {'a tiny model' if args.tiny else args.model} on {rules.rows}x{rules.columns}, "
        f"{len(dataset)} positions in the {args.dialect!r} dialect, {args.steps} steps; files in {out}/"
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=solver_reward,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[Logged()],
    )
    trainer.train()
    if args.save:
        trainer.save_model(str(out / "model"))
        tokenizer.save_pretrained(str(out / "model"))
    print(f"mean rewards by step: {out / 'rewards.csv'}")


if __name__ == "__main__":
    main()
