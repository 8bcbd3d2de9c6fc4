"""Model roles: components ask for ``agent``, ``user``, ``judge``, ``memory``; never a name."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from rapport.log import RoleModel

from ._model import Model, ModelAPI, ResponseCache
from ._registry import DEFAULT_SPEC, create_api
from ._spread import SpreadAPI
from ._types import ModelError

ROLES = ("agent", "user", "judge", "memory")


def is_role(name: str) -> bool:
    """Whether a name is a model role: one of `ROLES` or ``judge2``, ``judge3`` ..."""
    return name in ROLES or (name.startswith("judge") and name[5:].isdigit())


def provider_options(setting: RoleModel) -> dict[str, Any]:
    """A role's settings as provider options (the key read from its variable).

    Raises:
        ModelError: the key variable is not set.
    """
    options = setting.options()
    variable = options.pop("api_key_env", None)
    if variable is not None:
        key = os.environ.get(variable)
        if not key:
            raise ModelError(f"the API key variable {variable} is not set")
        options["api_key"] = key
    return options


class ModelRoles:
    """Resolves roles to models. Roles with the same spec share one provider instance.

    Args:
        specs: role -> spec string or a ready `ModelAPI`; key ``all`` sets the default.
        seed: the run seed every model derives sampling seeds from.
        cache: the response cache shared by all roles (``None``: no caching).
    """

    def __init__(
        self,
        specs: Mapping[str, str | ModelAPI] | None = None,
        *,
        seed: int = 0,
        cache: ResponseCache | None = None,
        settings: Mapping[str, RoleModel] | None = None,
    ) -> None:
        specs = dict(specs or {})
        self.settings = dict(settings or {})
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

    def has(self, role: str) -> bool:
        """Whether a role was configured explicitly (e.g. ``judge2``)."""
        return role in self.specs

    def judges(self) -> list[str]:
        """The judge roles: ``judge`` then ``judge2``, ``judge3`` ... as configured."""
        extra = sorted(
            (r for r in self.specs if r.startswith("judge") and r[5:].isdigit()),
            key=lambda r: int(r[5:]),
        )
        return ["judge", *extra]

    def get(self, role: str) -> Model:
        """The model for a role (built on first use)."""
        if role not in self._models:
            value = self.specs.get(role, self.default)
            setting = self.settings.get(role, self.settings.get("all"))
            api = value if not isinstance(value, str) else self._api(value, setting)
            if self._concurrency > 1:
                _tell_concurrency(api, self._concurrency)
            self._models[role] = Model(api, role=role, cache=self.cache, run_seed=self.seed)
        return self._models[role]

    def _api(self, spec: str, setting: RoleModel | None = None) -> ModelAPI:
        options = provider_options(setting) if setting is not None else {}
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

    def validate(self) -> None:
        """Check role names and build every configured provider now, so a bad spec or a
        misspelt role fails before any work.

        Raises:
            ModelError: an unknown role or a provider that cannot be built.
        """
        for role in {*self.specs, *self.settings}:
            if role != "all" and not is_role(role):
                raise ModelError(
                    f"unknown model role '{role}' (known: all, {', '.join(ROLES)}, judge2, ...)"
                )
        # Every role a component may ask for, so missing weights or a bad spec of a role
        # left to the default fail here, before anything is written.
        for role in sorted({*self.specs, *ROLES} - {"all"}):
            self.get(role)


def _tell_concurrency(api: ModelAPI, concurrency: int) -> None:
    hook = getattr(api, "set_concurrency", None)
    if callable(hook):
        hook(concurrency)
