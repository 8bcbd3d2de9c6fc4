"""A safe executor for BFCL backends: calls are parsed, never evaluated.

bfcl-eval's own executor ``eval``s call strings and caches backend instances in module
globals. Here a call string is parsed with `ast`; only a bare call of a public method of
the task's involved classes, with literal arguments, is dispatched; every trial gets fresh
instances built from a deep copy of the task's initial configuration.
"""

from __future__ import annotations

import ast
import concurrent.futures
import copy
import importlib
import inspect
import json
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from ._failures import FailurePlan
from ._tasks import INSTALL_HINT, BfclTask

_BACKEND = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
BACKEND_MODULES = {
    "GorillaFileSystem": f"{_BACKEND}.gorilla_file_system",
    "MathAPI": f"{_BACKEND}.math_api",
    "MessageAPI": f"{_BACKEND}.message_api",
    "TwitterAPI": f"{_BACKEND}.posting_api",
    "TicketAPI": f"{_BACKEND}.ticket_api",
    "TradingBot": f"{_BACKEND}.trading_bot",
    "TravelAPI": f"{_BACKEND}.travel_booking",
    "VehicleControlAPI": f"{_BACKEND}.vehicle_control",
    "TradingBeaver": "rapport.envs.prefix._trading_beaver",
    "TravelBeaver": "rapport.envs.prefix._travel_beaver",
}
V3_BACKENDS = "rapport.envs.prefix._bfcl_v3"
"""Classes with BFCL v3's API, for tasks written for v3 (those it defines)."""
V3_CLASSES = frozenset({"GorillaFileSystem", "TradingBot", "TravelAPI"})
STATELESS = frozenset({"MathAPI"})
NAVIGATION = frozenset({"cd"})
"""Calls that change where the user is, not what they own: not counted as writes."""

_LITERALS = (str, int, float, bool, type(None))

MAX_INT_BITS = 4_096
"""Largest integer argument of a bounded backend call (about 1,200 decimal digits)."""
MAX_ITEMS = 10_000
"""Most values in one argument (list or dict) of a bounded backend call."""
MAX_PRECISION = 1_000
"""Largest ``precision`` (digits) of a MathAPI call."""
MAX_POWER_BITS = 100_000
"""Largest integer result of ``power`` (about 30,000 digits)."""
CALL_SECONDS = 2.0
"""Time a bounded (stateless) backend call may take before it is a tool error."""
BOUNDED = frozenset({"MathAPI"})
"""Backends whose calls are checked against the bounds above and timed."""
_WORKERS = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="bfcl-call")


class OverBudget(ValueError):
    """A call whose arguments or time are over the bounds: a tool error the agent sees."""


def check_bounds(name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    """Refuse arguments that would make a MathAPI call run for minutes.

    Raises:
        OverBudget: an argument is too large for the call.
    """
    values = [*args, *kwargs.values()]
    for value in values:
        _check_size(value)
    precision = kwargs.get(
        "precision", args[1] if name == "square_root" and len(args) > 1 else None
    )
    if name == "logarithm" and len(args) > 2:
        precision = args[2]
    if precision is not None and (
        not isinstance(precision, int | float) or not 0 < precision <= MAX_PRECISION
    ):
        raise OverBudget(f"precision must be between 1 and {MAX_PRECISION}")
    if name == "power":
        base = kwargs.get("base", args[0] if args else None)
        exponent = kwargs.get("exponent", args[1] if len(args) > 1 else None)
        if (
            isinstance(base, int)
            and isinstance(exponent, int)
            and abs(exponent) * abs(base).bit_length() > MAX_POWER_BITS
            and abs(base) > 1
        ):
            raise OverBudget(f"the result would have over {MAX_POWER_BITS} bits")


def _check_size(value: Any) -> None:
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > MAX_ITEMS:
            raise OverBudget(f"an argument holds over {MAX_ITEMS} values")
        if isinstance(item, int) and not isinstance(item, bool):
            if item.bit_length() > MAX_INT_BITS:
                raise OverBudget(f"an integer argument is over {MAX_INT_BITS} bits")
        elif isinstance(item, list | tuple | set):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())


class CallRefused(ValueError):
    """A call that is not a plain whitelisted method call with literal arguments."""


@dataclass(frozen=True)
class ParsedCall:
    """A call string taken apart."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


def parse_call(text: str) -> ParsedCall:
    """Parse ``name(arg, key=value)`` with literal arguments only.

    Raises:
        CallRefused: not a single bare call, or an argument is not a literal.
    """
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise CallRefused(f"not a call: {text!r}") from exc
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise CallRefused(f"only a bare function call is allowed: {text!r}")
    try:
        args = tuple(ast.literal_eval(arg) for arg in node.args)
        kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    except (ValueError, SyntaxError, TypeError) as exc:
        raise CallRefused(f"arguments must be literals: {text!r}") from exc
    if len(kwargs) != len(node.keywords):
        raise CallRefused(f"**kwargs are not allowed: {text!r}")
    return ParsedCall(node.func.id, args, kwargs)


def check_literal(value: Any) -> None:
    """Raise `CallRefused` unless the value is built from JSON-like literals only."""
    if isinstance(value, _LITERALS):
        return
    if isinstance(value, list | tuple | set):
        for item in value:
            check_literal(item)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            check_literal(key)
            check_literal(item)
        return
    raise CallRefused(f"argument of type {type(value).__name__} is not a literal")


def _bounded_call(
    name: str, method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """Run a stateless backend call with checked arguments, at most `CALL_SECONDS`.

    A call over time is abandoned (its worker finishes in the background; the backend
    keeps no state) and reported as a tool error. The wait cannot end inside one operation
    that holds the GIL (a big-integer power is one): `check_bounds` is what keeps those
    short, the time limit catches the rest.
    """
    check_bounds(name, args, kwargs)
    future = _WORKERS.submit(method, *args, **kwargs)
    try:
        return future.result(timeout=CALL_SECONDS)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise OverBudget(f"'{name}' took over {CALL_SECONDS:g} s") from None


class ExecutionResult(BaseModel):
    """What one call did."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str = ""
    error: str | None = None
    refused: bool = False
    injected: bool = False
    """A failure injected on purpose (the call was not run)."""
    wrote: bool = False
    """The call changed a backend's state."""
    turn: int = 0
    """The turn of the conversation the call was made in (one per user message)."""


def format_result(value: Any) -> str:
    """A call's return value as text, the way BFCL compares responses."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


class SafeExecutor:
    """Fresh backend instances for one trial of one task, and a whitelist of their methods.

    Args:
        task: the task whose involved classes and initial configuration to load.
        failures: failures to inject (none by default).
        track_writes: fingerprint state around each call to tell writes from reads.
    """

    def __init__(
        self, task: BfclTask, *, failures: FailurePlan | None = None, track_writes: bool = True
    ) -> None:
        self.task = task
        self.failures = failures or FailurePlan()
        self.track_writes = track_writes
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Callable[..., Any]] = {}
        self.log: list[ExecutionResult] = []
        self.turn = 0
        """The current turn, which calls are tagged with. As in bfcl-eval, a function held
        back until a later turn is only left out of the tools offered, never refused."""
        self._attempts: dict[str, int] = {}
        for class_name in task.involved_classes:
            self._load(class_name)

    def _load(self, class_name: str) -> None:
        if class_name not in BACKEND_MODULES:
            raise CallRefused(f"unknown backend class '{class_name}'")
        v3 = self.task.bfcl_version == "v3" and class_name in V3_CLASSES
        try:
            module = importlib.import_module(V3_BACKENDS if v3 else BACKEND_MODULES[class_name])
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(INSTALL_HINT) from exc
        instance = getattr(module, class_name)()
        if class_name not in STATELESS:
            config = copy.deepcopy(self.task.initial_config.get(class_name, {}))
            instance._load_scenario(config, long_context=self.task.category == "long_context")
        self.instances[class_name] = instance
        outside = set(getattr(instance, "_outside_v3_api", ())) | set(self.task.excluded_functions)
        for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
            if not name.startswith("_") and name not in outside:
                self.methods[name] = method

    def run(self, text: str) -> ExecutionResult:
        """Parse and run a call string; a refused call is recorded, never run."""
        try:
            parsed = parse_call(text)
        except CallRefused as exc:
            return self._record(ExecutionResult(name="?", error=str(exc), refused=True))
        return self.call(parsed.name, dict(parsed.kwargs), args=parsed.args)

    def call(
        self, name: str, arguments: Mapping[str, Any], *, args: tuple[Any, ...] = ()
    ) -> ExecutionResult:
        """Run a whitelisted method with literal arguments on this trial's instances."""
        method = self.methods.get(name)
        if method is not None and args:  # bind positional arguments to their names
            try:
                bound = inspect.signature(method).bind_partial(*args, **arguments).arguments
                args, arguments = (), dict(bound)
            except TypeError:
                pass
        shown = {**{f"_{i}": a for i, a in enumerate(args)}, **dict(arguments)}
        if method is None:
            error = f"'{name}' is not a function of this task's tools"
            return self._record(
                ExecutionResult(name=name, arguments=shown, error=error, refused=True)
            )
        try:
            check_literal(list(args))
            check_literal(dict(arguments))
        except CallRefused as exc:
            return self._record(
                ExecutionResult(name=name, arguments=shown, error=str(exc), refused=True)
            )
        self._attempts[name] = self._attempts.get(name, 0) + 1
        if self.failures.fails(name, self._attempts[name]):
            message = f"Error during execution: {self.failures.message}"
            return self._record(
                ExecutionResult(
                    name=name, arguments=shown, result=message, error=message, injected=True
                )
            )
        return self._record(self._invoke(name, method, args, dict(arguments), shown))

    def _invoke(
        self,
        name: str,
        method: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        shown: dict[str, Any],
    ) -> ExecutionResult:
        before = self._fingerprint() if self.track_writes else b""
        try:
            args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
            if type(getattr(method, "__self__", None)).__name__ in BOUNDED:
                value = format_result(_bounded_call(name, method, args, kwargs))
            else:
                value = format_result(method(*args, **kwargs))
            error = None
        except Exception as exc:  # the backends signal bad input by raising anything
            value = f"Error during execution: {exc}"
            error = value
        wrote = self.track_writes and name not in NAVIGATION and self._fingerprint() != before
        return ExecutionResult(name=name, arguments=shown, result=value, error=error, wrote=wrote)

    def _fingerprint(self) -> bytes:
        state = {
            cls: {k: v for k, v in vars(obj).items() if not k.startswith("_")}
            for cls, obj in self.instances.items()
        }
        try:
            return pickle.dumps(state)
        except (pickle.PicklingError, TypeError, AttributeError):
            return repr(state).encode()

    def _record(self, result: ExecutionResult) -> ExecutionResult:
        result.turn = self.turn
        self.log.append(result)
        return result

    @property
    def results(self) -> list[str]:
        """The text results of every call that ran (refused ones excluded), in order."""
        return [r.result for r in self.log if not r.refused]
