// Command benchdoc writes BENCHMARKS.md from the recordings make
// bench-record keeps in benchmarks/ (internal/benchdoc says how): make
// benchmarks runs it. It fails, writing nothing, when an area's recording
// is missing or older than a change to what it measures.
//
// With -against REV it prints instead every figure of the recordings that
// differs from REV's: what a change moved, or what a month did.
//
//	go run ./cmd/benchdoc [-write | -against REV]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/benchdoc"
)

func main() {
	write := flag.Bool("write", false, "write BENCHMARKS.md rather than print it")
	against := flag.String("against", "", "print what differs from the recordings at this revision")
	flag.Parse()
	if *against != "" {
		diff, err := benchdoc.Compare(".", *against)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchdoc:", err)
			os.Exit(1)
		}
		fmt.Print(diff)
		return
	}
	doc, _, err := benchdoc.Document(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchdoc:", err)
		os.Exit(1)
	}
	if !*write {
		fmt.Print(doc)
		return
	}
	if err := os.WriteFile("BENCHMARKS.md", []byte(doc), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "benchdoc:", err)
		os.Exit(1)
	}
}
