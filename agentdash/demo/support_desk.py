"""A support desk: a front-desk agent hands customers to a billing or a technical agent.

Transfers work on the offline model too: it transfers when the customer's words name an agent
it may transfer to ("billing", "tech").
"""

from __future__ import annotations

import re
import time

from runtime import Agent, CallbackContext
from runtime.examples.capital import default_model

INVOICES = {
    "1001": {"customer": "alice", "amount": "120.00 EUR", "status": "paid", "due": "2026-10-01"},
    "1002": {"customer": "bob", "amount": "75.50 EUR", "status": "overdue", "due": "2026-11-01"},
    "1003": {"customer": "alice", "amount": "42.00 EUR", "status": "open", "due": "2026-12-15"},
}

SERVICES = {
    "email": "operational",
    "vpn": "degraded: slow connections in eu-west since 09:40 UTC",
    "website": "operational",
    "api": "operational",
}


def lookup_invoice(invoice_number: str) -> dict[str, str]:
    """Looks up an invoice: amount, status and due date.

    Args:
      invoice_number: the invoice number, e.g. INV-1234 (the digits are enough).
    """
    found = re.search(r"\d+", invoice_number)
    invoice = INVOICES.get(found.group(0)) if found else None
    if invoice is None:
        return {"error": f"No invoice {invoice_number!r}. Invoice numbers look like INV-1234."}
    return {"invoice": f"INV-{found.group(0)}", **invoice}  # type: ignore[union-attr]


def check_service_status(service: str) -> dict[str, str]:
    """Checks the current status of one of our services.

    Args:
      service: the service's name.
    """
    words = set(re.findall(r"[a-z]+", service.lower()))
    name = next((s for s in SERVICES if s in words), None)
    if name is None:
        return {"error": f"Unknown service {service!r}. Known: {', '.join(SERVICES)}."}
    return {"service": name, "status": SERVICES[name]}


def greet_customer(callback_context: CallbackContext) -> None:
    """Before the desk runs: count the customer's visits in ``user:`` state (shared by all of
    this user's sessions) and remember when they first came."""
    state = callback_context.state
    state["user:visits"] = int(state.get("user:visits") or 0) + 1
    if not state.get("user:first_seen"):
        state["user:first_seen"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


billing_agent = Agent(
    name="billing_agent",
    model=default_model(),
    description="Handles billing questions: invoices, payments, amounts due.",
    instruction=(
        "You handle billing questions. Look invoices up with lookup_invoice and answer with "
        "the amount, the status and the due date."
    ),
    tools=[lookup_invoice],
)

tech_agent = Agent(
    name="tech_agent",
    model=default_model(),
    description="Handles tech problems: outages, service status, connection trouble.",
    instruction=(
        "You handle technical problems. Check the service with check_service_status and say "
        "whether it works."
    ),
    tools=[check_service_status],
)

root_agent = Agent(
    name="support_desk",
    model=default_model(),
    description="The front desk of customer support.",
    instruction=(
        "You are the front desk of customer support. Greet the customer (visit number "
        "{user:visits?}) and hand billing questions to billing_agent and technical problems "
        "to tech_agent."
    ),
    sub_agents=[billing_agent, tech_agent],
    before_agent_callback=greet_customer,
)
