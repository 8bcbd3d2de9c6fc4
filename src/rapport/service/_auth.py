"""Who a request is from: the tenant of its API key, within the tenant's rate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Header, HTTPException, Request

if TYPE_CHECKING:
    from ._hub import MemoryHub


def tenant_of_request(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> str:
    """The tenant whose API key the request carries (401 without one, 429 over its rate)."""
    scheme, _, key = (authorization or "").partition(" ")
    hub: MemoryHub = request.app.state.hub
    found = hub.store.tenant_of(key.strip()) if scheme.lower() == "bearer" and key else None
    if found is None:
        raise HTTPException(
            401,
            "a valid API key is needed: Authorization: Bearer KEY",
            headers={"WWW-Authenticate": "Bearer"},
        )
    wait = request.app.state.limiter.take(found)
    if wait > 0:
        raise HTTPException(429, "too many requests", headers={"Retry-After": str(wait)})
    return found


Tenant = Annotated[str, Depends(tenant_of_request)]
