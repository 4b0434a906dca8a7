package loopback

import "testing"

func TestIs_namesThisMachineOnly(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.8.9.10": true, "::1": true,
		"": false, "localhost.example.com": false, "10.0.0.1": false, "0.0.0.0": false, "::": false, "example.com": false,
	} {
		if got := Is(host); got != want {
			t.Errorf("Is(%q) = %v, want %v", host, got, want)
		}
	}
}
