"""PrefIx's ``TravelBeaver``: a read-only slice of bfcl-eval's ``TravelAPI`` (no sign-in,
booking or card registration), as our own deterministic backend.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from ._toolboxes import NOW

_ROUTES = {
    # origin: "destination:base economy fare in USD ..."
    "SFO": "LAX:200 JFK:500 ORD:400 BOS:450 RMS:300 SBK:350 MPC:370 SVP:320 SHD:330 SSV:340 "
    "OKD:360 WLB:310 CRH:380 ATV:390 PHV:420 GFD:430 CIA:700",
    "LAX": "SFO:100 JFK:600 ORD:500 BOS:550 RMS:310 SBK:320 MPC:330 SVP:340 SHD:350 SSV:360 "
    "OKD:370 WLB:380 CRH:390 ATV:400 PHV:410 GFD:420 HND:430",
    "JFK": "ORD:300 BOS:250 RMS:450 SBK:460 MPC:470 SVP:480 SHD:490 SSV:500 OKD:510 WLB:520 "
    "CRH:530 ATV:540 PHV:550 GFD:560 LAX:570 HND:800 PVG:950 PEK:1000",
    "ORD": "LAX:180 BOS:200 RMS:350 SBK:360 MPC:370 SVP:380 SHD:390 SSV:400 OKD:410 WLB:420 "
    "CRH:430 ATV:440 PHV:450 GFD:460",
    "BOS": "RMS:400 SBK:410 MPC:420 SVP:430 SHD:440 SSV:450 OKD:460 WLB:470 CRH:480 ATV:490 "
    "PHV:500 GFD:510",
    "RMS": "BOS:200 JFK:210 SBK:220 MPC:230 SVP:240 SHD:250 SSV:260 OKD:270 WLB:280 CRH:290 "
    "ATV:300 PHV:310 GFD:320 LAX:330",
    "SBK": "MPC:200 SVP:210 SHD:220 SSV:230 OKD:240 WLB:250 CRH:260 ATV:270 PHV:280 GFD:290",
    "MPC": "SVP:210 SHD:220 SSV:230 OKD:240 WLB:250 CRH:260 ATV:270 PHV:280 GFD:290",
    "SVP": "SHD:230 SSV:240 OKD:250 WLB:260 CRH:270 ATV:280 PHV:290 GFD:300",
    "SHD": "SSV:220 OKD:230 WLB:240 CRH:250 ATV:260 PHV:270 GFD:280",
    "SSV": "OKD:240 WLB:250 CRH:260 ATV:270 PHV:280 GFD:290",
    "OKD": "WLB:230 CRH:240 ATV:250 PHV:260 GFD:270 LAX:220",
    "WLB": "CRH:250 ATV:260 PHV:270 GFD:280",
    "CRH": "ATV:240 PHV:250 GFD:260 SFO:270 RMS:280 HKG:290 JFK:300",
    "ATV": "PHV:230 GFD:240",
    "PHV": "GFD:220",
    "LHR": "CDG:100",
}
FARES = {
    (origin, dest): int(fare)
    for origin, row in _ROUTES.items()
    for dest, fare in (item.split(":") for item in row.split())
}
"""(from, to) -> base economy fare in USD."""
CLASS_FACTOR = {"economy": 1, "business": 2, "first": 5}
AIRPORTS = {
    "Rivermist": "RMS",
    "Stonebrook": "SBK",
    "Maplecrest": "MPC",
    "Silverpine": "SVP",
    "Shadowridge": "SHD",
    "London": "LHR",
    "Paris": "CDG",
    "Sunset Valley": "SSV",
    "Oakendale": "OKD",
    "Willowbend": "WLB",
    "Crescent Hollow": "CRH",
    "Autumnville": "ATV",
    "Pinehaven": "PHV",
    "Greenfield": "GFD",
    "San Francisco": "SFO",
    "Los Angeles": "LAX",
    "New York": "JFK",
    "Chicago": "ORD",
    "Boston": "BOS",
    "Beijing": "PEK",
    "Hong Kong": "HKG",
    "Rome": "CIA",
    "Tokyo": "HND",
}
"""City -> its nearest airport."""
USD_RATES = {
    "RMB": 7,
    "EUR": 0.8,
    "JPY": 110,
    "GBP": 0.7,
    "CAD": 1.3,
    "AUD": 1.4,
    "INR": 70,
    "RUB": 60,
    "BRL": 3.8,
    "MXN": 20,
}
"""Units of each currency one US dollar buys."""


class TravelBeaver:
    """A travel account seen read-only: fares, airports, cards, invoices, traveler checks.

    The session (``access_token``) is part of the task's initial state; there is no
    sign-in function. A call with a wrong token uses up one of the token's remaining uses,
    and a token with none left is expired.
    """

    def __init__(self) -> None:
        self.credit_card_list: dict[str, dict[str, Any]] = {}
        self.booking_record: dict[str, dict[str, Any]] = {}
        self.access_token: str | None = None
        self.token_type: str | None = None
        self.token_expires_in: int | None = None
        self.token_scope: str | None = None
        self.user_first_name: str | None = None
        self.user_last_name: str | None = None
        self.budget_limit: float | None = None

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        """Take the task's initial state (an empty, signed-out account where it is silent).

        ``long_context`` is accepted for the executor's sake; no padding is added.
        """
        state = copy.deepcopy(scenario)
        self.credit_card_list = state.get("credit_card_list", {})
        self.booking_record = state.get("booking_record", {})
        for name in (
            "access_token",
            "token_type",
            "token_expires_in",
            "token_scope",
            "user_first_name",
            "user_last_name",
            "budget_limit",
        ):
            setattr(self, name, state.get(name))

    def _token_error(self, access_token: str) -> str | None:
        """Why the token is refused (a wrong one costs a use), or None."""
        if self.token_expires_in is None:
            return "Not signed in"
        if self.token_expires_in <= 0:
            return "Token expired"
        if access_token != self.access_token:
            self.token_expires_in -= 1
            return "Invalid access token"
        return None

    def compute_exchange_rate(
        self, base_currency: str, target_currency: str, value: float
    ) -> dict[str, float]:
        if base_currency == "USD" and target_currency in USD_RATES:
            return {"exchanged_value": value * USD_RATES[target_currency]}
        if target_currency == "USD" and base_currency in USD_RATES:
            return {"exchanged_value": round(value / USD_RATES[base_currency], 2)}
        raise ValueError("No exchange rate between these currencies.")

    def get_all_credit_cards(self) -> dict[str, Any]:
        return {"credit_card_list": self.credit_card_list}

    def get_budget_fiscal_year(
        self, lastModifiedAfter: str | None = None, includeRemoved: str | None = None
    ) -> dict[str, str]:
        return {"budget_fiscal_year": "2018"}

    def get_credit_card_balance(self, access_token: str, card_id: str) -> dict[str, Any]:
        if error := self._token_error(access_token):
            return {"error": error}
        if card_id not in self.credit_card_list:
            return {
                "error": f"Card not registered. Registered cards: {list(self.credit_card_list)}"
            }
        return {"card_balance": self.credit_card_list[card_id]["balance"]}

    def get_flight_cost(
        self, travel_from: str, travel_to: str, travel_date: str, travel_class: str
    ) -> dict[str, list[float]]:
        if (travel_from, travel_to) not in FARES:
            raise ValueError("No route between these airports.")
        if travel_class not in CLASS_FACTOR:
            raise ValueError("travel_class must be economy, business or first.")
        digits = sum(int(c) for c in travel_date if c.isdigit())
        peak = 2 if digits % 2 == 0 else 1
        fare = FARES[travel_from, travel_to] * CLASS_FACTOR[travel_class] * peak
        return {"travel_cost_list": [float(fare)]}

    def get_nearest_airport_by_city(self, location: str) -> dict[str, str]:
        return {"nearest_airport": AIRPORTS.get(location, "Unknown")}

    def list_all_airports(self) -> list[str]:
        return sorted(set(AIRPORTS.values()))

    def retrieve_invoice(
        self, access_token: str, booking_id: str | None = None, insurance_id: str | None = None
    ) -> dict[str, Any]:
        if error := self._token_error(access_token):
            return {"error": error}
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        record = self.booking_record[booking_id]
        fields = ("travel_date", "travel_from", "travel_to", "travel_class", "travel_cost")
        invoice = {"booking_id": booking_id, **{k: record[k] for k in fields}}
        invoice["transaction_id"] = record["transaction_id"]
        return {"invoice": invoice}

    def travel_get_login_status(self) -> dict[str, bool]:
        return {"status": bool(self.token_expires_in)}

    def verify_traveler_information(
        self, first_name: str, last_name: str, date_of_birth: str, passport_number: str
    ) -> dict[str, Any]:
        if (first_name, last_name) != (self.user_first_name, self.user_last_name):
            expected = f"{self.user_first_name} {self.user_last_name}"
            return {
                "verification_status": False,
                "verification_failure": f"Only the account holder ({expected}) can be verified.",
            }
        try:
            born = datetime.strptime(date_of_birth, "%Y-%m-%d").date()
        except ValueError:
            return {
                "verification_status": False,
                "verification_failure": "date_of_birth must be YYYY-MM-DD.",
            }
        today = NOW.date()
        age = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
        if age < 18:
            return {"verification_status": False, "verification_failure": "Under 18."}
        if not passport_number.startswith("US"):
            return {
                "verification_status": False,
                "verification_failure": "Only passports issued by the United States are accepted.",
            }
        return {"verification_status": True}
