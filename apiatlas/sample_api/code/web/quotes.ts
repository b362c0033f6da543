// The storefront asks Parcelroute for prices (sample code for apiatlas's code report).
const API = "https://api.parcelroute.example";

export async function quote(origin: string, destination: string, weightKg: number) {
  const res = await fetch(`${API}/v2/quotes`, {
    method: "POST",
    body: JSON.stringify({ origin, destination, weight_kg: weightKg }),
  });
  return res.json();
}

export async function track(shipmentId: string) {
  const res = await fetch(`${API}/v2/shipments/${shipmentId}/tracking-events`);
  return res.json();
}
