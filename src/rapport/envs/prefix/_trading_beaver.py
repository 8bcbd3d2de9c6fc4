"""PrefIx's ``TradingBeaver``: the stock-trading functions of bfcl-eval's ``TradingBot``, as
our own deterministic backend.
"""

from __future__ import annotations

import copy
import random
from datetime import datetime, timedelta
from typing import Any

from ._toolboxes import NOW

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
