"""The ``transformers`` provider: a causal LM checkpoint in this process (CPU or one GPU).

``transformers/PATH_OR_NAME`` loads a directory written by ``save_pretrained`` (a trained
reflection model, for instance) or a hub name already in the local cache. Prompts go through
the tokenizer's chat template. Structured output is asked for in the prompt and checked by
the `Model`, which retries with the validation error shown. For serving at scale, load the
same checkpoint in vLLM and use the ``openai`` provider.
"""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ._chat import chat_messages, parse_tool_calls, tools_payload
from ._model import Completion, ModelAPI, Request
from ._types import ModelError, Usage

INSTALL_HINT = "pip install 'rapport-toolkit[train]' (torch, transformers)"

# One generation at a time per process: torch already uses every core for one call.
_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rapport-transformers")

_SCHEMA_INSTRUCTION = (
    "\n\nReply with only a JSON object (no other text) that fits this JSON schema:\n{schema}"
)


def _import_stack() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ModelError(
            f"the transformers provider needs torch and transformers: {INSTALL_HINT}"
        ) from exc
    return torch, transformers


class TransformersAPI(ModelAPI):
    """A transformers causal LM, loaded on first use.

    Args:
        path: a ``save_pretrained`` directory or a hub name present in the local cache.
        name: the spec string this provider reports.
        device: ``cpu``, ``cuda``, ``cuda:1`` ... or ``auto`` (a GPU when there is one).
        dtype: ``auto`` (as saved; float32 on CPU), ``float32``, ``bfloat16``, ``float16``.
    """

    def __init__(self, path: str, *, name: str, device: str = "auto", dtype: str = "auto") -> None:
        self.checkpoint = path
        """The directory or hub name the weights are loaded from."""
        local = Path(path).expanduser()
        self.path = local if local.exists() else None
        self.name = name
        self.device = device
        self.dtype = dtype
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, rest: str, **options: Any) -> TransformersAPI:
        """``transformers/PATH`` or ``transformers/ORG/NAME``; options ``device``, ``dtype``.

        Raises:
            ModelError: unknown options.
        """
        unknown = set(options) - {"device", "dtype"}
        if unknown:
            raise ModelError(f"unknown transformers options: {', '.join(sorted(unknown))}")
        return cls(rest, name=f"transformers/{rest}", **options)

    def check_ready(self) -> None:
        """Check that the checkpoint is here, without loading it: a directory with a
        ``config.json``, or a hub name in the local Hugging Face cache (runs download nothing).

        Raises:
            ModelError: no such directory, a directory that holds no checkpoint, or a hub
                name that is not in the local cache.
        """
        path = Path(self.checkpoint).expanduser()
        if path.is_dir():
            if not (path / "config.json").is_file():
                raise ModelError(f"{path} holds no checkpoint (no config.json)")
            return
        if (
            path.exists()
            or self.checkpoint.startswith(("/", ".", "~"))
            or self.checkpoint.count("/") > 1
        ):
            raise ModelError(f"checkpoint directory {path} does not exist")
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:
            return  # loading says what is missing
        if not isinstance(try_to_load_from_cache(self.checkpoint, "config.json"), str):
            raise ModelError(
                f"'{self.checkpoint}' is neither a checkpoint directory nor in the local "
                "Hugging Face cache"
            )

    def load(self) -> tuple[Any, Any]:
        """The model and tokenizer (loaded once; blocking).

        Raises:
            ModelError: torch/transformers missing, or the checkpoint cannot be loaded.
        """
        with self._lock:
            if self._loaded is None:
                self._loaded = self._load()
            return self._loaded

    def _load(self) -> tuple[Any, Any]:
        torch, transformers = _import_stack()
        device = self.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype: Any = "auto" if self.dtype == "auto" else getattr(torch, self.dtype)
        if dtype == "auto" and device == "cpu":
            dtype = torch.float32
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.checkpoint)
            model = transformers.AutoModelForCausalLM.from_pretrained(self.checkpoint, dtype=dtype)
        except (OSError, ValueError) as exc:
            where = (
                "directory" if Path(self.checkpoint).exists() else "name (not in the local cache?)"
            )
            raise ModelError(
                f"cannot load '{self.checkpoint}' as a transformers {where}: {exc}"
            ) from exc
        model.to(device).eval()
        return model, tokenizer

    async def complete(self, request: Request) -> Completion:
        """Complete one request on the provider's worker thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_WORKER, self._complete_blocking, request)

    def _complete_blocking(self, request: Request) -> Completion:
        torch, _ = _import_stack()
        model, tokenizer = self.load()
        inputs = self._encode(request, tokenizer).to(model.device)
        prompt_len = int(inputs["input_ids"].shape[1])
        config = request.config
        sample = config.temperature > 0
        if sample and config.seed is not None:
            torch.manual_seed(config.seed)
        kwargs: dict[str, Any] = {"max_new_tokens": config.max_tokens, "do_sample": sample}
        if sample:
            kwargs.update(temperature=config.temperature, top_p=config.top_p)
        else:
            kwargs.update(temperature=None, top_p=None, top_k=None)
        pad = (
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        )
        with torch.inference_mode():
            out = model.generate(**inputs, pad_token_id=pad, **kwargs)
        new_tokens = out[0][prompt_len:]
        text = _cut_at_stop(tokenizer.decode(new_tokens, skip_special_tokens=True), config.stop)
        usage = Usage(prompt_tokens=prompt_len, completion_tokens=int(new_tokens.shape[0]))
        if request.tools:
            rest, calls = parse_tool_calls(text, [t.name for t in request.tools])
            return Completion(text=rest, tool_calls=calls, usage=usage)
        return Completion(text=text.strip(), usage=usage)

    def _encode(self, request: Request, tokenizer: Any) -> Any:
        messages = chat_messages(request.messages, arguments_as_json=False)
        if request.json_schema is not None:
            instruction = _SCHEMA_INSTRUCTION.format(schema=json.dumps(request.json_schema))
            last_user = max(
                (i for i, m in enumerate(messages) if m["role"] == "user"), default=None
            )
            if last_user is None:
                messages.append({"role": "user", "content": instruction.strip()})
            else:
                messages[last_user]["content"] += instruction
        tools = tools_payload(request.tools) if request.tools else None
        try:
            return tokenizer.apply_chat_template(
                messages,
                tools=tools,
                add_generation_prompt=True,
                return_tensors="pt",
                return_dict=True,
            )
        except ValueError as exc:  # no chat template
            raise ModelError(f"{self.name}: the tokenizer cannot format chats: {exc}") from exc


def _cut_at_stop(text: str, stops: tuple[str, ...]) -> str:
    cuts = [text.find(s) for s in stops if s and s in text]
    return text[: min(cuts)] if cuts else text
