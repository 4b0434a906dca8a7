// Command benchfloor is the reference of the scale benchmark (make bench):
// the least work any client must do to read the profile list, one GET of
// the body and json.Unmarshal into []map[string]any. It prints the body's
// size in bytes. The token comes from BROWSERPROFILE_API_TOKEN.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: benchfloor LIST_URL")
	}
	req, err := http.NewRequest(http.MethodGet, os.Args[1], nil)
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv("BROWSERPROFILE_API_TOKEN"))
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	var profiles []map[string]any
	if err := json.Unmarshal(body, &profiles); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(body), len(profiles))
}
