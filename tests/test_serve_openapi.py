"""docs/serve-openapi.yaml, the OpenAPI file of `vigil serve`'s API, is the
API the daemon has: it parses as OpenAPI 3.1, every reference in it
resolves, its paths and methods are exactly the rows of serve/routes.c
(the daemon's one table of routes) and of docs/SERVE.md's table, every
operation says what an unauthenticated caller gets, and the answers of a
real daemon have its schemas."""
import http.client
import json
import os
import re

import pytest
import yaml

from helpers import ROOT, free_port
import serve_daemon
from serve_daemon import daemon  # noqa: F401  (the fixture)

SPEC_PATH = os.path.join(ROOT, "docs", "serve-openapi.yaml")
ROUTES_C = os.path.join(ROOT, "serve", "routes.c")
SERVE_MD = os.path.join(ROOT, "docs", "SERVE.md")
METHODS = ("get", "post", "put", "patch", "delete", "head", "options")
# What every error answer of the API is (docs/SERVE.md: {"error": "one line"}).
ERROR_REF = "#/components/schemas/Error"


@pytest.fixture(scope="module")
def spec():
    with open(SPEC_PATH, encoding="utf-8") as f:
        return yaml.safe_load(f)


def operations(spec):
    """{(METHOD, path): operation} of the spec."""
    return {(m.upper(), p): op for p, item in spec["paths"].items()
            for m, op in item.items() if m in METHODS}


def routes_of_c(text):
    """{(METHOD, pattern)} of routes.c's rows: {"GET", "/v1/runs/{id}", ...}."""
    return set(re.findall(r'\{\s*"([A-Z]+)"\s*,\s*"(/[^"]*)"', text))


def routes_of_serve_md(text):
    """{(METHOD, path)} of SERVE.md's table of the API: `GET /v1/runs/ID`,
    and `, /stderr` after one naming its sibling; ID and PATH as {id} and
    {path}, the names of the OpenAPI file and of routes.c."""
    table = text.split("| method and path |", 1)[1].split("\n\n", 1)[0]
    got = set()
    for row in table.splitlines()[2:]:
        cell = row.split("|")[1]
        first = re.match(r"\s*`([A-Z]+) (/\S+)`", cell)
        assert first, "SERVE.md's API table: a row without `METHOD /path`: %r" % row
        method, path = first.groups()
        paths = [path] + [path.rsplit("/", 1)[0] + sib
                          for sib in re.findall(r",\s*`(/[a-z]+)`", cell)]
        for p in paths:
            got.add((method, p.replace("ID", "{id}").replace("PATH", "{path}")))
    return got


def test_parses_as_openapi_3_1(spec):
    assert str(spec["openapi"]).startswith("3.1."), spec["openapi"]
    assert spec["info"]["version"] == "1"
    assert all(p.startswith("/v1/") for p in spec["paths"]), list(spec["paths"])


def walk_refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                yield v
            else:
                yield from walk_refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk_refs(v)


def test_every_reference_resolves(spec):
    refs = set(walk_refs(spec))
    assert ERROR_REF in refs
    for ref in refs:
        assert ref.startswith("#/"), ref
        node = spec
        for part in ref[2:].split("/"):
            assert isinstance(node, dict) and part in node, "unresolved $ref %s" % ref
            node = node[part]


def test_paths_are_the_daemons_routes(spec):
    """Both ways: a path the file has and the daemon does not route, or a
    route the file lacks, fails, naming it."""
    with open(ROUTES_C, encoding="utf-8") as f:
        routes = routes_of_c(f.read())
    assert len(routes) >= 10, routes     # the table was read, not missed
    documented = set(operations(spec))
    assert documented - routes == set(), "in the OpenAPI file, not routed"
    assert routes - documented == set(), "routed, not in the OpenAPI file"


def test_paths_are_serve_mds(spec):
    with open(SERVE_MD, encoding="utf-8") as f:
        table = routes_of_serve_md(f.read())
    assert ("GET", "/v1/runs/{id}/stderr") in table, table   # the `, /stderr` sibling
    assert set(operations(spec)) == table


def test_route_readers_see_a_difference():
    """The two readers above are what the comparisons rest on: a row
    added or a method changed is seen."""
    base = routes_of_c('{"GET", "/v1/version", f, false},\n{"POST", "/v1/runs", g, false},')
    assert base == {("GET", "/v1/version"), ("POST", "/v1/runs")}
    md = ("| method and path | what |\n|--|--|\n| `GET /v1/runs/ID/stdout`, `/stderr` | x |\n"
          "| `DELETE /v1/runs/ID` | y |\n\nafter")
    assert routes_of_serve_md(md) == {("GET", "/v1/runs/{id}/stdout"),
                                      ("GET", "/v1/runs/{id}/stderr"),
                                      ("DELETE", "/v1/runs/{id}")}


def test_every_operation_answers_errors_as_error_objects(spec):
    """401 everywhere (nothing works unauthenticated); every 4xx an Error
    (or, for 429, a QuotaError with the Retry-After header); a {id} path a
    404 (another user's run is one that does not exist)."""
    responses = spec["components"]["responses"]
    for (method, path), op in operations(spec).items():
        answers = op["responses"]
        assert any(code.startswith("2") for code in answers), (method, path)
        assert "401" in answers, (method, path)
        if "{id}" in path:
            assert "404" in answers, (method, path)
        for code, answer in answers.items():
            if not code.startswith("4"):
                continue
            answer = responses[answer["$ref"].rsplit("/", 1)[1]] if "$ref" in answer else answer
            schema = answer["content"]["application/json"]["schema"]
            if code == "429":
                assert "Retry-After" in answer["headers"], (method, path)
                schema = spec["components"]["schemas"]["QuotaError"]
                assert schema["allOf"][0]["$ref"] == ERROR_REF
            else:
                assert schema == {"$ref": ERROR_REF}, (method, path, code)
    assert "429" in operations(spec)[("POST", "/v1/runs")]["responses"]
    assert "413" in operations(spec)[("POST", "/v1/runs")]["responses"]


def test_security_schemes(spec):
    schemes = spec["components"]["securitySchemes"]
    assert schemes["bearer"] == {**schemes["bearer"], "type": "http", "scheme": "bearer"}
    # {} is the unix socket's peer credentials, which the description names
    assert spec["security"] == [{}, {"bearer": []}]
    assert "SO_PEERCRED" in spec["info"]["description"]


def test_the_request_schema_knows_every_member_the_daemon_takes(spec):
    """The members of RunRequest are SERVE.md's example's, and the schema
    refuses others, as the daemon does (an unknown member is a 400)."""
    req = spec["components"]["schemas"]["RunRequest"]
    assert req["additionalProperties"] is False and req["required"] == ["argv"]
    with open(SERVE_MD, encoding="utf-8") as f:
        text = f.read()
    example = text.split("### Submitting a run", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    members = set(re.findall(r'^\s*"(\w+)":', example, re.M))
    assert members <= set(req["properties"]), members - set(req["properties"])
    assert {"policy_text", "stdin_base64"} <= set(req["properties"])


def test_validator_refuses_what_the_schema_refuses(spec):
    """The small JSON Schema checker the daemon's answers go through
    (tests/serve_daemon.py) fails on what it must."""
    check = serve_daemon.SchemaCheck(spec)
    check.run({"id": "r-1", "state": "queued", "submitted": "2026-12-04T20:15:00.123Z"})
    bad = [{"state": "queued", "submitted": "x"},                      # no id
           {"id": "r-1", "state": "sleeping", "submitted": "x"},        # not a state
           {"id": 7, "state": "queued", "submitted": "x"},              # not a string
           {"id": "r-1", "state": "queued", "submitted": "x", "pooled": "yes"}]
    for doc in bad:
        with pytest.raises(AssertionError):
            check.run(doc)
    with pytest.raises(AssertionError):
        check.request({"argv": ["true"], "stdin": "a", "stdin_base64": "YQ=="})
    with pytest.raises(AssertionError):
        check.request({"argv": ["true"], "colour": "blue"})


def test_answers_of_the_daemon_have_the_schemas(spec, daemon):  # noqa: F811
    """A real daemon's answers to each route, checked against the file's
    schemas: version, quota, a submitted run, its wait, list, result,
    outputs, a file, cancel, delete, and the error answers."""
    check = serve_daemon.SchemaCheck(spec)
    srv = daemon.client()
    check.named("Version", srv.version())
    check.named("Quota", srv.quota())
    body = {"argv": ["sh", "-c", "echo out; echo err >&2; echo made > left.txt"],
            "files": [{"path": "in.txt", "text": "x"}], "task_id": "schema-1"}
    check.request(body)
    run = srv.request_json("POST", "/runs", body)
    check.run(run)
    ended = srv.request_json("GET", "/runs/%s?wait=60" % run["id"], timeout=90)
    check.run(ended)
    assert ended["state"] == "finished", ended
    check.named("RunList", srv.request_json("GET", "/runs"))
    check.named("Result", srv.request_json("GET", "/runs/%s/result" % run["id"]))
    assert srv.request("GET", "/runs/%s/stdout" % run["id"]) == b"out\n"
    assert srv.request("GET", "/runs/%s/files/left.txt" % run["id"]) == b"made\n"
    sleeper = srv.request_json("POST", "/runs", {"argv": ["sleep", "60"]})
    cancelled = srv.request_json("POST", "/runs/%s/cancel" % sleeper["id"])
    check.run(cancelled)
    for status, method, path, req in [(404, "GET", "/runs/r-nonesuch", None),
                                      (400, "POST", "/runs", {"argv": ["true"], "colour": 1}),
                                      (400, "POST", "/runs", {"files": []})]:
        err = daemon.raw(method, path, req)
        assert err.status == status, (method, path, err.status, err.body)
        check.named("Error", err.json())
    check.run(srv.request_json("DELETE", "/runs/%s" % run["id"]))
    gone = daemon.raw("GET", "/runs/%s/stdout" % run["id"])
    assert gone.status == 410, (gone.status, gone.body)
    check.named("Error", gone.json())


def test_quota_and_identity_refusals_have_the_schemas(spec, tmp_path):
    """A quota refusal is 429 with Retry-After and a QuotaError; a TCP
    request without a token is 401 and an Error; a known path with another
    method, 405."""
    serve_daemon.require_serve()
    port = free_port()
    conf = tmp_path / "serve.conf"      # TCP wants a token user to serve
    conf.write_text("user ci uid 299998 token sha256:%s\n" % ("ab" * 32))
    d = serve_daemon.Daemon("--quota-runs", "1/1h", "--listen", "tcp:127.0.0.1:%d" % port,
                            "--config", str(conf))
    try:
        check = serve_daemon.SchemaCheck(spec)
        first = d.raw("POST", "/runs", {"argv": ["true"]})
        assert first.status == 201, (first.status, first.body)
        refused = d.raw("POST", "/runs", {"argv": ["true"]})
        assert refused.status == 429, (refused.status, refused.body)
        check.named("QuotaError", refused.json())
        assert int(refused.headers["retry-after"]) == refused.json()["retry_after"] > 0
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", "/v1/runs")
            anon = conn.getresponse()
            assert anon.status == 401, anon.status
            check.named("Error", json.loads(anon.read()))
        finally:
            conn.close()
        wrong = d.raw("PUT", "/runs")
        assert wrong.status == 405, wrong.status
        check.named("Error", wrong.json())
    finally:
        serve_daemon.stop_and_check(d)
