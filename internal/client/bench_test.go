package client

import (
	"bytes"
	"fmt"
	"net/url"
	"testing"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// Regression guards for the decoding the scale target depends on; make bench
// runs them. ns/profile is the figure to compare across runs.
func BenchmarkDecodeListPage(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		body := append([]byte("["), bytes.Join(toBytes(standin.Generate(n)), []byte(","))...)
		body = append(body, ']')
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for range b.N {
				page, err := decodeListPage(body)
				if err != nil || len(page.profiles) != n {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/profile")
		})
	}
}

func BenchmarkProfileURL(b *testing.B) {
	base, _ := url.Parse("https://api.example.com/api/v1")
	keys := []string{"bp_prod_01HZX3K9Q2", "team/alpha", "q?x=1#frag", "café-東京 100%"}
	b.ReportAllocs()
	for i := range b.N {
		key := keys[i%len(keys)]
		if CheckProfileKey(key) != nil || profileURL(base, key).String() == "" {
			b.Fatal(key)
		}
	}
}

func toBytes[T ~[]byte](in []T) [][]byte {
	out := make([][]byte, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}
