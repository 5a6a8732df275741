"""The admin under hostile input: never a 500.

Every model admin registered on ``admin.site`` is walked — its object URLs with ids that
cannot be ids, its changelist with junk in every filter and parameter it reads, every field
of its add and change forms (and of any other view it adds that shows a form) with a NUL, a
lone surrogate, max length + 1, 100,000 characters or hostile JSON, and its actions with junk
selections and over-long action fields. What comes back is a 400 naming the field, a form
error on the field, "doesn't exist", or a page — never a 500 or an exception. A model admin
added later is covered without a line here.

The Django tests also run on PostgreSQL (`make test`), where NUL and lone surrogates are what
make queries fail.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote as quote_url

import pytest
from django import forms
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.urls import reverse

from agentdash.core.admin_base import SafeInputAdmin
from agentdash.core.services import roles_ensure
from tests.agentdash.hostile import (
    HOSTILE_JSON,
    JUNK_IDS,
    JUNK_VALUES,
    NUL,
    SURROGATE,
    Prober,
    assert_refused_naming,
    form_fields_of,
    replaced,
    world_make,
)

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow,
]  # every admin page, each with junk: seconds a model

MODELS = [pytest.param(m, id=m._meta.label) for m in sorted(admin.site._registry, key=str)]
STANDARD_VIEWS = {"", "add/", "<path:object_id>/history/", "<path:object_id>/delete/",
                  "<path:object_id>/change/", "<path:object_id>/"}  # fmt: skip
_PARAM = re.compile(r"<[^>]+>")


@pytest.fixture
def prober(superuser: User, recorder: Any) -> Prober:
    roles_ensure()
    world_make(superuser)
    User.objects.create_user("carol", "carol@example.com", "carol-password-1")
    client = Client()
    client.force_login(superuser)
    return Prober(client)


def model_admin(model: Any) -> admin.ModelAdmin:
    return admin.site._registry[model]


def base(model: Any) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def as_superuser(user_model: Any = User) -> Any:
    request = RequestFactory().get("/admin/")
    request.user = user_model.objects.get(username="admin")
    return request


def form_in(response: HttpResponse) -> forms.BaseForm | None:
    context = response.context
    if context is None:
        return None
    if "adminform" in context:
        return context["adminform"].form  # type: ignore[no-any-return]
    form = context.get("form")
    return form if isinstance(form, forms.BaseForm) else None


def test_every_model_admin_is_on_the_safe_base() -> None:
    registry = admin.site._registry.items()
    unsafe = [m._meta.label for m, a in registry if not isinstance(a, SafeInputAdmin)]
    assert not unsafe, f"model admins not on core.admin_base.SafeInputAdmin: {unsafe}"


@pytest.mark.parametrize("model", MODELS)
def test_object_urls_with_ids_that_cannot_be_ids(prober: Prober, model: Any) -> None:
    routes = [str(p.pattern) for p in model_admin(model).get_urls() if "<" in str(p.pattern)]
    assert routes
    for route in routes:
        for junk in JUNK_IDS:
            path = base(model) + _PARAM.sub(junk, route)
            for response in (prober.get(path), prober.post(path, [("_save", "Save")])):
                if junk == "%00":
                    assert response.status_code == 404, path  # the middleware: names nothing
    existing = model.objects.order_by("-pk").first()
    assert existing is not None, f"world_make() makes no {model._meta.label}: add one"
    for route in routes:
        prober.get(base(model) + _PARAM.sub(quote(str(existing.pk)), route))


# The changelist's own parameters: Django's ChangeList reads them the same way whatever the
# model (a page number, "show all", a popup, the error flag), so one model admin walks them
# with junk for every admin that leaves that code as it is; an admin that changes how the
# list is made or paged walks them itself. The model's own (search, ordering by its columns,
# its filters and date hierarchy, the field a popup points to) are walked on every model.
CHANGELIST_OWN = ("p", "all", "_popup", "e")
CHANGELIST_MAKING = (
    "get_changelist",
    "get_changelist_instance",
    "get_paginator",
    "changelist_view",
)


def changes_the_changelist(model: Any) -> bool:
    """Whether ``model``'s admin makes or pages its list otherwise than the common base."""
    made = type(model_admin(model))
    return any(
        getattr(made, name) is not getattr(SafeInputAdmin, name) for name in CHANGELIST_MAKING
    )


def walks_changelist_own(model: Any) -> bool:
    """Whether ``model``'s changelist test walks the changelist's own parameters too."""
    return model is MODELS[0].values[0] or changes_the_changelist(model)


@pytest.mark.parametrize("model", MODELS)
def test_changelist_with_junk_in_every_parameter(prober: Prober, model: Any) -> None:
    url = base(model)
    changelist = prober.get(url).context["cl"]
    params = {"q", "o", "_to_field"}
    if walks_changelist_own(model):
        params.update(CHANGELIST_OWN)
    for spec in changelist.filter_specs:
        params.update(spec.expected_parameters())
    if changelist.date_hierarchy:
        params.update(f"{changelist.date_hierarchy}__{part}" for part in ("year", "month", "day"))
    for param in sorted(params):
        for junk in JUNK_VALUES:
            response = prober.get(url, [(param, junk)])
            if junk == NUL:
                assert_refused_naming(response, param)
    prober.get(url, [("q", "x" * 10_000)])


def test_the_changelist_s_own_parameters_are_walked_where_the_list_is_made_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The walk above leaves them out only where the common base makes the list: an admin
    that pages its own way is walked with them."""
    left_out = [
        m.values[0]
        for m in MODELS
        if not walks_changelist_own(m.values[0])
        and type(model_admin(m.values[0])) is not SafeInputAdmin
    ]
    assert left_out, "every model admin walks the changelist's own parameters: nothing to check"
    made = type(model_admin(left_out[0]))
    monkeypatch.setattr(made, "get_paginator", lambda *args, **kwargs: None, raising=False)
    assert walks_changelist_own(left_out[0])


@pytest.mark.parametrize("model", MODELS)
def test_actions_with_junk_selections_do_nothing(prober: Prober, model: Any) -> None:
    url, ma = base(model), model_admin(model)
    actions = list(ma.get_actions(as_superuser()))
    rows = model.objects.count()
    existing = str(model.objects.order_by("-pk").first().pk)
    action_fields = [f for f in ma.action_form.base_fields if f not in ("action", "select_across")]
    for action in actions:
        for junk in ("abc", "9" * 30, "x" * 300, SURROGATE, "", " 1"):
            prober.post(url, [("action", action), ("index", "0"), ("_selected_action", junk)])
        for name in action_fields:
            limit = getattr(ma.action_form.base_fields[name], "max_length", None) or 99_999
            for value in (NUL, SURROGATE, "x" * (limit + 1)):
                sent = [("action", action), ("index", "0"), ("_selected_action", existing)]
                response = prober.post(url, [*sent, (name, value)])
                if value == NUL:
                    assert_refused_naming(response, name)
    assert model.objects.count() == rows


def _form_pages(prober: Prober, model: Any) -> list[str]:
    """The admin's pages of ``model`` that show a form the superuser may submit."""
    ma, request = model_admin(model), as_superuser()
    obj = model.objects.order_by("-pk").first()
    pages = []
    if ma.has_add_permission(request):
        pages.append(base(model) + "add/")
    if obj is not None and ma.has_change_permission(request, obj):
        pages.append(base(model) + f"{quote(str(obj.pk))}/change/")
    for pattern in ma.get_urls():
        route = str(pattern.pattern)
        if route not in STANDARD_VIEWS and obj is not None:
            pages.append(base(model) + _PARAM.sub(quote(str(obj.pk)), route))
    return [page for page in pages if form_in(prober.get(page)) is not None]


def _errors_of(response: HttpResponse, name: str) -> bool:
    form = form_in(response)
    return response.status_code == 200 and form is not None and name in form.errors


@pytest.mark.parametrize("model", MODELS)
def test_every_form_field_with_hostile_values(prober: Prober, model: Any) -> None:
    for page in _form_pages(prober, model):
        form = form_in(prober.get(page))
        assert form is not None
        shown = [*form_fields_of(form), ("_save", "Save")]
        for bound in form:
            field, name = bound.field, bound.html_name
            if field.disabled or isinstance(field.widget, forms.MultiWidget):
                continue
            assert_refused_naming(prober.post(page, replaced(shown, name, NUL)), name)
            prober.post(page, replaced(shown, name, SURROGATE))
            form = form_in(prober.get(page)) or form  # the page again: versions may have moved
            shown = [*form_fields_of(form), ("_save", "Save")]
            if isinstance(field, forms.JSONField):
                for what, text in HOSTILE_JSON.items():
                    response = prober.post(page, replaced(shown, name, text))
                    assert _errors_of(response, name), f"{page} {name}: {what} accepted"
            elif getattr(field, "max_length", None):
                response = prober.post(page, replaced(shown, name, "x" * (field.max_length + 1)))
                assert _errors_of(response, name), f"{page} {name}: max length + 1 accepted"
            else:
                prober.post(page, replaced(shown, name, "x" * 100_000))


def test_the_forms_walked_include_the_policy_and_state_editors(prober: Prober) -> None:
    from agentdash.agent_sessions.models import AgentSession
    from agentdash.controls.models import Policy

    policy_pages = _form_pages(prober, Policy)
    assert any(p.endswith("/add/") for p in policy_pages)
    assert any(p.endswith("/change/") for p in policy_pages)
    assert any(p.endswith("/state/") for p in _form_pages(prober, AgentSession))


def test_admin_site_views_with_junk(prober: Prober) -> None:
    for junk in JUNK_IDS:
        for ct in ("1", junk):
            prober.get(f"/admin/r/{ct}/{junk}/")
    params = ("app_label", "model_name", "field_name", "term", "page")
    for junk in JUNK_VALUES:
        for param in params:
            query = [(p, "auth" if p == "app_label" else "x") for p in params if p != param]
            prober.get("/admin/autocomplete/", [*query, (param, junk)])
        prober.get("/admin/login/", [("next", junk)])
        prober.get(f"/admin/{quote_url(junk, errors='surrogatepass')}/")
        response = prober.post("/admin/password_change/", [("old_password", junk)])
        if junk == NUL:
            assert_refused_naming(response, "old_password")
