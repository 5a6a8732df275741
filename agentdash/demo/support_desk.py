"""A support desk: a front-desk agent hands customers to a billing or a technical agent.

Transfers work on the offline model too: it transfers when the customer's words match an
agent's name or description — "invoice", "refund", "charged", "payment" go to billing;
"error", "crash", "bug", "login", "vpn" to tech. Each of them has a tool for a specific case
(an invoice number, a service's status) and one that answers in general (billing policies,
known issues), so every question gets an answer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from agentdash.demo.guardrails import guarded
from agentdash.instructions.agent_instructions import stored_instruction
from runtime import Agent, CallbackContext, ToolContext
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


BILLING_POLICIES = (
    (
        ("twice", "double", "duplicat", "charg"),
        "A charge shown twice is most often a card pre-authorisation, which drops off within 3 "
        "working days. If both are still there after that, we refund the second one.",
    ),
    (
        ("refund", "reimburs", "money", "cancel"),
        "Refunds go back to the card or account you paid with, within 5 working days; ask for "
        "one within 30 days of the payment.",
    ),
    (
        ("due", "overdue", "late", "fee", "remind"),
        "Invoices are due 30 days after they are issued; an overdue invoice gets a reminder, "
        "then a 5.00 EUR fee 14 days later.",
    ),
    (
        ("pay", "card", "transfer", "fail", "declin", "method"),
        "We take cards and SEPA transfers. A failed card payment is tried again after 3 days; "
        "you can also pay the invoice by transfer.",
    ),
)

KNOWN_ISSUES = (
    (
        ("login", "log", "password", "sign", "locked"),
        "Sign-in fails right after a password change",
        "sign out on every device, then sign in again; a fix ships on 2026-12-01.",
    ),
    (
        ("crash", "freez", "hang", "start"),
        "The desktop app 4.2 crashes at start with some graphics drivers",
        "update to 4.2.1, or start it with --safe-mode.",
    ),
    (
        ("error", "500", "bug", "broken"),
        "Error 500 when opening an invoice in the web app",
        "fixed in today's release: reload the page.",
    ),
    (
        ("slow", "vpn", "connect", "timeout"),
        "Slow VPN connections in eu-west since 09:40 UTC",
        "connect through eu-central until it is fixed.",
    ),
)


def _stems(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _best(text: str, entries: Sequence[tuple[Any, ...]]) -> Any:
    """The entry whose keywords (word prefixes) ``text`` hits most; the first of equals;
    ``None`` when none is hit."""
    words = _stems(text)
    hits = [sum(w.startswith(k) for w in words for k in entry[0]) for entry in entries]
    best = max(hits, default=0)
    return entries[hits.index(best)] if best else None


def lookup_invoice(invoice_number: str = "") -> dict[str, str]:
    """Looks up an invoice: amount, status and due date.

    Args:
      invoice_number: the invoice number, e.g. INV-1234 (the digits are enough).
    """
    found = re.search(r"\d+", invoice_number)
    if found is None:
        return {"error": "Which invoice? Give its number, e.g. INV-1234 (it is on the invoice)."}
    invoice = INVOICES.get(found.group(0))
    if invoice is None:
        return {"error": f"No invoice {invoice_number!r}. Invoice numbers look like INV-1234."}
    return {"invoice": f"INV-{found.group(0)}", **invoice}


def billing_policy(topic: str) -> dict[str, str]:
    """Explains our billing policies: refunds, charges shown twice, failed payments, fees
    and due dates.

    Args:
      topic: the customer's question, in their words.
    """
    found = _best(topic, BILLING_POLICIES)
    if found is None:
        return {
            "result": "Our billing policies cover refunds, charges shown twice, payments and "
            "due dates; for one invoice, give its number (e.g. INV-1234)."
        }
    return {"result": found[1]}


def reimburse_invoice(invoice_number: str, tool_context: ToolContext) -> dict[str, str]:
    """Reimburses an invoice's amount to the customer. A person approves each reimbursement
    first and may lower the amount.

    Args:
      invoice_number: the invoice to reimburse, e.g. INV-1234 (the digits are enough).
    """
    found = re.search(r"\d+", invoice_number)
    invoice = INVOICES.get(found.group(0)) if found else None
    if found is None or invoice is None:
        return {"error": f"No invoice {invoice_number!r} to reimburse. Numbers look like INV-1234."}
    number = f"INV-{found.group(0)}"
    asked = float(invoice["amount"].split()[0])
    answer = tool_context.tool_confirmation
    if answer is None:
        tool_context.request_confirmation(
            hint=f"Reimburse {asked:.2f} EUR of {number} to {invoice['customer']}?",
            payload={"amount": asked, "currency": "EUR"},
        )
        return {"status": f"waiting for a person to approve reimbursing {number}"}
    if not answer.confirmed:
        return {"status": f"reimbursing {number} was not approved"}
    payload = answer.payload if isinstance(answer.payload, dict) else {}
    amount = payload.get("amount", asked)
    if isinstance(amount, bool) or not isinstance(amount, int | float) or not 0 < amount <= asked:
        return {"error": f"reimbursing {number}: more than 0 and at most {asked:.2f} EUR"}
    return {"invoice": number, "reimbursed": f"{amount:.2f} EUR", "status": "reimbursed"}


def search_known_issues(problem: str) -> dict[str, str]:
    """Searches the known issues (errors, crashes, bugs, trouble to log in or with a
    password, slowness) for one matching the problem, with its workaround.

    Args:
      problem: the problem as the customer describes it.
    """
    found = _best(problem, KNOWN_ISSUES)
    if found is None:
        return {
            "result": "No known issue matches. Tell us the exact error message, or ask for a "
            f"service's status ({', '.join(SERVICES)})."
        }
    return {"known_issue": found[1], "workaround": found[2]}


def check_service_status(service: str) -> dict[str, str]:
    """Checks whether one of our services (email, vpn, website, api) is up, down or slow.

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
    description="Handles billing: invoices, payments, cards, refunds, charges, fees, amounts due.",
    instruction=(
        "You handle billing questions. Look invoices up with lookup_invoice and answer with "
        "the amount, the status and the due date; explain refunds, double charges, payments "
        "and fees with billing_policy; reimburse an invoice with reimburse_invoice when asked to."
    ),
    tools=[lookup_invoice, billing_policy, reimburse_invoice],
    **guarded(),
)

tech_agent = Agent(
    name="tech_agent",
    model=default_model(),
    description=(
        "Handles technical trouble: errors, crashes, bugs, login and password problems (when "
        "you cannot log in), services that are down or slow (email, vpn, website, api)."
    ),
    instruction=(
        "You handle technical problems. Check a service with check_service_status and say "
        "whether it works; look errors, crashes and login trouble up with search_known_issues "
        "and give the workaround."
    ),
    tools=[check_service_status, search_known_issues],
    **guarded(),
)

root_agent = Agent(
    name="support_desk",
    model=default_model(),
    description="The front desk of customer support.",
    instruction=stored_instruction(  # operators edit it at /instructions/support_desk/
        "You are the front desk of customer support. Greet the customer (visit number "
        "{user:visits?}) and hand billing questions to billing_agent and technical problems "
        "to tech_agent."
    ),
    sub_agents=[billing_agent, tech_agent],
    before_agent_callback=greet_customer,
    **guarded(tools=False),
)
