"""The warehouse team's Parcelroute client (sample code for apiatlas's code report)."""

import requests

BASE = "https://api.parcelroute.example"


class Parcelroute:
    def __init__(self, token: str) -> None:
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def open_warehouse(self, name: str, city: str) -> dict:
        body = {"name": name, "address": {"city": city}}
        return self.session.post(f"{BASE}/v2/locations", json=body).json()

    def legacy_location(self, location_id: str) -> dict:
        # still on the v1 format: the old dashboard reads its single address line
        return self.session.get(f"{BASE}/v1/locations/{location_id}").json()

    def book(self, quote_id: str) -> dict:
        return self.session.post(f"{BASE}/v2/quotes/{quote_id}/accept").json()

    def cancel(self, shipment_id: str) -> None:
        self.session.post(f"{BASE}/v2/shipments/{shipment_id}/cancel")

    def invoices(self) -> list:
        return self.session.get(f"{BASE}/v2/invoices").json()
