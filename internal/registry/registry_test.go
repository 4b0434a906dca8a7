package registry

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// release writes a release folder as goreleaser leaves one.
func release(t *testing.T, version string, files map[string]string) Release {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return Release{Version: version, Dir: dir, KeyID: "0123456789ABCDEF", KeyArmor: "-----BEGIN PGP PUBLIC KEY BLOCK-----"}
}

func get(t *testing.T, url string, into any) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if into != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("%s: %v\n%s", url, err, body)
		}
	}
	return resp.StatusCode, string(body)
}

func TestRegistry_servesTheProviderRegistryProtocol(t *testing.T) {
	const prefix = "terraform-provider-example_1.2.0_"
	rel := release(t, "1.2.0", map[string]string{
		prefix + "SHA256SUMS":      "aaaa  " + prefix + "linux_amd64.zip\nbbbb  " + prefix + "darwin_arm64.zip\ncccc  " + prefix + "manifest.json\n",
		prefix + "SHA256SUMS.sig":  "signature",
		prefix + "linux_amd64.zip": "zip bytes",
		prefix + "manifest.json":   "{}",
		"signing-key.asc":          "not served",
	})
	reg := New("acme", "example")
	if err := reg.Publish(rel); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	defer srv.Close()
	base := srv.URL + "/v1/providers/acme/example/"

	var versions struct {
		Versions []struct {
			Version   string
			Protocols []string
			Platforms []struct{ OS, Arch string }
		}
	}
	get(t, base+"versions", &versions)
	if len(versions.Versions) != 1 || versions.Versions[0].Version != "1.2.0" ||
		strings.Join(versions.Versions[0].Protocols, ",") != "6.0" || len(versions.Versions[0].Platforms) != 2 {
		t.Errorf("versions = %+v, want 1.2.0 on protocol 6.0 for two platforms", versions)
	}

	var download struct {
		OS, Arch, Filename, Shasum string
		DownloadURL                string `json:"download_url"`
		ShasumsURL                 string `json:"shasums_url"`
		ShasumsSignatureURL        string `json:"shasums_signature_url"`
		SigningKeys                struct {
			GPGPublicKeys []struct {
				KeyID      string `json:"key_id"`
				ASCIIArmor string `json:"ascii_armor"`
			} `json:"gpg_public_keys"`
		} `json:"signing_keys"`
	}
	get(t, base+"1.2.0/download/linux/amd64", &download)
	if download.OS != "linux" || download.Arch != "amd64" || download.Filename != prefix+"linux_amd64.zip" || download.Shasum != "aaaa" ||
		len(download.SigningKeys.GPGPublicKeys) != 1 || download.SigningKeys.GPGPublicKeys[0].KeyID != rel.KeyID {
		t.Errorf("download = %+v", download)
	}
	for url, want := range map[string]string{
		download.DownloadURL:         "zip bytes",
		download.ShasumsSignatureURL: "signature",
	} {
		if code, body := get(t, url, nil); code != http.StatusOK || body != want {
			t.Errorf("GET %s = %d %q, want %q", url, code, body, want)
		}
	}
	if code, body := get(t, download.ShasumsURL, nil); code != http.StatusOK || !strings.HasPrefix(body, "aaaa  ") {
		t.Errorf("GET %s = %d %q, want SHA256SUMS", download.ShasumsURL, code, body)
	}

	for _, path := range []string{
		"/files/1.2.0/signing-key.asc", // in the folder, but not a release file
		"/files/1.2.0/../1.2.0/" + prefix + "manifest.json",
		"/v1/providers/acme/example/1.3.0/download/linux/amd64",   // no such version
		"/v1/providers/acme/example/1.2.0/download/windows/amd64", // no such platform
		"/v1/providers/acme/other/versions",
	} {
		if code, _ := get(t, srv.URL+path, nil); code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, code)
		}
	}
}

func TestRegistry_publishRefusesAReleaseWithNoArchive(t *testing.T) {
	rel := release(t, "1.0.0", map[string]string{"terraform-provider-example_1.0.0_SHA256SUMS": "cccc  terraform-provider-example_1.0.0_manifest.json\n"})
	if err := New("acme", "example").Publish(rel); err == nil || !strings.Contains(err.Error(), "lists no archive") {
		t.Errorf("Publish = %v, want a release with no archive refused", err)
	}
	if err := New("acme", "example").Publish(Release{Version: "1.0.0", Dir: t.TempDir()}); err == nil {
		t.Error("Publish of a folder with no SHA256SUMS succeeded")
	}
}

func TestReadRehearsal_readsTheVersionAndTheKey(t *testing.T) {
	rel := release(t, "0.3.0-rc.1", map[string]string{
		"terraform-provider-example_0.3.0-rc.1_SHA256SUMS": "",
		"signing-key.id":  "0123456789ABCDEF\n",
		"signing-key.asc": "armor",
	})
	got, err := ReadRehearsal(rel.Dir)
	if err != nil || got.Version != "0.3.0-rc.1" || got.KeyID != "0123456789ABCDEF" || got.KeyArmor != "armor" || got.Dir != rel.Dir {
		t.Errorf("ReadRehearsal = %+v, %v", got, err)
	}
	if err := os.Remove(filepath.Join(rel.Dir, "signing-key.asc")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRehearsal(rel.Dir); err == nil {
		t.Error("ReadRehearsal of a folder with no public key succeeded")
	}
	if _, err := ReadRehearsal(t.TempDir()); err == nil || !strings.Contains(err.Error(), "found 0") {
		t.Errorf("ReadRehearsal of an empty folder: %v", err)
	}
}
