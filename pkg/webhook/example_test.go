package webhook_test

import (
	"io"
	"net/http"
	"time"

	"opsnorth.io/scheduler/pkg/webhook"
)

// A receiver checks every delivery before it trusts the body: the README's
// "Verifying deliveries" example.
func ExampleVerify() {
	secret := "whsec_c2l4dGVlbiBieXRlIGtleQ==" // the webhookSecretRef Secret's value, raw or whsec_
	http.HandleFunc("/done", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || webhook.Verify(secret, r.Header, body, time.Now(), webhook.DefaultTolerance) != nil {
			http.Error(w, "invalid signature", http.StatusUnauthorized)
			return
		}
		// Drop duplicates on r.Header.Get(webhook.HeaderWebhookID), then handle body.
		w.WriteHeader(http.StatusNoContent)
	})
}
