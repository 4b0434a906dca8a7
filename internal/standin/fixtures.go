package standin

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

//go:embed fixture.json
var fixture []byte

// Demo tokens. They open nothing but this stand-in; a real token never
// appears in the repository.
const (
	DemoProductionToken  = "bpdemo-production-7c1e4f0a9b2d"
	DemoDevelopmentToken = "bpdemo-development-5a8d3e6f1c4b"
)

// DemoEnvironments returns production and development with the fixture's
// profiles: realistic fields, and awkward keys in development.
func DemoEnvironments() []Environment {
	var byEnv map[string][]json.RawMessage
	if err := json.Unmarshal(fixture, &byEnv); err != nil {
		panic(fmt.Sprintf("standin: fixture.json: %v", err))
	}
	return []Environment{
		{Name: "production", Token: DemoProductionToken, Profiles: byEnv["production"]},
		{Name: "development", Token: DemoDevelopmentToken, Profiles: byEnv["development"]},
	}
}

// Generate returns n profiles of about 210 bytes each, keyed bp_gen_0000000…,
// for the scale benchmarks.
func Generate(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(
			`{"profile_key":"bp_gen_%07d","name":"Generated profile %d","status":"active","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-11-01T12:00:00Z","browser":{"engine":"chromium","version":"132.0"},"tags":["generated","n%d"]}`,
			i, i, i%100))
	}
	return out
}
