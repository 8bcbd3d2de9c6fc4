"""Model roles: components ask for ``agent``, ``user``, ``judge``, ``memory``; never a name."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from rapport.log import RoleModel, Sampling, role_sampling

from ._model import Model, ModelAPI, ResponseCache
from ._registry import DEFAULT_SPEC, create_api
from ._spread import SpreadAPI
from ._types import ModelError

ROLES = ("agent", "user", "judge", "memory")


def is_role(name: str) -> bool:
    """Whether a name is a model role: one of `ROLES` or ``judge2``, ``judge3`` ..."""
    return name in ROLES or _is_extra_judge(name)


def _is_extra_judge(name: str) -> bool:
    return name.startswith("judge") and name[5:].isdigit()


def ordered_roles(roles: Iterable[str]) -> list[str]:
    """Roles in the order of `ROLES`, then ``judge2``, ``judge3`` ..., then any others."""

    def rank(role: str) -> tuple[int, int, str]:
        if role in ROLES:
            return (0, ROLES.index(role), "")
        if _is_extra_judge(role):
            return (1, int(role[5:]), "")
        return (2, 0, role)

    return sorted(set(roles), key=rank)


def _provider(spec: str) -> str:
    return spec.partition("/")[0]


def _read_key(options: dict[str, Any]) -> dict[str, Any]:
    """``api_key_env`` replaced by ``api_key``, read from that variable.

    Raises:
        ModelError: the variable is not set.
    """
    variable = options.pop("api_key_env", None)
    if variable is not None:
        key = os.environ.get(variable)
        if not key:
            raise ModelError(f"the API key variable {variable} is not set")
        options["api_key"] = key
    return options


class ModelRoles:
    """Resolves roles to models. Roles with the same spec and settings share one provider.

    Args:
        specs: role -> spec string or a ready `ModelAPI`; key ``all`` sets the default.
        seed: the run seed every model derives sampling seeds from.
        cache: the response cache shared by all roles (``None``: no caching).
        settings: role -> provider settings; those of ``all`` are the defaults of every role
            whose spec has the same provider, and a role's own override them one by one.
        sampling: role -> sampling defaults; those of ``all`` apply to every role, and a
            role's own override them one by one. A call's own config wins over both.
    """

    def __init__(
        self,
        specs: Mapping[str, str | ModelAPI] | None = None,
        *,
        seed: int = 0,
        cache: ResponseCache | None = None,
        settings: Mapping[str, RoleModel] | None = None,
        sampling: Mapping[str, Sampling] | None = None,
    ) -> None:
        specs = dict(specs or {})
        self.settings = dict(settings or {})
        self.sampling = dict(sampling or {})
        self.default: str | ModelAPI = specs.pop("all", DEFAULT_SPEC)
        self.specs = specs
        self.seed = seed
        self.cache = cache
        self._apis: dict[str, ModelAPI] = {}
        self._models: dict[str, Model] = {}
        self._concurrency = 1

    def spec(self, role: str) -> str:
        """The spec string a role resolves to."""
        value = self.specs.get(role, self.default)
        return value if isinstance(value, str) else value.name

    def named(self) -> set[str]:
        """The roles the configuration names: a spec, settings or sampling defaults of their
        own (``all`` aside)."""
        return {*self.specs, *self.settings, *self.sampling} - {"all"}

    def has(self, role: str) -> bool:
        """Whether a role was configured explicitly (e.g. ``judge2``)."""
        return role in self.named()

    def judges(self) -> list[str]:
        """The judge roles: ``judge`` then ``judge2``, ``judge3`` ... as configured."""
        return ["judge", *(r for r in ordered_roles(self.named()) if _is_extra_judge(r))]

    def options(self, role: str) -> dict[str, Any]:
        """A role's provider options: ``all``'s settings where its spec has the same provider,
        overridden by its own; the key read from its variable.

        Raises:
            ModelError: the key variable is not set.
        """
        merged: dict[str, Any] = {}
        shared = self.settings.get("all")
        if shared is not None and _provider(self.spec(role)) == _provider(self.spec("all")):
            merged.update(shared.options())
        own = self.settings.get(role)
        if own is not None:
            merged.update(own.options())
        return _read_key(merged)

    def sampling_of(self, role: str) -> dict[str, Any]:
        """A role's sampling defaults: ``all``'s, overridden by its own."""
        return role_sampling(self.sampling, role)

    def get(self, role: str) -> Model:
        """The model for a role (built on first use)."""
        if role not in self._models:
            value = self.specs.get(role, self.default)
            api = value if not isinstance(value, str) else self._api(value, self.options(role))
            if self._concurrency > 1:
                _tell_concurrency(api, self._concurrency)
            self._models[role] = Model(
                api,
                role=role,
                cache=self.cache,
                run_seed=self.seed,
                sampling=self.sampling_of(role),
            )
        return self._models[role]

    def _api(self, spec: str, options: dict[str, Any]) -> ModelAPI:
        key = spec + (json.dumps(options, sort_keys=True, default=str) if options else "")
        if key not in self._apis:
            urls = options.pop("base_url", None)
            if isinstance(urls, list) and len(urls) > 1:
                self._apis[key] = SpreadAPI([create_api(spec, base_url=u, **options) for u in urls])
            else:
                if isinstance(urls, list):
                    urls = urls[0] if urls else None
                if urls is not None:
                    options["base_url"] = urls
                self._apis[key] = create_api(spec, **options)
        return self._apis[key]

    def set_concurrency(self, concurrency: int) -> None:
        """Tell providers that batch calls (the embedded engine) how many run at once,
        now and as roles are built later."""
        self._concurrency = concurrency
        for api in [*self._apis.values(), *(m.api for m in self._models.values())]:
            _tell_concurrency(api, concurrency)

    def check_names(self) -> None:
        """Refuse a role name that is not a role (a misspelt ``agnet``).

        Raises:
            ModelError: the first unknown role.
        """
        for role in sorted(self.named()):
            if not is_role(role):
                raise ModelError(
                    f"unknown model role '{role}' (known: all, {', '.join(ROLES)}, judge2, ...)"
                )

    def validate(self, roles: Iterable[str] | None = None) -> None:
        """Check everything a run will ask of its models before any work: role names, roles
        set that nothing uses, every model the run uses built (a bad spec or missing weights
        fail here) and every provider ready (a server that does not answer fails here).

        Args:
            roles: the roles the run's components ask for (``judge`` stands for every judge
                role); None: unknown, so every role of `ROLES` and every role named is built.

        Raises:
            ModelError: one line naming the role and what is wrong.
        """
        self.check_names()
        if roles is None:
            wanted = {*ROLES, *self.named()}
        else:
            used = set(roles)
            unused = [r for r in ordered_roles(self.named()) if not _covers(used, r)]
            if unused:
                raise ModelError(
                    f"model role '{unused[0]}' is set, but nothing in this run uses it "
                    f"(it uses: {', '.join(ordered_roles(used))})"
                )
            wanted = {*used, *self.named()}
        checked: set[int] = set()
        for role in ordered_roles(wanted):
            try:
                api = self.get(role).api
            except ModelError as exc:
                raise ModelError(f"model role '{role}': {exc}") from exc
            if id(api) in checked:
                continue
            checked.add(id(api))
            try:
                _check_ready(api)
            except ModelError as exc:
                raise ModelError(f"model role '{role}' ({api.name}): {exc}") from exc


def _covers(used: set[str], role: str) -> bool:
    return role in used or (_is_extra_judge(role) and "judge" in used)


def _check_ready(api: ModelAPI) -> None:
    api.check_ready()


def _tell_concurrency(api: ModelAPI, concurrency: int) -> None:
    api.set_concurrency(concurrency)
