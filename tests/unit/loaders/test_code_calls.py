"""The code loader's calls, one language at a time: what each call sends, with which method."""

from __future__ import annotations

import pytest

from apiatlas.loaders.code.calls import calls, member_chain, parse
from apiatlas.loaders.code.models import Language


def found(source: str, language: Language) -> list[tuple[int, str, str | None, str | None]]:
    data = source.encode()
    return [(c.line, c.style, c.method, c.path) for c in calls(parse(data, language), data)]


def test_python_paths_from_literals_fstrings_format_calls_and_variables() -> None:
    source = '''import requests
BASE = "https://api.ship.example"

class Shipments:
    def book(self, body):
        return requests.post(f"{BASE}/v2/shipments", json=body)

    def remove(self, shipment_id):
        url = "/v2/shipments/{}".format(shipment_id)
        return self.session.request("DELETE", url)

    def read(self, shipment_id):
        return self._get(path_template("/v2/shipments/{shipment_id}", shipment_id=shipment_id))

    def post(self, **kwargs):
        return self.api_call("chat.postMessage", http_verb="POST", params=kwargs)

def settings(config):
    return config.get("models")
'''
    assert found(source, "python") == [
        (6, "path", "POST", "https://api.ship.example/v2/shipments"),
        (10, "path", "DELETE", "/v2/shipments/{}"),
        (13, "path", "GET", "/v2/shipments/{}"),
        (16, "path", "POST", "chat.postMessage"),
    ]  # config.get("models") states no method: a bare word is no path


def test_python_calls_know_their_function_and_class() -> None:
    data = b"class A:\n    def go(self):\n        return self._post('/v2/x')\n"
    (call,) = calls(parse(data, "python"), data)
    assert (call.function, call.callee, call.name, call.text) == (
        "A.go", "self._post", "_post", "self._post('/v2/x')"
    )


def test_javascript_fetch_axios_templates_and_sdk_chains() -> None:
    source = '''const BASE = "https://api.ship.example";
async function book(body, id) {
  await fetch(`${BASE}/v2/shipments`, { method: "POST", body: JSON.stringify(body) });
  await fetch("/v2/carriers");
  return axios.get("/v2/shipments/" + id);
}
octokit.rest.issues.create({ owner, repo, title });
const docs = "see https://docs.ship.example/guide";
'''
    assert found(source, "javascript") == [
        (3, "path", "POST", "https://api.ship.example/v2/shipments"),
        (4, "path", "GET", "/v2/carriers"),
        (5, "path", "GET", "/v2/shipments/{}"),
        (7, "name", None, None),
    ]


def test_typescript_tagged_templates_and_client_methods() -> None:
    source = '''export class Shipments extends APIResource {
  retrieve(id: string, options?: RequestOptions): Promise<Shipment> {
    return this._client.get(path`/v2/shipments/${id}`, options);
  }
  cancel(id: string) {
    return this._client.post(`/v2/shipments/${id}/cancel`);
  }
}
'''
    assert found(source, "typescript") == [
        (3, "path", "GET", "/v2/shipments/{}"),
        (6, "path", "POST", "/v2/shipments/{}/cancel"),
    ]


def test_go_method_constants_sprintf_variables_and_rpc_method_names() -> None:
    source = '''package ship

func (c *Client) Book(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v2/shipments", body)
	url := fmt.Sprintf("%s/v2/shipments/%s", c.base, id)
	resp, err := c.http.Get(url)
	return c.postMethod(ctx, "pins.add", values, &response)
}
'''
    # the Sprintf that built the URL line 6 sends is not a call of its own
    assert found(source, "go") == [
        (4, "path", "POST", "{}/v2/shipments"),
        (6, "path", "GET", "{}/v2/shipments/{}"),
        (7, "path", "POST", "pins.add"),
    ]


def test_java_rest_template_and_http_client_builders() -> None:
    source = '''class Ships {
  Shipment get(String id) {
    HttpRequest req = HttpRequest.newBuilder().uri(URI.create(BASE + "/v2/shipments/" + id)).GET().build();
    return rest.getForObject("/v2/shipments/{id}", Shipment.class, id);
  }
  void book() { restTemplate.postForEntity(base + "/v2/shipments", body, Shipment.class); }
}
'''
    paths = [(line, method, path) for line, style, method, path in found(source, "java") if path]
    assert paths == [
        (3, "GET", "{}/v2/shipments/{}"),
        (4, "GET", "/v2/shipments/{id}"),
        (6, "POST", "{}/v2/shipments"),
    ]


def test_route_strings_give_method_and_path() -> None:
    data = b'client.send("DELETE /v2/shipments/{id}")\n'
    (call,) = calls(parse(data, "python"), data)
    assert (call.style, call.method, call.path) == ("route", "DELETE", "/v2/shipments/{id}")


@pytest.mark.parametrize(("callee", "chain"), [
    ("octokit.rest.issues.create", ["rest", "issues", "create"]),
    ("self._client.files.list", ["_client", "files", "list"]),
    ("create", []),
])  # fmt: skip
def test_member_chain_drops_the_receiver(callee: str, chain: list[str]) -> None:
    assert member_chain(callee) == chain
