"""PrefIx's two added toolboxes, ``TradingBeaver`` and ``TravelBeaver``, as our own backends.

The paper's code registers both next to bfcl-eval's eight classes: ``TradingBeaver`` offers
the stock-trading functions of ``TradingBot`` and ``TravelBeaver`` a read-only slice of
``TravelAPI`` (no sign-in, booking or card registration). The classes here have the same
function names and parameters and keep their state in public attributes, so bfcl-eval's
state and response checks compare them as they compare its own backends. Everything is
deterministic: identifiers and timestamps come from a seeded generator, ages from a fixed
date.
"""

from __future__ import annotations

import copy
import random
from datetime import datetime, timedelta
from typing import Any

NOW = datetime(2024, 9, 1, 10, 30)
"""The backends' clock: the trading floor's current time and the date ages are taken at."""

_STOCKS = {
    # symbol: (price, percent change, volume, 5-day average, 20-day average)
    "AAPL": (227.16, 0.17, 2.552, 227.11, 227.09),
    "GOOG": (2840.34, 0.24, 1.123, 2835.67, 2842.15),
    "TSLA": (667.92, -0.12, 1.654, 671.15, 668.20),
    "MSFT": (310.23, 0.09, 3.234, 309.88, 310.11),
    "NVDA": (220.34, 0.34, 1.234, 220.45, 220.67),
    "ALPH": (1320.45, -0.08, 1.567, 1321.12, 1325.78),
    "OMEG": (457.23, 0.12, 2.345, 456.78, 458.12),
    "QUAS": (725.89, -0.03, 1.789, 726.45, 728.00),
    "NEPT": (88.34, 0.19, 0.654, 88.21, 88.67),
    "SYNX": (345.67, 0.11, 2.112, 345.34, 346.12),
    "ZETA": (22.09, -0.05, 0.789, 22.12, 22.34),
}
COMPANIES = {
    "Apple": "AAPL",
    "Google": "GOOG",
    "Tesla": "TSLA",
    "Microsoft": "MSFT",
    "Nvidia": "NVDA",
    "Zeta Corp": "ZETA",
    "Alpha Tech": "ALPH",
    "Omega Industries": "OMEG",
    "Quasar Ltd.": "QUAS",
    "Neptune Systems": "NEPT",
    "Synex Solutions": "SYNX",
    "Amazon": "AMZN",
}
SECTORS = {"Technology": ["AAPL", "GOOG", "MSFT", "NVDA"], "Automobile": ["TSLA", "F", "GM"]}


def default_trading_state() -> dict[str, Any]:
    """A fresh copy of the trading account a task starts from when it names no other."""
    return {
        "orders": {
            12345: {
                "id": 12345,
                "order_type": "Buy",
                "symbol": "AAPL",
                "price": 210.65,
                "amount": 10,
                "status": "Completed",
            },
            12446: {
                "id": 12446,
                "order_type": "Sell",
                "symbol": "GOOG",
                "price": 2840.56,
                "amount": 5,
                "status": "Pending",
            },
        },
        "account_info": {"account_id": 12345, "balance": 10000.0, "binding_card": 1974202140965533},
        "authenticated": False,
        "market_status": "Closed",
        "order_counter": 12446,
        "stocks": {
            symbol: {
                "price": p,
                "percent_change": c,
                "volume": v,
                "MA(5)": ma5,
                "MA(20)": ma20,
            }
            for symbol, (p, c, v, ma5, ma20) in _STOCKS.items()
        },
        "watch_list": ["NVDA"],
        "transaction_history": [],
        "random_seed": 1053520,
    }


class TradingBeaver:
    """A stock-trading account: orders, a watchlist, deposits and withdrawals, quotes."""

    def __init__(self) -> None:
        self.orders: dict[int, dict[str, Any]] = {}
        self.account_info: dict[str, Any] = {}
        self.authenticated = False
        self.market_status = "Closed"
        self.order_counter = 0
        self.stocks: dict[str, dict[str, float]] = {}
        self.watch_list: list[str] = []
        self.transaction_history: list[dict[str, Any]] = []
        self._random = random.Random(0)

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        """Take the task's initial state; what it leaves out comes from the default account.

        ``long_context`` is accepted for the executor's sake; no padding is added.
        """
        state = {**default_trading_state(), **copy.deepcopy(scenario)}
        self.orders = {int(k): v for k, v in state["orders"].items()}
        self.account_info = state["account_info"]
        self.authenticated = bool(state["authenticated"])
        self.market_status = state["market_status"]
        self.order_counter = int(state["order_counter"])
        self.stocks = state["stocks"]
        self.watch_list = list(state["watch_list"])
        self.transaction_history = list(state["transaction_history"])
        self._random = random.Random(state["random_seed"])

    def _timestamp(self) -> str:
        """A seeded time within a day of `NOW`, for a transaction record."""
        moment = NOW + timedelta(seconds=self._random.randint(0, 86_400))
        return moment.strftime("%Y-%m-%d %H:%M:%S")

    def _record(self, kind: str, amount: float) -> None:
        self.transaction_history.append(
            {"type": kind, "amount": amount, "timestamp": self._timestamp()}
        )

    def get_current_time(self) -> dict[str, str]:
        return {"current_time": NOW.strftime("%I:%M %p")}

    def update_market_status(self, current_time_str: str) -> dict[str, str]:
        moment = datetime.strptime(current_time_str, "%I:%M %p").time()
        opens, closes = datetime(1, 1, 1, 9, 30).time(), datetime(1, 1, 1, 16, 0).time()
        self.market_status = "Open" if opens <= moment <= closes else "Closed"
        return {"status": self.market_status}

    def get_symbol_by_name(self, name: str) -> dict[str, str]:
        return {"symbol": COMPANIES.get(name, "Stock not found")}

    def get_stock_info(self, symbol: str) -> dict[str, Any]:
        if symbol not in self.stocks:
            return {"error": f"Stock with symbol '{symbol}' not found."}
        return self.stocks[symbol]

    def get_order_details(self, order_id: int) -> dict[str, Any]:
        if order_id not in self.orders:
            return {"error": f"No order {order_id}. Known orders: {list(self.orders)}"}
        return self.orders[order_id]

    def cancel_order(self, order_id: int) -> dict[str, Any]:
        if order_id not in self.orders:
            return {"error": f"No order {order_id}."}
        if self.orders[order_id]["status"] == "Completed":
            return {"error": f"Order {order_id} is completed and cannot be cancelled."}
        self.orders[order_id]["status"] = "Cancelled"
        return {"order_id": order_id, "status": "Cancelled"}

    def place_order(
        self, order_type: str, symbol: str, price: float, amount: int
    ) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "Not logged in: log in before placing an order."}
        if symbol not in self.stocks:
            return {"error": f"Unknown stock symbol: {symbol}"}
        if price <= 0 or amount <= 0:
            return {"error": "Price and amount must be positive."}
        order_id = self.order_counter
        self.orders[order_id] = {
            "id": order_id,
            "order_type": order_type,
            "symbol": symbol,
            "price": float(price),
            "amount": amount,
            "status": "Open",
        }
        self.order_counter += 1
        return {
            "order_id": order_id,
            "order_type": order_type,
            "status": "Pending",
            "price": float(price),
            "amount": amount,
        }

    def make_transaction(self, account_id: int, xact_type: str, amount: float) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "Not logged in: log in before moving money."}
        if self.market_status != "Open":
            return {"error": "The market is closed; no transactions until it opens."}
        if account_id != self.account_info["account_id"]:
            return {"error": f"No account {account_id}."}
        if amount <= 0:
            return {"error": "The amount must be positive."}
        if xact_type == "deposit":
            self.account_info["balance"] += amount
        elif xact_type == "withdrawal":
            if amount > self.account_info["balance"]:
                return {"error": "Not enough funds for this withdrawal."}
            self.account_info["balance"] -= amount
        else:
            return {"error": "xact_type must be 'deposit' or 'withdrawal'."}
        self._record(xact_type, amount)
        done = "Deposit" if xact_type == "deposit" else "Withdrawal"
        return {"status": f"{done} successful", "new_balance": self.account_info["balance"]}

    def get_account_info(self) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "Not logged in: log in to see the account."}
        return self.account_info

    def trading_login(self, username: str, password: str) -> dict[str, str]:
        if self.authenticated:
            return {"status": "Already logged in"}
        self.authenticated = True
        return {"status": "Logged in successfully"}

    def trading_get_login_status(self) -> dict[str, bool]:
        return {"status": self.authenticated}

    def trading_logout(self) -> dict[str, str]:
        if not self.authenticated:
            return {"status": "No user is logged in"}
        self.authenticated = False
        return {"status": "Logged out successfully"}

    def fund_account(self, amount: float) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "Not logged in: log in to fund the account."}
        if amount <= 0:
            return {"error": "The amount must be positive."}
        self.account_info["balance"] += amount
        self._record("deposit", amount)
        return {
            "status": "Account funded successfully",
            "new_balance": self.account_info["balance"],
        }

    def remove_stock_from_watchlist(self, symbol: str) -> dict[str, str]:
        if not self.authenticated:
            return {"error": "Not logged in: log in to change the watchlist."}
        if symbol not in self.watch_list:
            return {"error": f"{symbol} is not on the watchlist."}
        self.watch_list.remove(symbol)
        return {"status": f"{symbol} removed from the watchlist."}

    def get_watchlist(self) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "Not logged in: log in to see the watchlist."}
        return {"watchlist": self.watch_list}

    def get_order_history(self) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "Not logged in: log in to see the order history."}
        return {"history": list(self.orders)}

    def get_transaction_history(
        self, start_date: str | None = None, end_date: str | None = None
    ) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "Not logged in: log in to see the transactions."}
        start = datetime.strptime(start_date, "%Y-%m-%d") if start_date else datetime.min
        end = datetime.strptime(end_date, "%Y-%m-%d") if end_date else datetime.max
        kept = [
            t
            for t in self.transaction_history
            if start <= datetime.strptime(t["timestamp"], "%Y-%m-%d %H:%M:%S") <= end
        ]
        return {"transaction_history": kept}

    def update_stock_price(self, symbol: str, new_price: float) -> dict[str, Any]:
        if symbol not in self.stocks:
            return {"error": f"Stock with symbol '{symbol}' not found."}
        if new_price <= 0:
            return {"error": "The new price must be positive."}
        old = self.stocks[symbol]["price"]
        self.stocks[symbol]["price"] = new_price
        self.stocks[symbol]["percent_change"] = (new_price - old) / old * 100
        return {"symbol": symbol, "old_price": old, "new_price": new_price}

    def get_available_stocks(self, sector: str) -> dict[str, list[str]]:
        return {"stock_list": list(SECTORS.get(sector, []))}

    def filter_stocks_by_price(
        self, stocks: list[str], min_price: float, max_price: float
    ) -> dict[str, list[str]]:
        kept = [
            s for s in stocks if min_price <= self.stocks.get(s, {}).get("price", 0) <= max_price
        ]
        return {"filtered_stocks": kept}

    def add_to_watchlist(self, stock: str) -> dict[str, list[str]]:
        if stock not in self.watch_list and stock in self.stocks:
            self.watch_list.append(stock)
        return {"symbol": self.watch_list}

    def notify_price_change(self, stocks: list[str], threshold: float) -> dict[str, str]:
        moved = [
            s
            for s in stocks
            if s in self.stocks and abs(self.stocks[s]["percent_change"]) >= threshold
        ]
        if moved:
            return {"notification": f"Stocks {', '.join(moved)} have significant price changes."}
        return {"notification": "No significant price changes in the selected stocks."}


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


def _tool(name: str, description: str, *params: tuple[str, str, str, bool]) -> dict[str, Any]:
    """A function doc in bfcl-eval's layout; a param is (name, JSON type, text, required)."""
    properties: dict[str, Any] = {}
    for pname, kind, text, _required in params:
        properties[pname] = {"type": kind, "description": text}
        if kind == "array":
            properties[pname]["items"] = {"type": "string"}
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": [p[0] for p in params if p[3]],
        },
    }


_TOKEN = ("access_token", "string", "The session token from the travel account.", True)

DOCS: dict[str, tuple[dict[str, Any], ...]] = {
    "TradingBeaver": (
        _tool("get_current_time", "Tell the trading floor's current time (HH:MM AM/PM)."),
        _tool(
            "update_market_status",
            "Set the market Open or Closed from a time of day (open 9:30 AM to 4:00 PM).",
            ("current_time_str", "string", "A time of day, HH:MM AM/PM.", True),
        ),
        _tool(
            "get_symbol_by_name",
            "Find a company's ticker symbol.",
            ("name", "string", "The company's name, e.g. 'Apple'.", True),
        ),
        _tool(
            "get_stock_info",
            "Price, percent change, volume and 5- and 20-day averages of a stock.",
            ("symbol", "string", "The ticker symbol.", True),
        ),
        _tool(
            "get_order_details",
            "Show one order: type, symbol, price, amount and status.",
            ("order_id", "integer", "The order's id.", True),
        ),
        _tool(
            "cancel_order",
            "Cancel an order that is not completed yet.",
            ("order_id", "integer", "The order's id.", True),
        ),
        _tool(
            "place_order",
            "Place a buy or sell order (needs a logged-in account).",
            ("order_type", "string", "'Buy' or 'Sell'.", True),
            ("symbol", "string", "The ticker symbol.", True),
            ("price", "number", "Price per share in USD.", True),
            ("amount", "integer", "Number of shares.", True),
        ),
        _tool(
            "make_transaction",
            "Deposit to or withdraw from the trading account (needs login and an open market).",
            ("account_id", "integer", "The account's id.", True),
            ("xact_type", "string", "'deposit' or 'withdrawal'.", True),
            ("amount", "number", "Amount in USD.", True),
        ),
        _tool("get_account_info", "Account id, balance and linked card (needs login)."),
        _tool(
            "trading_login",
            "Log in to the trading account.",
            ("username", "string", "The user name.", True),
            ("password", "string", "The password.", True),
        ),
        _tool("trading_get_login_status", "Whether the trading account is logged in."),
        _tool("trading_logout", "Log out of the trading account."),
        _tool(
            "fund_account",
            "Add money to the trading account (needs login).",
            ("amount", "number", "Amount in USD.", True),
        ),
        _tool(
            "remove_stock_from_watchlist",
            "Take a stock off the watchlist (needs login).",
            ("symbol", "string", "The ticker symbol.", True),
        ),
        _tool("get_watchlist", "The symbols on the watchlist (needs login)."),
        _tool("get_order_history", "The ids of all orders (needs login)."),
        _tool(
            "get_transaction_history",
            "Deposits and withdrawals, optionally between two dates (needs login).",
            ("start_date", "string", "First day, YYYY-MM-DD (optional).", False),
            ("end_date", "string", "Last day, YYYY-MM-DD (optional).", False),
        ),
        _tool(
            "update_stock_price",
            "Set a stock's price; its percent change follows.",
            ("symbol", "string", "The ticker symbol.", True),
            ("new_price", "number", "The new price in USD.", True),
        ),
        _tool(
            "get_available_stocks",
            "The ticker symbols of a sector.",
            ("sector", "string", "A sector, e.g. 'Technology' or 'Automobile'.", True),
        ),
        _tool(
            "filter_stocks_by_price",
            "Keep the stocks whose price lies in a range.",
            ("stocks", "array", "Ticker symbols.", True),
            ("min_price", "number", "Lowest price in USD.", True),
            ("max_price", "number", "Highest price in USD.", True),
        ),
        _tool(
            "add_to_watchlist",
            "Put a stock on the watchlist.",
            ("stock", "string", "The ticker symbol.", True),
        ),
        _tool(
            "notify_price_change",
            "Say which stocks moved by at least a percentage.",
            ("stocks", "array", "Ticker symbols.", True),
            ("threshold", "number", "The percent change that counts.", True),
        ),
    ),
    "TravelBeaver": (
        _tool(
            "compute_exchange_rate",
            "Convert an amount between USD and another currency "
            "(RMB, EUR, JPY, GBP, CAD, AUD, INR, RUB, BRL, MXN).",
            ("base_currency", "string", "The currency of the amount.", True),
            ("target_currency", "string", "The currency wanted.", True),
            ("value", "number", "The amount.", True),
        ),
        _tool("get_all_credit_cards", "Every card on the travel account, by card id."),
        _tool(
            "get_budget_fiscal_year",
            "The budget's fiscal year.",
            (
                "lastModifiedAfter",
                "string",
                "Only years changed after this time (optional).",
                False,
            ),
            ("includeRemoved", "string", "Also removed years (optional).", False),
        ),
        _tool(
            "get_credit_card_balance",
            "The balance of one card.",
            _TOKEN,
            ("card_id", "string", "The card's id.", True),
        ),
        _tool(
            "get_flight_cost",
            "The fare in USD of a flight between two airports on a date, in a class.",
            ("travel_from", "string", "Departure airport, 3-letter code.", True),
            ("travel_to", "string", "Arrival airport, 3-letter code.", True),
            ("travel_date", "string", "The day, YYYY-MM-DD.", True),
            ("travel_class", "string", "economy, business or first.", True),
        ),
        _tool(
            "get_nearest_airport_by_city",
            "The airport code nearest to a city.",
            ("location", "string", "The city, e.g. 'Rivermist' or 'Boston'.", True),
        ),
        _tool("list_all_airports", "Every airport code the travel system knows."),
        _tool(
            "retrieve_invoice",
            "The invoice of a booking.",
            _TOKEN,
            ("booking_id", "string", "The booking's id.", False),
            ("insurance_id", "string", "The insurance's id (optional).", False),
        ),
        _tool("travel_get_login_status", "Whether the travel session is still valid."),
        _tool(
            "verify_traveler_information",
            "Check that a traveler is the account holder, adult, with a US passport.",
            ("first_name", "string", "First name.", True),
            ("last_name", "string", "Last name.", True),
            ("date_of_birth", "string", "Birth date, YYYY-MM-DD.", True),
            ("passport_number", "string", "Passport number.", True),
        ),
    ),
}
"""Our tool docs of the two toolboxes, in bfcl-eval's function-doc layout."""
