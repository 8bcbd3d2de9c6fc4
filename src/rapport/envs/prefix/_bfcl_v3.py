"""BFCL v3's backend API on the installed bfcl-eval's backends.

BFCL v3 tasks (bfcl-eval 2025.6.8; PrefIx ran on v3) are written for functions that later
bfcl-eval releases removed or changed: ``TradingBot`` lost ``update_market_status``,
``update_stock_price`` and ``make_transaction`` (``withdraw_funds`` replaced the last) and
refuses buy orders over the balance; ``TravelAPI.book_flight`` lost its ``travel_cost``
argument (the price is looked up) and ``get_booking_history`` appeared;
``GorillaFileSystem.echo`` no longer creates the file it writes to. On today's classes those
v3 reference calls fail, and the calls after them fail in turn ("Booking not found").

The classes here are today's, with the v3 functions above restored (our code, behaving as
v3 documents them) and the functions v3 lacks left out (``_outside_v3_api``: never offered
or run). The other differences between the versions change the text of a result (field
names, messages), never whether a v3 reference call succeeds: docs/prefix.md lists them.
"""

from __future__ import annotations

from datetime import datetime
from datetime import time as clock
from typing import Any

from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import (
    gorilla_file_system,
    trading_bot,
    travel_booking,
)

_MARKET_OPENS = clock(9, 30)
_MARKET_CLOSES = clock(16, 0)


class TradingBot(trading_bot.TradingBot):
    """``TradingBot`` as BFCL v3 has it."""

    _outside_v3_api = frozenset({"withdraw_funds"})

    def update_market_status(self, current_time_str: str) -> dict[str, str]:
        """Open the market from 9:30 AM to 4:00 PM (both included), close it otherwise.

        Args:
            current_time_str: the time, as ``HH:MM AM`` or ``HH:MM PM``.
        """
        now = datetime.strptime(current_time_str, "%I:%M %p").time()
        self.market_status = "Open" if _MARKET_OPENS <= now <= _MARKET_CLOSES else "Closed"
        return {"status": self.market_status}

    def update_stock_price(self, symbol: str, new_price: float) -> dict[str, Any]:
        """Set a stock's price and its percent change from the old price."""
        if symbol not in self.stocks:
            return {"error": f"Stock with symbol '{symbol}' not found."}
        if new_price <= 0:
            return {"error": "New price must be a positive value."}
        stock = self.stocks[symbol]
        old_price = stock["price"]
        stock["price"] = new_price
        stock["percent_change"] = (new_price - old_price) / old_price * 100
        return {"symbol": symbol, "old_price": old_price, "new_price": new_price}

    def make_transaction(self, account_id: int, xact_type: str, amount: float) -> dict[str, Any]:
        """Deposit into or withdraw from the account (``xact_type``: ``deposit`` or
        ``withdrawal``) while the market is open."""
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to make a transaction."}
        if self.market_status != "Open":
            return {"error": "Market is closed. Transactions are not allowed."}
        if account_id != self.account_info["account_id"]:
            return {"error": f"Account with ID {account_id} not found."}
        if amount <= 0:
            return {"error": "Transaction amount must be positive."}
        if xact_type not in ("deposit", "withdrawal"):
            return {"error": "Invalid transaction type. Use 'deposit' or 'withdrawal'."}
        if xact_type == "withdrawal" and amount > self.account_info["balance"]:
            return {"error": "Insufficient funds for withdrawal."}
        sign = 1 if xact_type == "deposit" else -1
        self.account_info["balance"] += sign * amount
        self.transaction_history.append(
            {
                "type": xact_type,
                "amount": amount,
                "timestamp": self._generate_transaction_timestamp(),
            }
        )
        status = "Deposit successful" if xact_type == "deposit" else "Withdrawal successful"
        return {"status": status, "new_balance": self.account_info["balance"]}

    def place_order(self, order_type: str, symbol: str, price: float, amount: int) -> Any:
        """Place an order; v3 takes a buy order whatever the balance (later versions refuse
        one that costs more)."""
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to place an order."}
        if symbol not in self.stocks:
            return {"error": f"Invalid stock symbol: {symbol}"}
        if price <= 0 or amount <= 0:
            return {"error": "Price and amount must be positive values."}
        order_id, price = self.order_counter, float(price)
        self.orders[order_id] = {
            "id": order_id,
            "order_type": order_type,
            "symbol": symbol,
            "price": price,
            "amount": amount,
            "status": "Open",
        }
        self.order_counter += 1
        # Reported as pending when placed; a later look shows it open (as bfcl does).
        return {
            "order_id": order_id,
            "order_type": order_type,
            "status": "Pending",
            "price": price,
            "amount": amount,
        }


class TravelAPI(travel_booking.TravelAPI):
    """``TravelAPI`` as BFCL v3 has it: the caller states the flight's cost."""

    _outside_v3_api = frozenset({"get_booking_history"})

    def book_flight(  # type: ignore[override]
        self,
        access_token: str,
        card_id: str,
        travel_date: str,
        travel_from: str,
        travel_to: str,
        travel_class: str,
        travel_cost: float,
    ) -> dict[str, Any]:
        """Book a flight at the stated cost, charged to a registered card."""
        if self.token_expires_in == 0:
            return {"booking_status": False, "error": "Token expired"}
        if access_token != self.access_token:
            if self.token_expires_in is not None:
                self.token_expires_in -= 1
            return {"booking_status": False, "error": "Invalid access token"}
        card = self.credit_card_list.get(card_id)
        if card is None:
            return {"booking_status": False, "error": "Card not registered"}
        if "balance" not in card:
            return {"booking_status": False, "error": "Balance not found"}
        if card["balance"] < travel_cost:
            return {"booking_status": False, "error": "Insufficient funds"}
        if self.budget_limit is not None and card["balance"] < self.budget_limit:
            return {"booking_status": False, "error": "Balance is less than budget limit"}
        travel_cost = float(travel_cost)
        card["balance"] -= travel_cost
        booking_id = str(self._random.randint(1_000_000, 9_999_999))
        transaction_id = str(self._random.randint(10_000_000, 99_999_999))
        self.booking_record[booking_id] = {
            "card_id": card_id,
            "travel_date": travel_date,
            "travel_from": travel_from,
            "travel_to": travel_to,
            "travel_class": travel_class,
            "travel_cost": travel_cost,
            "transaction_id": transaction_id,
        }
        return {
            "booking_id": booking_id,
            "transaction_id": transaction_id,
            "booking_status": True,
            "booking_history": self.booking_record if self.long_context else {},
        }


class GorillaFileSystem(gorilla_file_system.GorillaFileSystem):
    """``GorillaFileSystem`` as BFCL v3 has it: ``echo`` into a new file creates it."""

    def echo(self, content: str, file_name: str | None = None) -> Any:
        """Write content to a file in the current directory (made if missing), or show it."""
        if (
            file_name
            and self._validate_file_or_directory_name(file_name)
            and file_name not in self._current_dir.contents
        ):
            self._current_dir._add_file(file_name, content)
            return None
        return super().echo(content, file_name)
