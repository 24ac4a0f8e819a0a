"""A `transformers` causal language model as `TextPolicy`'s ``generate`` (env side: `envs/text_env.py`).

[`hf_generate`][connect4_agents.interop.hf_text.hf_generate] wraps a loaded model (and its tokenizer) into the
``generate(prompt) -> dict`` function that [`TextPolicy`][connect4_agents.interop.text.TextPolicy] calls:
the answer's ``text`` with its ``prompt_tokens``, ``completion_tokens`` and ``finish_reason``, so game
records keep what the model was given and whether its answer was cut off.

Two ways to turn text into token ids:

- **a tokenizer** (a `transformers` tokenizer, loaded with the model): the prompt is encoded with the
  tokenizer's special tokens, or first put in the tokenizer's chat template (chat messages from
  ``TextPolicy(..., chat=True)``, or a string prompt as one user message with ``chat=True`` here), and the
  answer decoded without special tokens;
- **no tokenizer**: ids ``0..255`` are the prompt's UTF-8 bytes and the end-of-sequence id lies above them
  (a byte-level model, such as one built from a config in a test, with ``vocab_size`` of at least 257). The
  answer's bytes are decoded as UTF-8, an invalid byte as U+FFFD.

The module imports `torch` only when a ``generate`` function is made; `transformers` itself is never
imported here: the model and tokenizer come loaded (the ``llm`` extra installs it).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import Any

from connect4_env.validation import check_bool, check_int

__all__ = ["hf_generate", "BYTE_IDS", "RESERVED_GENERATE_ARGUMENTS"]

BYTE_IDS = 256
"""Without a tokenizer, ids ``0..255`` are bytes; an end-of-sequence id is one of the ids above."""

RESERVED_GENERATE_ARGUMENTS = frozenset(
    {
        "inputs",
        "input_ids",
        "attention_mask",
        "max_new_tokens",
        "max_length",
        "min_new_tokens",
        "min_length",
        "eos_token_id",
        "num_return_sequences",
        "num_beams",
        "return_dict_in_generate",
    }
)
"""Arguments of ``model.generate`` that `hf_generate` sets itself (or that would break its one answer per
prompt and its token counts), so ``generate_kwargs`` may not pass them."""


def _resolve_eos(eos_token_id: Any, model: Any, tokenizer: Any) -> tuple[int, ...]:
    """The end-of-sequence ids: the argument, else the model's generation config, else the tokenizer's."""
    if eos_token_id is None:
        eos_token_id = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if eos_token_id is None and tokenizer is not None:
        eos_token_id = getattr(tokenizer, "eos_token_id", None)
    if callable(getattr(eos_token_id, "tolist", None)):  # a numpy integer or array, a torch tensor
        eos_token_id = eos_token_id.tolist()
    values = list(eos_token_id) if isinstance(eos_token_id, (list, tuple)) else [eos_token_id]
    if eos_token_id is None or not values:
        raise ValueError(
            "no end-of-sequence id: pass eos_token_id (neither the model's generation config nor the "
            "tokenizer has one)"
        )
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"eos_token_id must be an int or a list of ints, got {eos_token_id!r:.80}")
    return tuple(dict.fromkeys(int(value) for value in values))


def _check_reserved(arguments: Mapping[str, Any], where: str) -> None:
    taken = sorted(set(arguments) & RESERVED_GENERATE_ARGUMENTS)
    if taken:
        raise ValueError(
            f"{where} may not set {', '.join(taken)}: hf_generate sets them itself "
            "(max_new_tokens and eos_token_id are its own arguments)"
        )


def hf_generate(
    model: Any,
    *,
    tokenizer: Any = None,
    max_new_tokens: int = 256,
    eos_token_id: int | list[int] | None = None,
    chat: bool = False,
    truncate: bool = False,
    prompt_kwargs: Callable[[Any], Mapping[str, Any]] | None = None,
    **generate_kwargs: Any,
) -> Callable[[Any], dict[str, Any]]:
    """A ``generate(prompt) -> dict`` function for [`TextPolicy`][connect4_agents.interop.text.TextPolicy]
    that asks a `transformers` causal language model (decoder-only) for one answer.

    The prompt is a string, or chat messages (``[{"role": ..., "content": ...}, ...]``, what
    ``TextPolicy(..., chat=True)`` passes), which go through the tokenizer's chat template with the
    generation prompt. Each call encodes the prompt (see the module's two ways), calls ``model.generate``
    for one sequence of at most ``max_new_tokens`` new tokens, and returns a dict:

    | key | value |
    |---|---|
    | ``text`` | the new tokens up to the first end-of-sequence id, decoded |
    | ``prompt_tokens`` | the number of token ids given to the model (after the chat template, truncation) |
    | ``completion_tokens`` | the number of new tokens, the end-of-sequence id included when there is one |
    | ``finish_reason`` | ``"length"``: ``max_new_tokens`` and no end-of-sequence id; else ``"stop"`` |

    [`TextPolicy`][connect4_agents.interop.text.TextPolicy] rejects an answer whose ``finish_reason`` is
    ``"length"`` (cut off), whatever it says. The model's own generation config (greedy or sampled, its
    temperature) applies unless ``generate_kwargs`` says otherwise; ``pad_token_id`` defaults to the first
    end-of-sequence id.

    A prompt longer than the model's positions allow (``model.config.max_position_embeddings`` less
    ``max_new_tokens``, when the config has it) raises `ValueError` in the call (a rejected answer in
    `TextPolicy`), unless ``truncate``, which keeps the prompt's last token ids: the position and the
    question survive, the rules at its start are cut first.

    Args:
        model: a loaded causal language model with ``generate`` (and ``device``, ``config`` and
            ``generation_config``, as `transformers` models have).
        tokenizer: its tokenizer (``encode``, ``decode``, and ``apply_chat_template`` for ``chat``), or None
            for UTF-8 bytes as ids.
        max_new_tokens: the most tokens an answer may have (1 or more); reasoning models need room to think.
        eos_token_id: the id (or ids: a list, or a numpy array) that end an answer; None takes the model's generation config's, else
            the tokenizer's. Without a tokenizer, each must be at least `BYTE_IDS` (an id below is a byte).
        chat: put a string prompt in the tokenizer's chat template as one user message (for
            instruction-tuned models); needs a tokenizer with a chat template. Chat messages always go
            through the template.
        truncate: cut a prompt that does not fit from the left instead of raising.
        prompt_kwargs: a function of the prompt (as ``generate`` gets it) returning more ``model.generate``
            arguments for that call (a ``logits_processor`` that allows only the position's legal columns,
            say); they override ``generate_kwargs``.
        **generate_kwargs: arguments for every ``model.generate`` call (``do_sample``, ``temperature``,
            ``generation_config``, ...), none of `RESERVED_GENERATE_ARGUMENTS`.

    Returns:
        The ``generate`` function. It raises `TypeError` for a prompt that is neither a str nor a list of
        messages with str ``role`` and ``content``, or a ``prompt_kwargs`` result that is not a mapping; and
        `ValueError` for messages without a tokenizer's chat template, a prompt that encodes to no token
        ids (an empty string without a tokenizer) or does not fit, or a ``prompt_kwargs`` result with a
        reserved argument.

    Raises:
        TypeError: ``model`` has no ``generate`` method; ``tokenizer`` lacks ``encode`` or ``decode``;
            ``max_new_tokens`` or ``eos_token_id`` is not an integer (Python's or numpy's; a bool is not) or a
            list of them; ``chat`` or ``truncate`` is
            not a bool; ``prompt_kwargs`` is not callable.
        ValueError: ``max_new_tokens`` is below 1 or leaves no room for a prompt in the model's positions;
            there is no end-of-sequence id, or (without a tokenizer) one is a byte or beyond the model's
            vocabulary; ``chat`` without a tokenizer, or one without a chat template; the model is an
            encoder-decoder; ``generate_kwargs`` holds a reserved argument.
        ModuleNotFoundError: torch is not installed (it comes with the model).
    """
    config = _checked_model(model, tokenizer, chat)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, 1)
    truncate = check_bool("truncate", truncate)
    if prompt_kwargs is not None and not callable(prompt_kwargs):
        raise TypeError(f"prompt_kwargs must be None or a function of the prompt, got {prompt_kwargs!r:.80}")
    _check_reserved(generate_kwargs, "generate_kwargs")
    eos = _resolve_eos(eos_token_id, model, tokenizer)
    if tokenizer is None:
        _check_byte_ends(eos, getattr(config, "vocab_size", None))
    context = getattr(config, "max_position_embeddings", None)
    room = context - max_new_tokens if isinstance(context, int) else None
    if room is not None and room < 1:
        raise ValueError(
            f"max_new_tokens {max_new_tokens} leaves no room for a prompt in the model's {context} positions"
        )
    import torch  # the model's own dependency; kept out of the package's start-up

    fixed = {"pad_token_id": eos[0], **generate_kwargs}

    def encode(prompt: str | list[dict[str, str]]) -> list[int]:
        _check_prompt(prompt)
        if isinstance(prompt, str) and not chat:
            ids = list(prompt.encode("utf-8")) if tokenizer is None else list(tokenizer.encode(prompt))
        else:
            if tokenizer is None or not getattr(tokenizer, "chat_template", None):
                raise ValueError("chat messages need a tokenizer with a chat template (pass tokenizer=...)")
            messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
            text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            ids = list(tokenizer.encode(text, add_special_tokens=False))  # the template holds them
        if not ids:  # the model would fail on an empty input with a RuntimeError of its own
            raise ValueError(
                "the prompt is empty: it encodes to no token ids, and the model needs at least one"
            )
        if room is None or len(ids) <= room:
            return ids
        if not truncate:
            raise ValueError(
                f"the prompt is {len(ids)} tokens, and the model's {context} positions less "
                f"max_new_tokens={max_new_tokens} leave {room}: pass truncate=True to keep its last {room}"
            )
        return ids[-room:]

    def decode(ids: list[int]) -> str:
        if tokenizer is None:
            return bytes(i for i in ids if 0 <= i < BYTE_IDS).decode("utf-8", errors="replace")
        return str(tokenizer.decode(ids, skip_special_tokens=True))

    def generate(prompt: str | list[dict[str, str]]) -> dict[str, Any]:
        ids = encode(prompt)
        arguments = {**fixed, **_extra_arguments(prompt_kwargs, prompt)}
        input_ids = torch.tensor([ids], dtype=torch.long, device=getattr(model, "device", None))
        output = model.generate(
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            max_new_tokens=max_new_tokens,
            eos_token_id=list(eos),
            return_dict_in_generate=True,
            **arguments,
        )
        sequences = getattr(output, "sequences", output)
        new = [int(i) for i in sequences[0, input_ids.shape[1] :].tolist()]
        end = next((index for index, token in enumerate(new) if token in eos), None)
        # fewer than max_new_tokens without an end id: a stopping criterion of the caller's ended it
        used = len(new) if end is None else end + 1
        finish = "length" if end is None and used >= max_new_tokens else "stop"
        text = decode(new if end is None else new[:end])
        return {"text": text, "prompt_tokens": len(ids), "completion_tokens": used, "finish_reason": finish}

    generate.__qualname__ = f"hf_generate({type(model).__name__})"
    return generate


def _checked_model(model: Any, tokenizer: Any, chat: object) -> Any:
    """The model's config, once the model, the tokenizer and ``chat`` fit together."""
    if not callable(getattr(model, "generate", None)):
        raise TypeError(f"model must be a transformers causal LM with a generate method, got {model!r:.80}")
    config = getattr(model, "config", None)
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(
            "model is an encoder-decoder; hf_generate takes a causal (decoder-only) language model"
        )
    if tokenizer is not None and not all(
        callable(getattr(tokenizer, name, None)) for name in ("encode", "decode")
    ):
        raise TypeError(f"tokenizer must be None or have encode and decode methods, got {tokenizer!r:.80}")
    if check_bool("chat", chat) and tokenizer is None:
        raise ValueError(
            "chat=True needs a tokenizer with a chat template; without one the prompt goes as bytes"
        )
    if chat and not (
        getattr(tokenizer, "chat_template", None)
        and callable(getattr(tokenizer, "apply_chat_template", None))
    ):
        raise ValueError("chat=True needs a tokenizer with a chat template; this one has none")
    return config


def _check_byte_ends(eos: tuple[int, ...], vocab_size: object) -> None:
    """Without a tokenizer, each end id lies above the byte ids and within the vocabulary."""
    top = vocab_size if isinstance(vocab_size, int) else None
    for value in eos:
        if not BYTE_IDS <= value < (value + 1 if top is None else top):
            raise ValueError(
                f"eos_token_id {value} cannot end an answer without a tokenizer: ids 0..{BYTE_IDS - 1} are bytes, "
                f"so it must lie in {BYTE_IDS}..{'' if top is None else top - 1}"
            )


def _check_prompt(prompt: object) -> None:
    """A prompt is a str or a list of ``{"role": str, "content": str}`` messages."""
    if isinstance(prompt, str) or (
        isinstance(prompt, list)
        and all(
            isinstance(message, dict)
            and isinstance(message.get("role"), str)
            and isinstance(message.get("content"), str)
            for message in prompt
        )
    ):
        return
    raise TypeError(
        f"prompt must be a str or a list of {{'role': str, 'content': str}} messages, got {prompt!r:.80}"
    )


def _extra_arguments(
    prompt_kwargs: Callable[[Any], Mapping[str, Any]] | None, prompt: Any
) -> Mapping[str, Any]:
    """The ``model.generate`` arguments ``prompt_kwargs`` adds for ``prompt`` (none without it)."""
    if prompt_kwargs is None:
        return {}
    extra = prompt_kwargs(prompt)
    if not isinstance(extra, Mapping):
        raise TypeError(f"prompt_kwargs must return a mapping, got {type(extra).__name__}")
    _check_reserved(extra, "prompt_kwargs")
    return extra
