// Package worker checks the Parcelroute webhooks (sample code for apiatlas's code report).
package worker

import (
	"fmt"
	"net/http"
)

const base = "https://api.parcelroute.example"

func TestWebhook(client *http.Client, id string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/v2/webhooks/%s/test", base, id), nil)
	if err != nil {
		return nil, err
	}
	return client.Do(req)
}
