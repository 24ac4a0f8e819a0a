"""A real `transformers` generate loop behind TextPolicy: a tiny GPT-2 built from a config with random weights
(nothing downloaded), reading the prompt as UTF-8 bytes, plays whole games through prompt, generate, parse,
retry and record. It shows the plumbing, not strength.

The model's context (``n_positions=2048``) holds the whole prompt (about 650 bytes, plus a rejection note
per retry) and the answer, so nothing is truncated: the rules at the prompt's start reach the model as they
would a real one. Truncation has a test of its own on a model with 64 positions.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

import pytest
from helpers.extras import importorskip

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing may be downloaded: the models are built from configs here
torch = importorskip("torch")
transformers = importorskip("transformers")

from connect4_agents.evaluation.arena import play_game  # noqa: E402
from connect4_agents.interop.hf_text import BYTE_IDS, hf_generate  # noqa: E402
from connect4_agents.interop.text import TextPolicy  # noqa: E402
from connect4_agents.random_agent import RandomAgent  # noqa: E402

pytestmark = pytest.mark.llm

END = BYTE_IDS  # the end-of-sequence id, the first id above the bytes
MAX_NEW_TOKENS = 6
RETRIES = 2


def byte_model(n_positions: int = 2048, seed: int = 0) -> transformers.GPT2LMHeadModel:
    """A one-layer GPT-2 over 256 bytes and an end id, random weights from ``seed``."""
    torch.manual_seed(seed)
    config = transformers.GPT2Config(
        vocab_size=BYTE_IDS + 1,
        n_positions=n_positions,
        n_embd=32,
        n_layer=1,
        n_head=2,
        bos_token_id=END,
        eos_token_id=END,  # no pad id: hf_generate pads with the end id, and one answer needs no padding
    )
    return transformers.GPT2LMHeadModel(config).eval()


class Forced(transformers.LogitsProcessor):
    """Forces the answer ``ids``, one per step, then only ``end``: a scripted model from a real one."""

    def __init__(self, ids: list[int], end: int) -> None:
        self.ids = ids
        self.end = end
        self.start: int | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.start is None:
            self.start = input_ids.shape[1]
        step = input_ids.shape[1] - self.start
        allowed = torch.full_like(scores, float("-inf"))
        allowed[:, self.ids[step] if step < len(self.ids) else self.end] = 0.0
        return scores + allowed


class LegalDigitsThenEnd(transformers.LogitsProcessor):
    """Constrained decoding: the first token may only be the digit of a legal column, the second only the end
    id, so every answer parses and the model's own scores choose among the legal columns."""

    def __init__(self, digits: list[int], end: int) -> None:
        self.digits = digits
        self.end = end
        self.start: int | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.start is None:
            self.start = input_ids.shape[1]
        allowed = torch.full_like(scores, float("-inf"))
        allowed[:, self.digits if input_ids.shape[1] == self.start else [self.end]] = 0.0
        return scores + allowed


def utf8(text: str) -> list[int]:
    return list(text.encode())


def legal_digits(prompt: str | list[dict[str, str]], encode: Callable[[str], list[int]] = utf8) -> list[int]:
    """The ids of the legal columns' numbers (one id each), read from the prompt's last ``Legal columns:``
    line (the prompt as ``generate`` gets it: a string, or chat messages)."""
    text = prompt if isinstance(prompt, str) else "\n".join(message["content"] for message in prompt)
    listed = re.findall(r"Legal columns: ([\d ]+)", text)[-1].split()
    ids = [encode(column) for column in listed]
    assert listed and all(len(one) == 1 for one in ids), listed
    return [one[0] for one in ids]


def constrained(encode: Callable[[str], list[int]] = utf8, end: int = END) -> Callable[[object], dict]:
    """``prompt_kwargs`` for constrained decoding: a fresh processor for each prompt's legal columns."""
    return lambda prompt: {
        "logits_processor": transformers.LogitsProcessorList(
            [LegalDigitsThenEnd(legal_digits(prompt, encode), end)]
        )
    }


class Spy:
    """Wraps ``model.generate`` (the real one runs) to keep each call's prompt ids and new ids."""

    def __init__(self, model: transformers.GPT2LMHeadModel) -> None:
        self.real = model.generate
        self.calls: list[tuple[list[int], list[int]]] = []
        model.generate = self

    def __call__(self, *args: object, **kwargs: object) -> object:
        output = self.real(*args, **kwargs)
        prompt = kwargs["input_ids"][0].tolist()
        self.calls.append((prompt, output.sequences[0, len(prompt) :].tolist()))
        return output


def policy_moves(game: object) -> list[tuple[int, dict]]:
    """``(column, move_info)`` of each move of the first mover (the text policy)."""
    return [(column, info) for column, info in zip(game.moves[0::2], game.search[0::2])]


def ends_after_three_bytes(prompt: str) -> dict:
    """transformers' own processor forcing the end id as the 4th new token (its length counts the prompt)."""
    processor = transformers.ForcedEOSTokenLogitsProcessor(
        max_length=len(prompt.encode()) + 4, eos_token_id=END
    )
    return {"logits_processor": transformers.LogitsProcessorList([processor])}


@pytest.mark.parametrize(
    "way",
    [
        # greedy, as the model is: it never says the end id, so every answer is cut off at MAX_NEW_TOKENS
        "cut off",
        # sampled, then ended after 3 bytes: the answers end ("stop") and the parser rejects the garbage
        "unparseable",
    ],
)
def test_a_random_model_is_rejected_retried_and_recorded(way: str) -> None:
    """Garbage answers: each is rejected and asked again with the dialect's note, and every try is kept."""
    model = byte_model()
    spy = Spy(model)
    if way == "cut off":
        generate = hf_generate(model, max_new_tokens=MAX_NEW_TOKENS)
    else:
        generate = hf_generate(
            model, max_new_tokens=MAX_NEW_TOKENS, do_sample=True, prompt_kwargs=ends_after_three_bytes
        )
    policy = TextPolicy(generate, max_retries=RETRIES, fallback="random", seed=0)
    torch.manual_seed(3)  # the sampling
    game = play_game([policy, RandomAgent(seed=1)], seeds=[0, 1], record_search=True)

    assert game.forfeit is None and game.board().is_terminal
    moves = policy_moves(game)
    tries = [attempt for _, info in moves for attempt in info["tries"]]
    assert len(spy.calls) == len(tries) >= len(moves) >= 4
    for (prompt_ids, new_ids), attempt in zip(spy.calls, tries):
        # what the model was given is the recorded prompt, byte for byte; what it said is the recorded answer
        assert prompt_ids == list(attempt["prompt"].encode()) and attempt["prompt_tokens"] == len(prompt_ids)
        said = new_ids[: new_ids.index(END)] if END in new_ids else new_ids
        assert attempt["answer"] == bytes(said).decode("utf-8", errors="replace")
        assert attempt["completion_tokens"] == len(new_ids) <= MAX_NEW_TOKENS
        cut = END not in new_ids and len(new_ids) == MAX_NEW_TOKENS
        assert attempt["finish_reason"] == ("length" if cut else "stop")
        if cut:  # garbage cut off: rejected, and said to be cut off
            assert attempt["error"].startswith("the answer was cut off at the length limit (")
    reasons = {attempt["finish_reason"] for attempt in tries}
    if way == "cut off":
        assert reasons == {"length"}
    else:
        assert reasons == {"stop"} and all(attempt["completion_tokens"] <= 4 for attempt in tries)
        assert any(attempt["error"] and attempt["column"] is None for attempt in tries)  # the parser's no
    for column, info in moves:
        assert info["kind"] == "text" and info["column"] == column
        answered = [attempt for attempt in info["tries"] if attempt["error"] is None]
        if info["outcome"] == "fallback":  # every try rejected, then a random legal column
            assert len(info["tries"]) == RETRIES + 1 and not answered
        else:
            assert info["outcome"] == "answered" and answered == info["tries"][-1:]
            assert info["tries"][-1]["column"] == column
        for number, (before, after) in enumerate(zip(info["tries"], info["tries"][1:])):
            # a retry follows a rejection, and its prompt carries the dialect's note on it
            note = policy.dialect.rejection_note(
                before["answer"],
                before["error"],
                RETRIES - number - 1,
                cut_off=before["finish_reason"] == "length",
            )
            assert before["error"] and note in after["prompt"] and note not in before["prompt"]
    assert sum(info["outcome"] == "fallback" for _, info in moves) >= 1


def test_constrained_decoding_plays_the_models_own_legal_choices() -> None:
    """With a logits processor allowing only the legal columns' digits and then the end id, every answer
    parses, and each move is the legal column the model scores highest."""
    model = byte_model(seed=1)
    spy = Spy(model)
    generate = hf_generate(
        model,
        max_new_tokens=MAX_NEW_TOKENS,
        prompt_kwargs=constrained(),
    )
    policy = TextPolicy(generate, max_retries=RETRIES, fallback="raise", seed=0)
    game = play_game([policy, RandomAgent(seed=2)], seeds=[0, 2], record_search=True)

    assert game.forfeit is None and game.board().is_terminal  # played to its end, every move the model's
    moves = policy_moves(game)
    assert len(moves) >= 4 and len(spy.calls) == len(moves)
    for (column, info), (prompt_ids, new_ids) in zip(moves, spy.calls):
        (attempt,) = info["tries"]
        assert info["outcome"] == "answered" and attempt["error"] is None
        assert attempt["answer"] == str(column + 1) == chr(new_ids[0]) and new_ids[1:] == [END]
        assert attempt["column"] == column and attempt["finish_reason"] == "stop"
        assert attempt["completion_tokens"] == 2
        # the model's own choice: recomputed from one plain forward pass over the recorded prompt
        with torch.no_grad():
            logits = model(torch.tensor([prompt_ids])).logits[0, -1]
        digits = legal_digits(attempt["prompt"])
        best = max(float(logits[digit]) for digit in digits)
        assert float(logits[new_ids[0]]) >= best - 1e-4


def test_finish_reason_and_token_counts_of_forced_answers() -> None:
    model = byte_model(n_positions=64)
    forced = list(b"4\xff!")

    def answer(max_new_tokens: int, prompt: str = "\u00e9?") -> dict:
        generate = hf_generate(
            model,
            max_new_tokens=max_new_tokens,
            prompt_kwargs=lambda _: {
                "logits_processor": transformers.LogitsProcessorList([Forced(forced, END)])
            },
        )
        return generate(prompt)

    assert answer(4) == {
        "text": "4\ufffd!",
        "prompt_tokens": 3,
        "completion_tokens": 4,
        "finish_reason": "stop",
    }
    assert answer(9)["completion_tokens"] == 4
    assert answer(3) == {
        "text": "4\ufffd!",
        "prompt_tokens": 3,
        "completion_tokens": 3,
        "finish_reason": "length",
    }
    assert answer(1)["text"] == "4" and answer(1)["finish_reason"] == "length"


def test_a_long_prompt_raises_or_is_cut_from_the_left() -> None:
    model = byte_model(n_positions=64)
    spy = Spy(model)
    prompt = "rules " * 20 + "Your move?"
    with pytest.raises(ValueError, match=r"130 tokens.*64 positions.*leave 60.*truncate=True"):
        hf_generate(model, max_new_tokens=4)(prompt)
    assert spy.calls == []
    result = hf_generate(model, max_new_tokens=4, truncate=True)(prompt)
    assert result["prompt_tokens"] == 60
    assert spy.calls[0][0] == list(prompt.encode()[-60:])
    assert hf_generate(model, max_new_tokens=4)("x" * 60)["prompt_tokens"] == 60


def byte_tokenizer(chat_template: str | None = None) -> transformers.PreTrainedTokenizerFast:
    """A real (fast) tokenizer built here: byte-level BPE over the 256 byte symbols, plus an end token."""
    tokenizers = importorskip("tokenizers")
    alphabet = sorted(tokenizers.pre_tokenizers.ByteLevel.alphabet())
    model = tokenizers.models.BPE(vocab={symbol: index for index, symbol in enumerate(alphabet)}, merges=[])
    backend = tokenizers.Tokenizer(model)
    backend.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = tokenizers.decoders.ByteLevel()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|end|>")
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    return tokenizer


CHAT_TEMPLATE = (
    "{% for m in messages %}<|end|>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def test_a_real_tokenizer_and_its_chat_template() -> None:
    tokenizer = byte_tokenizer(CHAT_TEMPLATE)
    end = tokenizer.eos_token_id
    model = byte_model()
    assert end == BYTE_IDS and len(tokenizer) == model.config.vocab_size
    spy = Spy(model)
    four = tokenizer.encode("4", add_special_tokens=False)

    def forced(_: object) -> dict:
        return {"logits_processor": transformers.LogitsProcessorList([Forced(four, end)])}

    plain = hf_generate(model, tokenizer=tokenizer, max_new_tokens=3, prompt_kwargs=forced)("Your move?")
    assert plain == {"text": "4", "prompt_tokens": 10, "completion_tokens": 2, "finish_reason": "stop"}
    assert tokenizer.decode(spy.calls[0][0]) == "Your move?"

    chat = hf_generate(model, tokenizer=tokenizer, chat=True, max_new_tokens=3, prompt_kwargs=forced)
    assert chat("Your move?")["text"] == "4"
    assert spy.calls[1][0][0] == end  # the template's special token, encoded as one id
    assert tokenizer.decode(spy.calls[1][0]) == "<|end|>user: Your move?\nassistant: "
    assert len(spy.calls[1][0]) == 1 + len("user: Your move?\nassistant: ")


def test_chat_messages_through_the_template_play_a_game() -> None:
    """TextPolicy(chat=True) hands the adapter the system and user messages; the chat template renders them
    and the constrained model answers every move."""
    tokenizer = byte_tokenizer(CHAT_TEMPLATE)
    model = byte_model(seed=2)
    spy = Spy(model)

    def encode(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False)

    generate = hf_generate(
        model,
        tokenizer=tokenizer,
        max_new_tokens=MAX_NEW_TOKENS,
        prompt_kwargs=constrained(encode, tokenizer.eos_token_id),
    )
    policy = TextPolicy(generate, chat=True, max_retries=RETRIES, fallback="raise", seed=0)
    game = play_game([RandomAgent(seed=4), policy], seeds=[4, 0], record_search=True)

    assert game.forfeit is None and game.board().is_terminal
    moves = list(zip(game.moves[1::2], game.search[1::2]))
    assert len(moves) >= 4 and len(spy.calls) == len(moves)
    for (column, info), (prompt_ids, _) in zip(moves, spy.calls):
        (attempt,) = info["tries"]
        assert attempt["answer"] == str(column + 1) and attempt["finish_reason"] == "stop"
        system, user = attempt["prompt"].split("\n\n", 1)  # the record joins the messages' contents
        shown = tokenizer.decode(prompt_ids)
        assert shown == f"<|end|>system: {system}\n<|end|>user: {user}\nassistant: "
        assert attempt["prompt_tokens"] == len(prompt_ids) == 2 + len(shown.encode()) - 2 * len("<|end|>")


def test_bad_arguments() -> None:
    model = byte_model(n_positions=64)
    with pytest.raises(TypeError, match="generate method"):
        hf_generate(object())
    with pytest.raises(TypeError, match="max_new_tokens must be an int"):
        hf_generate(model, max_new_tokens=True)
    with pytest.raises(ValueError, match="max_new_tokens must be an integer >= 1, got 0"):
        hf_generate(model, max_new_tokens=0)
    with pytest.raises(ValueError, match="no room for a prompt in the model's 64 positions"):
        hf_generate(model, max_new_tokens=64)
    with pytest.raises(ValueError, match=r"eos_token_id 65 cannot end an answer.*256\.\.256"):
        hf_generate(model, eos_token_id=65)
    with pytest.raises(TypeError, match="eos_token_id must be an int"):
        hf_generate(model, eos_token_id="256")
    with pytest.raises(TypeError, match="tokenizer must be None or have encode and decode"):
        hf_generate(model, tokenizer="bytes")
    with pytest.raises(ValueError, match="chat=True needs a tokenizer"):
        hf_generate(model, chat=True)
    with pytest.raises(ValueError, match="this one has none"):
        hf_generate(model, tokenizer=byte_tokenizer(), chat=True)
    with pytest.raises(TypeError, match="truncate must be True or False"):
        hf_generate(model, truncate="yes")
    with pytest.raises(ValueError, match="generate_kwargs may not set max_length"):
        hf_generate(model, max_length=10)
    generate = hf_generate(model, max_new_tokens=2, prompt_kwargs=lambda _: {"num_return_sequences": 2})
    with pytest.raises(ValueError, match="prompt_kwargs may not set num_return_sequences"):
        generate("4")
    with pytest.raises(TypeError, match="prompt must be a str or a list of .* messages, got b'4'"):
        generate(b"4")
    with pytest.raises(TypeError, match="prompt must be a str or a list of .* messages"):
        generate([{"role": "user", "content": 4}])
    with pytest.raises(ValueError, match="chat messages need a tokenizer with a chat template"):
        hf_generate(model, max_new_tokens=2)([{"role": "user", "content": "4"}])
    model.generation_config.eos_token_id = None
    with pytest.raises(ValueError, match="no end-of-sequence id"):
        hf_generate(model)


def test_numpy_end_ids_are_taken_and_an_empty_prompt_is_a_value_error() -> None:
    import numpy as np

    model = byte_model(n_positions=64)
    for eos in (np.int64(END), [np.int32(END)], np.array([END, END + 0])):
        generate = hf_generate(model, eos_token_id=eos, max_new_tokens=2)
        assert generate("4")["completion_tokens"] in (1, 2)  # it ran: the id was taken as a plain int
    model.generation_config.eos_token_id = np.int64(END)  # a config loaded from numpy values
    assert hf_generate(model, max_new_tokens=1)("4")["completion_tokens"] == 1
    with pytest.raises(TypeError, match="eos_token_id must be an int"):
        hf_generate(model, eos_token_id=np.bool_(True))
    with pytest.raises(ValueError, match="the prompt is empty"):
        hf_generate(model, max_new_tokens=2)("")
